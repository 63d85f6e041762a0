import RawbleHost
import RawbleHostCore
import RawbleWire

extension DiscoveredDevice {
    /// The `scan` device line of cli.md: address, type, RSSI, connectable and every AD field
    /// (advertisement and scan response merged).
    var json: JSON {
        var fields: [(String, JSON)] = [
            ("address", .string(address.address.description)),
            ("addressType", .string(address.type.description)),
            ("rssi", rssi.map { JSON($0) } ?? .null),
            ("connectable", .bool(isConnectable)),
        ]
        fields += advertisingData.deviceFields
        if let txPower, let index = fields.firstIndex(where: { $0.0 == "txPower" }) {
            fields[index].1 = JSON(txPower)
        }
        if let dataError { fields.append(("error", .string(dataError.description))) }
        return .object(fields)
    }
}

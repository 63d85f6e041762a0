import RawbleWire

/// Which advertisers a scan reports. Each non-empty criterion must hold (services AND name AND
/// address); within one, any entry matches. An empty filter matches every device.
public struct ScanFilter: Hashable, Sendable {
    /// Any of these UUIDs in an advertised service UUID list or as a Service Data UUID.
    public var services: [BluetoothUUID]
    /// Case-insensitive substring of the complete or shortened local name; `nil` or empty: any.
    public var nameSubstring: String?
    /// Any of these addresses, whatever the address type.
    public var addresses: [BluetoothAddress]

    public init(services: [BluetoothUUID] = [], nameSubstring: String? = nil, addresses: [BluetoothAddress] = []) {
        self.services = services
        self.nameSubstring = nameSubstring
        self.addresses = addresses
    }

    /// Whether the filter lets every device through.
    public var matchesAll: Bool { services.isEmpty && (nameSubstring ?? "").isEmpty && addresses.isEmpty }

    /// Whether `device`, merged advertisement and scan response, passes the filter.
    public func matches(_ device: DiscoveredDevice) -> Bool {
        if !addresses.isEmpty, !addresses.contains(device.address.address) { return false }
        if !services.isEmpty {
            let data = device.advertisingData
            let advertised = data.serviceUUIDs.contains(where: services.contains)
                || data.serviceData.contains { services.contains($0.uuid) }
            if !advertised { return false }
        }
        if let substring = nameSubstring, !substring.isEmpty {
            let wanted = substring.lowercased()
            var found = false
            for structure in device.advertisingData {
                if case .localName(let name) = structure, name.string.lowercased().contains(wanted) {
                    found = true
                    break
                }
            }
            if !found { return false }
        }
        return true
    }
}

// Fuzz target: HCI event packets (without the H4 type byte), LE Meta subevents included.
// Compiled with the wire sources by Scripts/fuzz.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHCIEvent(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // Decode from a slice that does not start at index 0, as after an H4 type byte.
    if let event = try? HCIEvent.decode(bytes.dropFirst()) {
        let encoded = event.encoded
        // Every field is kept as received, so a decoded event re-encodes to its exact bytes.
        precondition(encoded[...] == bytes.dropFirst(), "re-encoding differs")
        precondition((try? HCIEvent.decode(encoded)) == event, "round trip differs")
        _ = event.name
        _ = event.description
        if case .le(let le) = event {
            precondition((try? LEMetaEvent.decode(le.encoded)) == le, "LE round trip differs")
            switch le {
            case .advertisingReport(let reports), .extendedAdvertisingReport(let reports):
                for report in reports {
                    _ = (report.isConnectable, report.isScanResponse, report.rssi, report.dataStatus,
                         report.legacyEventType, report.eventType, report.txPower, report.deviceAddress)
                }
            default:
                break
            }
        }
    }
    return 0
}

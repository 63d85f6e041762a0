// Fuzz target: the LE signaling and SMP responders and the scan aggregator. The input is a
// sequence of chunks `kind, length, bytes…`: kind % 3 picks the LE signaling channel, the SMP
// channel, or an HCI event (code, length, parameters) whose advertising reports go to the
// scan aggregator. Invariants: nothing traps, answers carry the request's identifier and fit
// the signaling MTU, and the device table never exceeds its bound.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHostL2CAPScan(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var signaling = LESignalingResponder()
    var security = SecurityManagerResponder()
    var scan = ScanAggregator(filter: ScanFilter(nameSubstring: "a"), maximumDevices: 4)
    var everything = ScanAggregator(reportsDuplicates: true, maximumDevices: 2)
    var i = 0
    while i + 2 <= bytes.count {
        let kind = bytes[i] % 3
        let length = Int(bytes[i + 1])
        let chunk = bytes[(i + 2)..<min(bytes.count, i + 2 + length)]
        i += 2 + length
        switch kind {
        case 0:
            let actions = signaling.receive(chunk)
            precondition(actions.count == 1 || actions.count == 2)
            for action in actions {
                guard case .send(let command) = action else { continue }
                precondition(command.identifier != 0 && command.identifier == LESignalingHeader(peeking: chunk)?.identifier)
                precondition(command.encoded.count <= signaling.signalingMTU)
                precondition((try? LESignalingCommand.decode(command.encoded[...])) == command)
            }
        case 1:
            let before = security.refusedPairingCount
            let actions = security.receive(chunk)
            precondition(actions.count == 1)
            if case .send = actions[0] { precondition(security.refusedPairingCount == before + 1) }
        default:
            guard case .le(let meta)? = try? HCIEvent.decode(chunk) else { continue }
            let reports: [AdvertisingReport]
            switch meta {
            case .advertisingReport(let r), .extendedAdvertisingReport(let r): reports = r
            default: continue
            }
            for report in reports {
                if let device = scan.receive(report) {
                    precondition(scan.filter.matches(device) && device.address == report.deviceAddress)
                    _ = (device.name, device.serviceUUIDs, device.serviceData, device.txPower, device.appearance)
                }
                _ = everything.receive(report)
                precondition(scan.deviceCount <= 4 && everything.deviceCount <= 2)
                precondition(scan.pendingAdvertisementCount <= ScanAggregator.maximumPendingAdvertisements)
            }
        }
    }
    return 0
}

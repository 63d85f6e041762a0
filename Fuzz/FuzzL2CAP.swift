// Fuzz target: L2CAP basic frames, then the payload by channel (LE signaling, SMP, ATT).
// Compiled with the wire sources by Scripts/fuzz.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzL2CAP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let header = L2CAPHeader(peeking: bytes)
    precondition((header == nil) == (bytes.count < 4))
    if let frame = try? L2CAPFrame.decode(bytes) {
        precondition(frame.encoded == bytes, "L2CAP frame round trip")
        precondition(header?.frameLength == bytes.count)
        fuzzL2CAPPayload(frame.channelID, frame.payload)
    }
    // Also reach the channel decoders without a matching length field: the first byte picks
    // the channel, the rest is the payload.
    if let selector = bytes.first {
        let channels: [L2CAPChannelID] = [.leSignaling, .securityManager, .att]
        fuzzL2CAPPayload(channels[Int(selector % 3)], bytes.dropFirst())
    }
    return 0
}

private func fuzzL2CAPPayload(_ channel: L2CAPChannelID, _ payload: ArraySlice<UInt8>) {
    switch channel {
    case .leSignaling:
        _ = LESignalingHeader(peeking: payload)
        if let command = try? LESignalingCommand.decode(payload) {
            precondition(command.encoded.elementsEqual(payload), "signaling round trip: \(command)")
            _ = command.code.description
            if case .connectionParameterUpdateRequest(let p) = command.payload { _ = p.isValid }
            if case .commandReject(let reason) = command.payload { _ = reason.description }
        }
    case .securityManager:
        if let command = try? SMPCommand.decode(payload) {
            precondition(command.encoded.elementsEqual(payload), "SMP round trip: \(command)")
            _ = command.code.description
        }
    case .att:
        if let pdu = try? ATTPDU.decode(payload) {
            precondition((try? ATTPDU.decode(pdu.encoded)) == pdu, "ATT round trip: \(pdu)")
        }
    default:
        break
    }
}

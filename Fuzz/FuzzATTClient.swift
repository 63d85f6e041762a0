// Fuzz target: the ATT client's input side (ATTInbound.classify), fed a stream of PDUs from a
// hostile peer while a request is outstanding. Input: one byte choosing the outstanding
// request, then PDUs, each a length byte and that many bytes. Checks what each verdict
// promises: responses answer the outstanding request, updates are slices of the PDU, answers
// to peer requests are well formed. Compiled with the wire sources and
// Sources/RawbleGATT/ATT/ATTInbound.swift by Scripts/fuzz.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzATTClient(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = input.first else { return 0 }
    let requests: [ATTOpcode] = [
        .exchangeMTURequest, .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest,
        .readRequest, .readBlobRequest, .readMultipleRequest, .readByGroupTypeRequest, .writeRequest,
        .prepareWriteRequest, .executeWriteRequest, .readMultipleVariableRequest,
    ]
    // Selector values past the list mean "nothing outstanding".
    var outstanding: ATTOpcode? = Int(selector) < requests.count ? requests[Int(selector)] : nil
    var index = 1
    while index < input.count {
        let length = Int(input[index])
        let end = min(input.count, index + 1 + length)
        let pdu = Array(input[(index + 1)..<end])
        index = end
        switch ATTInbound.classify(pdu, outstanding: outstanding, receiveMTU: 517) {
        case .response(let response):
            guard let request = outstanding else { preconditionFailure("response with nothing outstanding") }
            if case .errorResponse(let failed, _, _) = response {
                precondition(failed == request, "Error Response for \(failed) matched \(request)")
            } else {
                precondition(response.opcode == request.responseOpcode, "\(response.opcode) matched \(request)")
            }
            // The transaction is over; the next request is the next one in the list.
            outstanding = requests[(Int(request.rawValue) &+ Int(pdu.count)) % requests.count]
        case .malformedResponse:
            precondition(outstanding?.responseOpcode?.rawValue == pdu.first, "malformed response for another opcode")
            outstanding = nil
        case let .update(handle, value, isIndication):
            precondition(pdu.count >= 3 && value.count == pdu.count - 3)
            precondition(handle == UInt16(pdu[1]) | UInt16(pdu[2]) << 8)
            precondition(pdu[0] == (isIndication ? 0x1D : 0x1B))
            precondition(value.elementsEqual(pdu[3...]))
        case .multipleUpdates(let tuples):
            precondition(pdu.first == 0x23)
            precondition(1 + tuples.reduce(0) { $0 + 4 + $1.value.count } == pdu.count)
        case let .answerPeerMTURequest(_, answer):
            precondition(pdu.first == 0x02 && answer == .exchangeMTUResponse(serverMTU: 517))
        case .answerPeerRequest(let answer):
            guard let first = pdu.first else { preconditionFailure("answered an empty PDU") }
            precondition(ATTOpcode(first).kind == .request || ATTOpcode(first).kind == .unknown)
            precondition(answer == .errorResponse(requestOpcode: ATTOpcode(first), handle: 0, errorCode: .requestNotSupported))
            precondition(answer.encoded.count == 5)
        case .dropped(let reason):
            _ = reason.description
        }
    }
    return 0
}

import RawbleHostCore
import RawbleTestSupport
import RawbleWire
import Testing

private func sent(_ actions: [SecurityManagerAction]) -> [[UInt8]] {
    actions.compactMap { if case .send(let command) = $0 { command.encoded } else { nil } }
}

private func isIgnored(_ actions: [SecurityManagerAction]) -> Bool {
    guard actions.count == 1, case .ignored = actions[0] else { return false }
    return true
}

@Suite("Security Manager responder")
struct SecurityManagerResponderTests {
    @Test func pairingRequestIsRefusedWithPairingNotSupported() {
        var responder = SecurityManagerResponder()
        // NoInputNoOutput, no OOB, bonding + SC, key size 16, keys 07/07.
        let actions = responder.receive([0x01, 0x03, 0x00, 0x09, 0x10, 0x07, 0x07])
        #expect(actions == [.send(.pairingFailed(.pairingNotSupported))])
        #expect(sent(actions) == [[0x05, 0x05]])
        #expect(responder.refusedPairingCount == 1)
    }

    @Test func securityRequestIsRefusedWithPairingNotSupported() {
        var responder = SecurityManagerResponder()
        #expect(sent(responder.receive([0x0B, 0x0D])) == [[0x05, 0x05]])
        #expect(sent(responder.receive([0x0B, 0x01])) == [[0x05, 0x05]])
        #expect(responder.refusedPairingCount == 2)
    }

    @Test func peersPairingFailedIsIgnored() {
        var responder = SecurityManagerResponder()
        #expect(isIgnored(responder.receive([0x05, 0x08])))
        #expect(responder.refusedPairingCount == 0)
    }

    @Test func commandsOutsideAPairingAreIgnored() {
        var responder = SecurityManagerResponder()
        #expect(isIgnored(responder.receive([0x02, 0x03, 0x00, 0x01, 0x10, 0x00, 0x00])))  // Pairing Response
        #expect(isIgnored(responder.receive(([0x03] + [UInt8](repeating: 0x11, count: 16))[...])))  // Confirm
        #expect(isIgnored(responder.receive([0x0E, 0x00])))  // Keypress Notification
        #expect(isIgnored(responder.receive([0xF0, 0x01, 0x02])))  // unassigned code
        #expect(responder.refusedPairingCount == 0)
    }

    @Test func malformedPairingAndSecurityRequestsAreIgnored() {
        var responder = SecurityManagerResponder()
        #expect(isIgnored(responder.receive([])))
        #expect(isIgnored(responder.receive([0x01, 0x03, 0x00, 0x09, 0x10, 0x07])))  // one byte short
        #expect(isIgnored(responder.receive([0x01, 0x03, 0x00, 0x09, 0x10, 0x07, 0x07, 0x00])))  // one too many
        #expect(isIgnored(responder.receive([0x0B])))
        #expect(isIgnored(responder.receive([0x0B, 0x01, 0x00])))
        #expect(responder.refusedPairingCount == 0)
    }

    @Test func randomPayloadsNeverTrapAndRefuseOnlyWellFormedRequests() {
        var rng = SplitMix64(state: 0x534D_5000)
        var responder = SecurityManagerResponder()
        var refusals = 0
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...20, using: &rng)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if count > 0, Bool.random(using: &rng) { bytes[0] = [0x01, 0x05, 0x0B].randomElement(using: &rng) ?? 1 }
            let actions = responder.receive(bytes[...])
            #expect(actions.count == 1)
            let wellFormedRequest = (bytes.first == 0x01 && count == 7) || (bytes.first == 0x0B && count == 2)
            if wellFormedRequest {
                refusals += 1
                #expect(sent(actions) == [[0x05, 0x05]])
            } else {
                #expect(sent(actions).isEmpty)
            }
        }
        #expect(responder.refusedPairingCount == refusals)
        #expect(refusals > 0)
    }
}

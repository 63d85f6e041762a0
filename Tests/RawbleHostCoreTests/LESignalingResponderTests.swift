import RawbleHostCore
import RawbleTestSupport
import RawbleWire
import Testing

/// The bytes of every command the responder sends, in order.
private func sent(_ actions: [LESignalingAction]) -> [[UInt8]] {
    actions.compactMap { if case .send(let command) = $0 { command.encoded } else { nil } }
}

private func isIgnored(_ actions: [LESignalingAction]) -> Bool {
    guard actions.count == 1, case .ignored = actions[0] else { return false }
    return true
}

@Suite("LE signaling responder")
struct LESignalingResponderTests {
    @Test func validConnectionParameterUpdateIsAcceptedThenApplied() {
        var responder = LESignalingResponder()
        // Request id 1: interval 6...12 (7.5-15 ms), latency 0, timeout 200 (2 s).
        let actions = responder.receive([0x12, 0x01, 0x08, 0x00, 0x06, 0x00, 0x0C, 0x00, 0x00, 0x00, 0xC8, 0x00])
        #expect(actions.count == 2)
        #expect(sent(actions) == [[0x13, 0x01, 0x02, 0x00, 0x00, 0x00]])
        #expect(actions.last == .updateConnectionParameters(.init(
            minimumInterval: 6, maximumInterval: 12, peripheralLatency: 0, timeoutMultiplier: 200)))
        #expect(responder.acceptedParameterUpdateCount == 1)
    }

    @Test func connectionParameterUpdateWithMinimumAboveMaximumIsRejectedWithoutUpdate() {
        var responder = LESignalingResponder()
        let actions = responder.receive([0x12, 0x07, 0x08, 0x00, 0x0C, 0x00, 0x06, 0x00, 0x00, 0x00, 0xC8, 0x00])
        #expect(actions == [.send(LESignalingCommand(identifier: 7, .connectionParameterUpdateResponse(.rejected)))])
        #expect(sent(actions) == [[0x13, 0x07, 0x02, 0x00, 0x01, 0x00]])
        #expect(responder.acceptedParameterUpdateCount == 0)
    }

    @Test func connectionParameterUpdateWithTimeoutShorterThanTwoIntervalsIsRejected() {
        var responder = LESignalingResponder()
        // Interval 3200 (4 s), timeout 10 (100 ms).
        let actions = responder.receive([0x12, 0x02, 0x08, 0x00, 0x80, 0x0C, 0x80, 0x0C, 0x00, 0x00, 0x0A, 0x00])
        #expect(sent(actions) == [[0x13, 0x02, 0x02, 0x00, 0x01, 0x00]])
        #expect(actions.count == 1)
    }

    @Test func unknownCommandCodeGetsCommandNotUnderstoodWithItsIdentifier() {
        var responder = LESignalingResponder()
        // Echo Request (BR/EDR only) and an unassigned code.
        #expect(sent(responder.receive([0x08, 0x05, 0x00, 0x00])) == [[0x01, 0x05, 0x02, 0x00, 0x00, 0x00]])
        #expect(sent(responder.receive([0x7F, 0xA0, 0x02, 0x00, 0x01, 0x02])) == [[0x01, 0xA0, 0x02, 0x00, 0x00, 0x00]])
    }

    @Test func leCreditBasedConnectionRequestIsRefusedWithSPSMNotSupported() {
        var responder = LESignalingResponder()
        let request: [UInt8] = [0x14, 0x07, 0x0A, 0x00, 0x80, 0x00, 0x40, 0x00, 0x17, 0x00, 0x17, 0x00, 0x0A, 0x00]
        #expect(sent(responder.receive(request[...])) ==
                [[0x15, 0x07, 0x0A, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00]])
    }

    @Test func enhancedCreditBasedConnectionRequestIsRefusedForEveryChannel() {
        var responder = LESignalingResponder()
        let request: [UInt8] = [0x17, 0x09, 0x0C, 0x00, 0x80, 0x00, 0x40, 0x00, 0x40, 0x00, 0x05, 0x00,
                                0x40, 0x00, 0x41, 0x00]
        #expect(sent(responder.receive(request[...])) ==
                [[0x18, 0x09, 0x0C, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00]])
    }

    @Test func reconfigureRequestIsAnsweredWithInvalidDestinationCID() {
        var responder = LESignalingResponder()
        #expect(sent(responder.receive([0x19, 0x04, 0x06, 0x00, 0x40, 0x00, 0x40, 0x00, 0x41, 0x00])) ==
                [[0x1A, 0x04, 0x02, 0x00, 0x03, 0x00]])
    }

    @Test func disconnectionRequestGetsInvalidCIDRejectWithLocalThenRemoteCID() {
        var responder = LESignalingResponder()
        // Destination (ours) 0x0040, source (theirs) 0x0041.
        let actions = responder.receive([0x06, 0x03, 0x04, 0x00, 0x40, 0x00, 0x41, 0x00])
        #expect(sent(actions) == [[0x01, 0x03, 0x06, 0x00, 0x02, 0x00, 0x40, 0x00, 0x41, 0x00]])
    }

    @Test func creditIndicationForAChannelThatIsNotOpenIsIgnored() {
        var responder = LESignalingResponder()
        #expect(isIgnored(responder.receive([0x16, 0x02, 0x04, 0x00, 0x40, 0x00, 0x05, 0x00])))
    }

    @Test func unsolicitedResponsesAndRejectsAreNeverAnswered() {
        var responder = LESignalingResponder()
        let answers: [[UInt8]] = [
            [0x01, 0x04, 0x02, 0x00, 0x00, 0x00],                               // Command Reject
            [0x01, 0x04, 0x04, 0x00, 0x01, 0x00, 0x17, 0x00],                   // Reject, MTU exceeded
            [0x07, 0x04, 0x04, 0x00, 0x40, 0x00, 0x41, 0x00],                   // Disconnection Response
            [0x13, 0x04, 0x02, 0x00, 0x00, 0x00],                               // Parameter Update Response
            [0x15, 0x04, 0x0A, 0x00, 0x40, 0x00, 0x17, 0x00, 0x17, 0x00, 0x01, 0x00, 0x00, 0x00],
            [0x18, 0x04, 0x08, 0x00, 0x17, 0x00, 0x17, 0x00, 0x01, 0x00, 0x00, 0x00],
            [0x1A, 0x04, 0x02, 0x00, 0x00, 0x00],
        ]
        for bytes in answers {
            #expect(isIgnored(responder.receive(bytes[...])), "\(bytes)")
        }
    }

    @Test func malformedResponsesAreIgnoredNotRejected() {
        var responder = LESignalingResponder()
        #expect(isIgnored(responder.receive([0x13, 0x04, 0x01, 0x00, 0x00])))
        #expect(isIgnored(responder.receive([0x01, 0x04, 0x01, 0x00, 0x00])))
        #expect(isIgnored(responder.receive([0x16, 0x04, 0x09, 0x00, 0x40])))
    }

    @Test func identifierZeroIsIgnoredEvenForAValidRequest() {
        var responder = LESignalingResponder()
        #expect(isIgnored(responder.receive([0x12, 0x00, 0x08, 0x00, 0x06, 0x00, 0x0C, 0x00, 0x00, 0x00, 0xC8, 0x00])))
        #expect(isIgnored(responder.receive([0x08, 0x00, 0x00, 0x00])))
        #expect(responder.acceptedParameterUpdateCount == 0)
    }

    @Test func truncatedKnownRequestGetsCommandNotUnderstood() {
        var responder = LESignalingResponder()
        // Length 6 consistent with the bytes, but a parameter update needs 8.
        #expect(sent(responder.receive([0x12, 0x01, 0x06, 0x00, 0x06, 0x00, 0x0C, 0x00, 0x00, 0x00])) ==
                [[0x01, 0x01, 0x02, 0x00, 0x00, 0x00]])
        // Length field 8, only 2 data bytes present.
        #expect(sent(responder.receive([0x12, 0x02, 0x08, 0x00, 0x06, 0x00])) == [[0x01, 0x02, 0x02, 0x00, 0x00, 0x00]])
        // Enhanced request with an odd CID list.
        #expect(sent(responder.receive([0x17, 0x03, 0x09, 0x00, 0x80, 0x00, 0x40, 0x00, 0x40, 0x00, 0x05, 0x00, 0x40])) ==
                [[0x01, 0x03, 0x02, 0x00, 0x00, 0x00]])
        #expect(responder.acceptedParameterUpdateCount == 0)
    }

    @Test func secondCommandInTheSameFrameMakesItMalformed() {
        var responder = LESignalingResponder()
        // A valid parameter update followed by an Echo Request: LE allows one command per C-frame.
        let frame: [UInt8] = [0x12, 0x01, 0x08, 0x00, 0x06, 0x00, 0x0C, 0x00, 0x00, 0x00, 0xC8, 0x00,
                              0x08, 0x02, 0x00, 0x00]
        let actions = responder.receive(frame[...])
        #expect(sent(actions) == [[0x01, 0x01, 0x02, 0x00, 0x00, 0x00]])
        #expect(!actions.contains { if case .updateConnectionParameters = $0 { true } else { false } })
    }

    @Test func frameAboveSignalingMTUGetsMTUExceededWithTheMTU() {
        var responder = LESignalingResponder()
        // Enhanced request with six source CIDs: 4 + 8 + 12 = 24 bytes > 23.
        var request: [UInt8] = [0x17, 0x0B, 0x14, 0x00, 0x80, 0x00, 0x40, 0x00, 0x40, 0x00, 0x05, 0x00]
        for cid in UInt8(0x40)...0x45 { request += [cid, 0x00] }
        #expect(request.count == 24)
        #expect(sent(responder.receive(request[...])) == [[0x01, 0x0B, 0x04, 0x00, 0x01, 0x00, 0x17, 0x00]])

        var larger = LESignalingResponder(signalingMTU: 64)
        let actions = larger.receive(request[...])
        #expect(actions.count == 1)
        guard case .send(let response) = actions.first,
              case .creditBasedConnectionResponse(_, _, _, let result, let cids) = response.payload else {
            Issue.record("expected a Credit Based Connection Response, got \(actions)")
            return
        }
        #expect(result == .spsmNotSupported)
        #expect(cids == Array(repeating: .null, count: 6))
    }

    @Test func frameAboveConfiguredMTUCarriesThatMTU() {
        var responder = LESignalingResponder(signalingMTU: 30)
        let request = [0x08, 0x09, 0x1C, 0x00] + [UInt8](repeating: 0xAA, count: 28)
        #expect(sent(responder.receive(request[...])) == [[0x01, 0x09, 0x04, 0x00, 0x01, 0x00, 0x1E, 0x00]])
    }

    @Test func signalingMTUBelowTheLEMinimumIsRaisedTo23() {
        #expect(LESignalingResponder(signalingMTU: 5).signalingMTU == 23)
        #expect(LESignalingResponder(signalingMTU: 1_000_000).signalingMTU == 65535)
    }

    @Test func framesShorterThanAHeaderAreIgnored() {
        var responder = LESignalingResponder()
        #expect(isIgnored(responder.receive([])))
        #expect(isIgnored(responder.receive([0x12, 0x01, 0x08])))
    }

    @Test func randomPayloadsNeverTrapAndAnswerOnlyRequestsWithTheirIdentifier() {
        var rng = SplitMix64(state: 0x5167_4E41_4C00)
        let answerCodes: Set<UInt8> = [0x01, 0x07, 0x13, 0x15, 0x16, 0x18, 0x1A]
        for mtu in [23, 64] {
            var responder = LESignalingResponder(signalingMTU: mtu)
            for _ in 0..<20_000 {
                let count = Int.random(in: 0...40, using: &rng)
                var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
                // Bias towards the codes the responder types, with a consistent length half the time.
                if count >= 4 {
                    if Bool.random(using: &rng) { bytes[0] = UInt8.random(in: 0x01...0x1B, using: &rng) }
                    if Bool.random(using: &rng) { bytes[2] = UInt8(count - 4); bytes[3] = 0 }
                }
                let actions = responder.receive(bytes[...])
                #expect(actions.count == 1 || actions.count == 2)
                let header = LESignalingHeader(peeking: bytes)
                for command in actions.compactMap({ if case .send(let c) = $0 { c } else { nil } }) {
                    #expect(header != nil && header?.identifier != 0 && !answerCodes.contains(bytes[0]))
                    #expect(command.identifier == header?.identifier)
                    #expect(command.encoded.count <= mtu)
                    #expect((try? LESignalingCommand.decode(command.encoded[...])) == command)
                }
                if actions.count == 2 {
                    #expect(bytes.first == 0x12)
                }
            }
        }
    }
}

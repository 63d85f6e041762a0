import RawbleHostCore
import RawbleTestSupport
import RawbleWire
import Testing

private func packet(_ handle: UInt16, _ boundary: ACLHeader.PacketBoundary, _ bytes: [UInt8]) -> ACLPacket {
    ACLPacket(handle: handle, packetBoundary: boundary, payload: bytes[...])
}

/// A packet on handle 0x040.
private func packet(_ boundary: ACLHeader.PacketBoundary, _ bytes: [UInt8]) -> ACLPacket {
    packet(0x40, boundary, bytes)
}

/// An L2CAP frame's bytes: length, CID, payload.
private func l2cap(cid: UInt16 = 4, _ payload: [UInt8]) -> [UInt8] {
    L2CAPFrame(channelID: L2CAPChannelID(cid), payload: payload).encoded
}

@Suite("ACL reassembly")
struct ACLReassemblerTests {
    @Test func wholeFrameInOneControllerPacket() {
        var r = ACLReassembler()
        // ATT Exchange MTU Response on CID 4: 03 00 04 00 03 F7 00.
        let out = r.receive(packet(.firstFlushable, [0x03, 0x00, 0x04, 0x00, 0x03, 0xF7, 0x00]))
        #expect(out.errors.isEmpty)
        #expect(out.frame == L2CAPFrame(channelID: .att, payload: [0x03, 0xF7, 0x00]))
        #expect(!r.hasPartialFrame(on: 0x40))
    }

    @Test func emptyPayloadFrameIsDelivered() {
        var r = ACLReassembler()
        let out = r.receive(packet(.firstNonFlushable, [0x00, 0x00, 0x05, 0x00]))
        #expect(out == ACLReassembler.Output(frame: L2CAPFrame(channelID: .leSignaling, payload: [])))
    }

    @Test func frameSplitOverThreeFragments() {
        var r = ACLReassembler()
        let frame = l2cap(aclTestBytes(60))   // 64 bytes
        #expect(r.receive(packet(.firstFlushable, Array(frame[0..<27]))) == ACLReassembler.Output())
        #expect(r.hasPartialFrame(on: 0x40))
        #expect(r.receive(packet(.continuation, Array(frame[27..<54]))) == ACLReassembler.Output())
        let out = r.receive(packet(.continuation, Array(frame[54...])))
        #expect(out.errors.isEmpty)
        #expect(out.frame == L2CAPFrame(channelID: .att, payload: aclTestBytes(60)))
        #expect(!r.hasPartialFrame(on: 0x40))
    }

    @Test func headerSplitTwoPlusTwoBytes() {
        var r = ACLReassembler()
        let frame = l2cap(cid: 6, [0x0B, 0x01])   // 02 00 06 00 0B 01
        #expect(r.receive(packet(.firstFlushable, [0x02, 0x00])) == ACLReassembler.Output())
        #expect(r.receive(packet(.continuation, [0x06, 0x00])) == ACLReassembler.Output())
        let out = r.receive(packet(.continuation, Array(frame[4...])))
        #expect(out == ACLReassembler.Output(frame: L2CAPFrame(channelID: .securityManager, payload: [0x0B, 0x01])))
    }

    @Test func headerSplitOneByteAtATimeWithPayloadInLastHeaderFragment() {
        var r = ACLReassembler()
        #expect(r.receive(packet(.firstFlushable, [0x03])).frame == nil)
        #expect(r.receive(packet(.continuation, [0x00])).frame == nil)
        #expect(r.receive(packet(.continuation, [0x04])).frame == nil)
        #expect(r.receive(packet(.continuation, [0x00, 0x0A, 0x01])).frame == nil)
        let out = r.receive(packet(.continuation, [0x00]))
        #expect(out == ACLReassembler.Output(frame: L2CAPFrame(channelID: .att, payload: [0x0A, 0x01, 0x00])))
    }

    @Test func emptyFirstFragmentThenHeader() {
        var r = ACLReassembler()
        #expect(r.receive(packet(.firstFlushable, [])) == ACLReassembler.Output())
        let out = r.receive(packet(.continuation, [0x01, 0x00, 0x04, 0x00, 0x1E]))
        #expect(out.frame == L2CAPFrame(channelID: .att, payload: [0x1E]))
    }

    @Test func connectionsReassembleIndependently() {
        var r = ACLReassembler()
        let a = l2cap(aclTestBytes(30, seed: 1)), b = l2cap(cid: 5, aclTestBytes(30, seed: 2))
        #expect(r.receive(packet(1, .firstFlushable, Array(a[0..<27]))).frame == nil)
        #expect(r.receive(packet(2, .firstFlushable, Array(b[0..<27]))).frame == nil)
        #expect(r.receive(packet(2, .continuation, Array(b[27...]))).frame == L2CAPFrame(channelID: .leSignaling, payload: aclTestBytes(30, seed: 2)))
        #expect(r.receive(packet(1, .continuation, Array(a[27...]))).frame == L2CAPFrame(channelID: .att, payload: aclTestBytes(30, seed: 1)))
    }

    @Test func bumbleWholePDULargerThanACLLengthIsAccepted() {
        // Bumble announces 27-byte buffers but sends a 305-byte PDU in one packet.
        var r = ACLReassembler()
        let out = r.receive(packet(.firstFlushable, l2cap(aclTestBytes(301))))
        #expect(out.errors.isEmpty)
        #expect(out.frame == L2CAPFrame(channelID: .att, payload: aclTestBytes(301)))
    }

    @Test func continuationWithoutStartIsReportedAndDropped() {
        var r = ACLReassembler()
        let out = r.receive(packet(.continuation, [1, 2, 3]))
        #expect(out == ACLReassembler.Output(errors: [.continuationWithoutStart(handle: 0x40, length: 3)]))
        #expect(!r.hasPartialFrame(on: 0x40))
        // The next proper frame is unaffected.
        #expect(r.receive(packet(.firstFlushable, l2cap([9]))).frame == L2CAPFrame(channelID: .att, payload: [9]))
    }

    @Test func newStartWhilePendingReportsDroppedPartialAndDeliversNewFrame() {
        var r = ACLReassembler()
        let long = l2cap(aclTestBytes(40))
        _ = r.receive(packet(.firstFlushable, Array(long[0..<27])))
        let out = r.receive(packet(.firstFlushable, l2cap([0x01, 0x02])))
        #expect(out.errors == [.partialFrameDropped(handle: 0x40, received: 27, expected: 44)])
        #expect(out.frame == L2CAPFrame(channelID: .att, payload: [0x01, 0x02]))
        // The old frame's tail is now a continuation without a start.
        #expect(r.receive(packet(.continuation, Array(long[27...]))).errors
                == [.continuationWithoutStart(handle: 0x40, length: 17)])
    }

    @Test func newStartWhilePendingStartsTheNewPartialFrame() {
        var r = ACLReassembler()
        _ = r.receive(packet(.firstFlushable, [0x10]))   // header incomplete
        let frame = l2cap(aclTestBytes(30))
        let out = r.receive(packet(.firstFlushable, Array(frame[0..<27])))
        #expect(out == ACLReassembler.Output(errors: [.partialFrameDropped(handle: 0x40, received: 1, expected: nil)]))
        #expect(r.receive(packet(.continuation, Array(frame[27...]))).frame == L2CAPFrame(channelID: .att, payload: aclTestBytes(30)))
    }

    @Test func fragmentsExceedingAnnouncedLengthDropTheFrame() {
        var r = ACLReassembler()
        // Announces 5 payload bytes (9 in all); fragments carry 4 + 3 + 4 = 11.
        #expect(r.receive(packet(.firstFlushable, [0x05, 0x00, 0x04, 0x00])).frame == nil)
        #expect(r.receive(packet(.continuation, [1, 2, 3])).frame == nil)
        let out = r.receive(packet(.continuation, [4, 5, 6, 7]))
        #expect(out == ACLReassembler.Output(errors: [.excessData(handle: 0x40, expected: 9, received: 11)]))
        #expect(!r.hasPartialFrame(on: 0x40))
    }

    @Test func firstFragmentLongerThanAnnouncedLengthIsDropped() {
        var r = ACLReassembler()
        let out = r.receive(packet(.firstFlushable, [0x01, 0x00, 0x04, 0x00, 0xAA, 0xBB]))
        #expect(out == ACLReassembler.Output(errors: [.excessData(handle: 0x40, expected: 5, received: 6)]))
        #expect(!r.hasPartialFrame(on: 0x40))
    }

    @Test func excessInTheHeaderCompletingFragmentIsDropped() {
        var r = ACLReassembler()
        _ = r.receive(packet(.firstFlushable, [0x01, 0x00]))
        let out = r.receive(packet(.continuation, [0x04, 0x00, 0xAA, 0xBB]))
        #expect(out == ACLReassembler.Output(errors: [.excessData(handle: 0x40, expected: 5, received: 6)]))
    }

    @Test func frameAboveTheLimitIsNotBufferedAndItsContinuationsAreSkipped() {
        var r = ACLReassembler(maximumFrameLength: 27)
        // Announces 0xFFFF payload bytes: 65,539 in all, far above 27.
        let out = r.receive(packet(.firstFlushable, [0xFF, 0xFF, 0x04, 0x00, 1, 2]))
        #expect(out == ACLReassembler.Output(errors: [.frameTooLarge(handle: 0x40, length: 65539, limit: 27)]))
        // Its continuations are swallowed silently, not reported nor buffered.
        #expect(r.receive(packet(.continuation, aclTestBytes(100))) == ACLReassembler.Output())
        // A frame within the limit after it works.
        #expect(r.receive(packet(.firstFlushable, l2cap([7]))).frame == L2CAPFrame(channelID: .att, payload: [7]))
    }

    @Test func oversizedFrameSkipEndsAfterAnnouncedLength() {
        var r = ACLReassembler(maximumFrameLength: 8)
        // 10 payload bytes announced (14 total); 6 received in the first fragment.
        #expect(r.receive(packet(.firstFlushable, [0x0A, 0x00, 0x04, 0x00, 1, 2])).errors
                == [.frameTooLarge(handle: 0x40, length: 14, limit: 8)])
        #expect(r.hasPartialFrame(on: 0x40))
        #expect(r.receive(packet(.continuation, aclTestBytes(8))) == ACLReassembler.Output())
        #expect(!r.hasPartialFrame(on: 0x40))
        // The skip is over: another continuation has no start.
        #expect(r.receive(packet(.continuation, [1])).errors == [.continuationWithoutStart(handle: 0x40, length: 1)])
    }

    @Test func wholeOversizedFrameInOnePacketIsDropped() {
        var r = ACLReassembler(maximumFrameLength: 10)
        let out = r.receive(packet(.firstFlushable, l2cap(aclTestBytes(7))))
        #expect(out == ACLReassembler.Output(errors: [.frameTooLarge(handle: 0x40, length: 11, limit: 10)]))
    }

    @Test func oversizedHeaderSplitAcrossFragmentsIsCaught() {
        var r = ACLReassembler(maximumFrameLength: 100)
        #expect(r.receive(packet(.firstFlushable, [0x00, 0x10])) == ACLReassembler.Output())
        #expect(r.receive(packet(.continuation, [0x04, 0x00])).errors
                == [.frameTooLarge(handle: 0x40, length: 0x1004, limit: 100)])
    }

    @Test func reservedBoundaryFlagIsReported() {
        var r = ACLReassembler()
        #expect(r.receive(packet(.reserved, l2cap([1]))) == ACLReassembler.Output(errors: [.reservedPacketBoundary(handle: 0x40)]))
    }

    @Test func connectionClosedDropsThePartialFrame() {
        var r = ACLReassembler()
        let frame = l2cap(aclTestBytes(40))
        _ = r.receive(packet(.firstFlushable, Array(frame[0..<27])))
        r.connectionClosed(0x40)
        #expect(!r.hasPartialFrame(on: 0x40))
        #expect(r.receive(packet(.continuation, Array(frame[27...]))).errors
                == [.continuationWithoutStart(handle: 0x40, length: 17)])
    }

    @Test func fragmentThenReassembleRoundTripsForRandomSizes() throws {
        var rng = SplitMix64(state: 0x5EED)
        for _ in 0..<300 {
            let aclLength = UInt16.random(in: 1...300, using: &rng)
            let payloadLength = Int.random(in: 0...1200, using: &rng)
            let payload = (0..<payloadLength).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let cid = UInt16.random(in: 0...0xFFFF, using: &rng)
            let frame = L2CAPFrame(channelID: L2CAPChannelID(cid), payload: payload)
            let handle = UInt16.random(in: 0...0x0EFF, using: &rng)

            var flow = try ACLFlowControl(dataLength: aclLength, totalPackets: 5,
                                          maximumQueuedPacketsPerConnection: 2000)
            try flow.enqueue(l2capPDU: frame.encoded, connection: handle)
            var r = ACLReassembler()
            var frames: [L2CAPFrame] = []
            var fragments = 0
            while true {
                let batch = flow.nextPacketsToSend()
                if batch.isEmpty { break }
                for sent in batch {
                    fragments += 1
                    #expect(sent.payload.count <= Int(aclLength))
                    // Through the wire encoding, as the controller would see it.
                    let decoded = try ACLPacket.decode(sent.encoded[...])
                    let out = r.receive(decoded)
                    #expect(out.errors.isEmpty)
                    if let f = out.frame { frames.append(f) }
                }
                flow.completed([(handle: handle, count: UInt16(batch.count))])
            }
            #expect(fragments == flow.fragmentCount(forPDULength: payloadLength + 4))
            #expect(frames == [frame], "ACL length \(aclLength), payload \(payloadLength)")
            #expect(flow.availableCredits == 5)
        }
    }
}

import RawbleHostCore
import RawbleWire
import Testing

/// A PDU of `count` bytes with distinct-ish values, so misplaced bytes show.
func aclTestBytes(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) }
}

private func make(dataLength: UInt16, total: UInt16, queueLimit: Int = 256) throws -> ACLFlowControl {
    try ACLFlowControl(dataLength: dataLength, totalPackets: total, maximumQueuedPacketsPerConnection: queueLimit)
}

@Suite("ACL flow control")
struct ACLFlowControlTests {
    /// Expected fragment payload lengths, written out by hand for each (ACL length, PDU length).
    static let fragmentTable: [(acl: UInt16, pdu: Int, lengths: [Int])] = [
        (27, 0, [0]),
        (27, 1, [1]),
        (27, 27, [27]),
        (27, 28, [27, 1]),
        (27, 300, [27, 27, 27, 27, 27, 27, 27, 27, 27, 27, 27, 3]),
        (251, 0, [0]),
        (251, 1, [1]),
        (251, 27, [27]),
        (251, 28, [28]),
        (251, 300, [251, 49]),
    ]

    @Test func fragmentsPDUsAt27And251WithExactBytes() throws {
        for row in Self.fragmentTable {
            var flow = try make(dataLength: row.acl, total: 100)
            let pdu = aclTestBytes(row.pdu)
            try flow.enqueue(l2capPDU: pdu, connection: 0x0040)
            let sent = flow.nextPacketsToSend().map(\.encoded)
            var expected: [[UInt8]] = []
            var offset = 0
            for (i, length) in row.lengths.enumerated() {
                // Handle 0x040; PB 00 on the first fragment (0x00 high byte), 01 after (0x10).
                let header: [UInt8] = [0x40, i == 0 ? 0x00 : 0x10, UInt8(length & 0xFF), UInt8(length >> 8)]
                expected.append(header + pdu[offset..<offset + length])
                offset += length
            }
            #expect(offset == row.pdu, "table row \(row) does not cover the PDU")
            #expect(sent == expected, "ACL length \(row.acl), PDU \(row.pdu)")
        }
    }

    @Test func twentyEightBytePDUAt27IsExactlyTheseTwoPackets() throws {
        var flow = try make(dataLength: 27, total: 4)
        let pdu = aclTestBytes(28)
        try flow.enqueue(l2capPDU: pdu, connection: 0x0EFF)
        let sent = flow.nextPacketsToSend().map(\.encoded)
        #expect(sent == [[0xFF, 0x0E, 0x1B, 0x00] + pdu[0..<27], [0xFF, 0x1E, 0x01, 0x00, pdu[27]]])
    }

    @Test func creditsAreSharedBetweenTwoConnectionsAndReturnedByNOCP() throws {
        var flow = try make(dataLength: 27, total: 3)
        try flow.enqueue(l2capPDU: aclTestBytes(54), connection: 1)   // 2 fragments
        try flow.enqueue(l2capPDU: aclTestBytes(81), connection: 2)   // 3 fragments
        let first = flow.nextPacketsToSend()
        // Round robin: 1, 2, 1, then out of credits.
        #expect(first.map(\.handle) == [1, 2, 1])
        #expect(first.map(\.packetBoundary) == [.firstNonFlushable, .firstNonFlushable, .continuation])
        #expect(flow.availableCredits == 0)
        #expect(flow.inFlight(on: 1) == 2 && flow.inFlight(on: 2) == 1)
        #expect(flow.queuedPackets(on: 2) == 2)
        #expect(flow.nextPacketsToSend().isEmpty)

        #expect(flow.completed([(handle: 1, count: 1)]).isEmpty)
        #expect(flow.availableCredits == 1)
        let second = flow.nextPacketsToSend()
        #expect(second.map(\.handle) == [2])
        #expect(second.first?.packetBoundary == .continuation)

        #expect(flow.completed([(handle: 1, count: 1), (handle: 2, count: 2)]).isEmpty)
        #expect(flow.availableCredits == 3)
        #expect(flow.nextPacketsToSend().map(\.handle) == [2])
        #expect(!flow.hasQueuedPackets)
        #expect(flow.availableCredits == 2)
        #expect(flow.nextPacketsToSend().isEmpty)
    }

    @Test func nocpFromTheDecodedEventReturnsCredits() throws {
        var flow = try make(dataLength: 27, total: 2)
        try flow.enqueue(l2capPDU: aclTestBytes(10), connection: 0x40)
        #expect(flow.nextPacketsToSend().count == 1)
        let event = try HCIEvent.decode([0x13, 0x05, 0x01, 0x40, 0x00, 0x01, 0x00][...])
        guard case .numberOfCompletedPackets(let entries) = event else {
            Issue.record("not NOCP: \(event)"); return
        }
        #expect(flow.completed(entries).isEmpty)
        #expect(flow.availableCredits == 2)
        #expect(flow.inFlight(on: 0x40) == 0)
    }

    @Test func excessCompletionIsClampedAndReportedNotInflatingCredits() throws {
        var flow = try make(dataLength: 27, total: 4)
        try flow.enqueue(l2capPDU: aclTestBytes(54), connection: 1)
        try flow.enqueue(l2capPDU: aclTestBytes(27), connection: 2)
        #expect(flow.nextPacketsToSend().count == 3)
        #expect(flow.availableCredits == 1)
        let anomalies = flow.completed([(handle: 1, count: 5)])
        #expect(anomalies == [.excessCompletion(handle: 1, reported: 5, inFlight: 2)])
        #expect(flow.availableCredits == 3)
        #expect(flow.inFlight(on: 1) == 0)
        #expect(flow.inFlight(on: 2) == 1)
        // A second bogus report on the now-idle handle returns nothing.
        #expect(flow.completed([(handle: 1, count: 0xFFFF)]) == [.excessCompletion(handle: 1, reported: 0xFFFF, inFlight: 0)])
        #expect(flow.availableCredits == 3)
    }

    @Test func unknownHandleCompletionIsReportedAndIgnored() throws {
        var flow = try make(dataLength: 27, total: 2)
        try flow.enqueue(l2capPDU: aclTestBytes(1), connection: 1)
        _ = flow.nextPacketsToSend()
        let anomalies = flow.completed([(handle: 9, count: 1), (handle: 1, count: 1)])
        #expect(anomalies == [.unknownHandle(handle: 9, count: 1)])
        #expect(flow.availableCredits == 2)
    }

    @Test func disconnectReturnsInFlightCreditsAndDropsTheQueue() throws {
        var flow = try make(dataLength: 27, total: 2)
        try flow.enqueue(l2capPDU: aclTestBytes(100), connection: 1)   // 4 fragments
        try flow.enqueue(l2capPDU: aclTestBytes(5), connection: 2)
        #expect(flow.nextPacketsToSend().map(\.handle) == [1, 2])
        #expect(flow.availableCredits == 0)
        #expect(flow.connectionClosed(1) == 1)
        #expect(flow.availableCredits == 1)
        #expect(flow.queuedPackets(on: 1) == 0)
        #expect(!flow.hasQueuedPackets)
        #expect(flow.nextPacketsToSend().isEmpty)
        // A late NOCP for the closed handle must not add a credit.
        #expect(flow.completed([(handle: 1, count: 1)]) == [.unknownHandle(handle: 1, count: 1)])
        #expect(flow.availableCredits == 1)
        #expect(flow.connectionClosed(1) == 0)
        // The other connection still works.
        #expect(flow.completed([(handle: 2, count: 1)]).isEmpty)
        #expect(flow.availableCredits == 2)
    }

    @Test func queueBeyondTheLimitThrowsAndQueuesNothing() throws {
        var flow = try make(dataLength: 27, total: 1, queueLimit: 3)
        try flow.enqueue(l2capPDU: aclTestBytes(54), connection: 7)   // 2 of 3
        #expect(throws: ACLFlowControl.EnqueueError.queueFull(handle: 7, queued: 2, needed: 2, limit: 3)) {
            try flow.enqueue(l2capPDU: aclTestBytes(28), connection: 7)
        }
        #expect(flow.queuedPackets(on: 7) == 2)
        try flow.enqueue(l2capPDU: aclTestBytes(27), connection: 7)   // exactly fills it
        #expect(flow.queuedPackets(on: 7) == 3)
        // Sending frees queue space.
        #expect(flow.nextPacketsToSend().count == 1)
        try flow.enqueue(l2capPDU: aclTestBytes(1), connection: 7)
    }

    @Test func invalidHandleAndConfigurationAreRefused() throws {
        var flow = try make(dataLength: 27, total: 1)
        #expect(throws: ACLFlowControl.EnqueueError.invalidHandle(0x0F00)) {
            try flow.enqueue(l2capPDU: aclTestBytes(1), connection: 0x0F00)
        }
        #expect(throws: ACLFlowControl.ConfigurationError.zeroDataLength) {
            _ = try ACLFlowControl(dataLength: 0, totalPackets: 5)
        }
        #expect(throws: ACLFlowControl.ConfigurationError.zeroPacketCount) {
            _ = try ACLFlowControl(dataLength: 27, totalPackets: 0)
        }
        #expect(throws: ACLFlowControl.ConfigurationError.invalidQueueLimit(0)) {
            _ = try ACLFlowControl(dataLength: 27, totalPackets: 1, maximumQueuedPacketsPerConnection: 0)
        }
    }

    @Test func fragmentsOfSlicesUseTheSliceBounds() throws {
        var flow = try make(dataLength: 4, total: 10)
        let bytes = aclTestBytes(20)
        try flow.enqueue(l2capPDU: bytes[3..<10], connection: 1)
        #expect(flow.nextPacketsToSend().map { Array($0.payload) } == [Array(bytes[3..<7]), Array(bytes[7..<10])])
    }
}

import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

// Byte-stream tests of the ATT client against a scripted peer: the exact PDUs the client must
// send and what the peer answers, hostile answers included.

/// The first `count` updates of `stream` (bounded wait).
private func take(
    _ count: Int, from stream: AsyncThrowingStream<ATTValueUpdate, any Error>
) async throws -> [ATTValueUpdate] {
    try await within {
        var updates: [ATTValueUpdate] = []
        for try await update in stream {
            updates.append(update)
            if updates.count == count { break }
        }
        return updates
    }
}

private func configuration(timeout: Duration = .seconds(30), _ adjust: (inout ATTClient.Configuration) -> Void = { _ in })
    -> ATTClient.Configuration
{
    var configuration = ATTClient.Configuration()
    configuration.transactionTimeout = timeout
    adjust(&configuration)
    return configuration
}

private let readHandle1: [UInt8] = [0x0A, 0x01, 0x00]
private let readHandle2: [UInt8] = [0x0A, 0x02, 0x00]
private let readHandle3: [UInt8] = [0x0A, 0x03, 0x00]

@Suite("ATT client: Exchange MTU")
struct ATTClientMTUTests {
    @Test("GATT/CL/GAC/BV-01-C: Exchange MTU: the smaller of both MTUs, once per connection") func exchangeMTUNegotiatesTheSmallerOfBothMTUs() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect([0x02, 0x05, 0x02], reply: [[0x03, 0xF7, 0x00]])  // 517 → server 247
        let client = ATTClient(bearer: bearer)
        #expect(await client.mtu == 23)
        #expect(try await client.exchangeMTU() == 247)
        #expect(await client.mtu == 247)
        // Once per connection: a second call sends nothing.
        #expect(try await client.exchangeMTU() == 247)
        #expect(bearer.sentPDUs == [[0x02, 0x05, 0x02]])
        #expect(bearer.remainingExpectations == 0)
    }

    @Test func exchangeMTUWithAServerMTUBelow23Gives23() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect([0x02, 0x05, 0x02], reply: [[0x03, 0x10, 0x00]])  // server claims 16
        let client = ATTClient(bearer: bearer)
        #expect(try await client.exchangeMTU() == 23)
        #expect(await client.mtu == 23)
    }

    @Test func exchangeMTUWithAServerMTUAbovePreferredGivesPreferred() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect([0x02, 0x64, 0x00], reply: [[0x03, 0x05, 0x02]])  // we offer 100, server 517
        let client = ATTClient(bearer: bearer, configuration: configuration { $0.preferredMTU = 100 })
        #expect(try await client.exchangeMTU() == 100)
    }

    @Test func exchangeMTUOffersNoMoreThanTheBearerCarries() async throws {
        let bearer = ScriptedATTBearer(maximumPDULength: 64)
        bearer.expect([0x02, 0x40, 0x00], reply: [[0x03, 0x05, 0x02]])
        let client = ATTClient(bearer: bearer)
        #expect(try await client.exchangeMTU() == 64)
    }

    @Test func exchangeMTUAnsweredWithRequestNotSupportedKeeps23() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect([0x02, 0x05, 0x02], reply: [[0x01, 0x02, 0x00, 0x00, 0x06]])
        let client = ATTClient(bearer: bearer)
        #expect(try await client.exchangeMTU() == 23)
        #expect(await client.mtu == 23)
    }
}

@Suite("ATT client: transactions")
struct ATTClientTransactionTests {
    @Test func requestsQueueBehindTheOutstandingOneAndGoOutInOrder() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect(readHandle1, reply: [])  // answered later, by inject
        let client = ATTClient(bearer: bearer)
        let first = Task { try await client.transact(.readRequest(handle: 1)) }
        #expect(await eventually { await client.pendingRequestCount == 1 })
        let second = Task { try await client.transact(.readRequest(handle: 2)) }
        #expect(await eventually { await client.pendingRequestCount == 2 })
        let third = Task { try await client.transact(.readRequest(handle: 3)) }
        #expect(await eventually { await client.pendingRequestCount == 3 })
        // Only the first is on the air while it is outstanding.
        #expect(bearer.sentPDUs == [readHandle1])
        bearer.expect(readHandle2, reply: [[0x0B, 0x22]])
        bearer.expect(readHandle3, reply: [[0x0B, 0x33]])
        bearer.inject([0x0B, 0x11])
        #expect(try await first.value == .readResponse(value: [0x11]))
        #expect(try await second.value == .readResponse(value: [0x22]))
        #expect(try await third.value == .readResponse(value: [0x33]))
        #expect(bearer.sentPDUs == [readHandle1, readHandle2, readHandle3])
        #expect(bearer.unexpectedPDUs.isEmpty)
    }

    @Test func errorResponseIsReturnedByTransactAndThrownByRequest() async throws {
        let bearer = ScriptedATTBearer()
        let readNotPermitted: [UInt8] = [0x01, 0x0A, 0x03, 0x00, 0x02]
        bearer.expect(readHandle3, reply: [readNotPermitted])
        bearer.expect(readHandle3, reply: [readNotPermitted])
        let client = ATTClient(bearer: bearer)
        #expect(
            try await client.transact(.readRequest(handle: 3))
                == .errorResponse(requestOpcode: .readRequest, handle: 3, errorCode: .readNotPermitted))
        await #expect(throws: GATTError.att(ATTError(code: .readNotPermitted, requestOpcode: .readRequest, handle: 3))) {
            try await client.request(.readRequest(handle: 3))
        }
    }

    @Test func responseWithTheWrongOpcodeIsDroppedAndTheRightOneAwaited() async throws {
        let bearer = ScriptedATTBearer()
        // A Read Blob Response and a Write Response do not answer a Read Request.
        bearer.expect(readHandle1, reply: [[0x0D, 0x09], [0x13], [0x0B, 0x01]])
        let client = ATTClient(bearer: bearer)
        #expect(try await client.transact(.readRequest(handle: 1)) == .readResponse(value: [0x01]))
    }

    @Test func errorResponseForAnotherRequestIsDropped() async throws {
        let bearer = ScriptedATTBearer()
        // An Error Response naming Write Request, while a Read Request is outstanding.
        bearer.expect(readHandle1, reply: [[0x01, 0x12, 0x01, 0x00, 0x03], [0x0B, 0x02]])
        let client = ATTClient(bearer: bearer)
        #expect(try await client.transact(.readRequest(handle: 1)) == .readResponse(value: [0x02]))
    }

    @Test func malformedAndUnsolicitedPDUsAreDropped() async throws {
        let bearer = ScriptedATTBearer()
        let client = ATTClient(bearer: bearer)
        bearer.inject([0x0B, 0x07])  // a response while nothing is outstanding
        bearer.inject([])  // empty
        bearer.inject([0x1D, 0x01])  // indication cut short: not confirmed
        bearer.inject([0x23, 0x10, 0x00, 0x05, 0x00, 0x01])  // tuple longer than the PDU
        bearer.inject([0x1D, 0x20, 0x00])  // a good indication: once confirmed, all above were read
        #expect(await eventually { bearer.sentPDUs == [[0x1E]] })
        // While a request is outstanding: a truncated Error Response, a malformed Find
        // Information Response (not the awaited opcode), then the answer.
        bearer.expect(readHandle1, reply: [[0x01, 0x0A], [0x05, 0x03, 0x01, 0x00], [0x0B, 0x03]])
        #expect(try await client.transact(.readRequest(handle: 1)) == .readResponse(value: [0x03]))
        #expect(bearer.sentPDUs == [[0x1E], readHandle1])
    }

    @Test func malformedResponseWithTheExpectedOpcodeFailsTheRequest() async throws {
        let bearer = ScriptedATTBearer()
        // Find Information Response with an unknown format (3).
        bearer.expect([0x04, 0x01, 0x00, 0xFF, 0xFF], reply: [[0x05, 0x03, 0x01, 0x00, 0x00, 0x28]])
        bearer.expect(readHandle1, reply: [[0x0B, 0x04]])
        let client = ATTClient(bearer: bearer)
        await #expect {
            try await client.transact(.findInformationRequest(startHandle: 1, endHandle: 0xFFFF))
        } throws: { error in
            if case .malformedPDU? = error as? GATTError { true } else { false }
        }
        // The transaction is over: the next request goes out.
        #expect(try await client.transact(.readRequest(handle: 1)) == .readResponse(value: [0x04]))
    }

    @Test func requestLongerThanTheMTUFailsWithoutBeingSent() async throws {
        let bearer = ScriptedATTBearer()
        let client = ATTClient(bearer: bearer)
        await #expect(throws: GATTError.bearer(.pduTooLong(length: 33, maximum: 23))) {
            try await client.transact(.writeRequest(handle: 1, value: Array(repeating: 0, count: 30)[...]))
        }
        #expect(bearer.sentPDUs.isEmpty)
    }

    @Test func fullRequestQueueFailsAtOnce() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect(readHandle1, reply: [])
        let client = ATTClient(bearer: bearer, configuration: configuration { $0.requestQueueLimit = 1 })
        let first = Task { try await client.transact(.readRequest(handle: 1)) }
        #expect(await eventually { await client.pendingRequestCount == 1 })
        let second = Task { try await client.transact(.readRequest(handle: 2)) }
        #expect(await eventually { await client.pendingRequestCount == 2 })
        await #expect(throws: GATTError.requestQueueFull(limit: 1)) {
            try await client.transact(.readRequest(handle: 3))
        }
        await client.close()
        await #expect(throws: GATTError.bearer(.closed)) { try await first.value }
        await #expect(throws: GATTError.bearer(.closed)) { try await second.value }
    }

    @Test func runDrivesAProcedureOneRequestAtATime() async throws {
        /// Reads handles 1 and 2 and returns both values.
        struct ReadTwo: GATTProcedure {
            var values: [UInt8] = []
            mutating func start() -> GATTProcedureStep<[UInt8]> { .send(.readRequest(handle: 1)) }
            mutating func receive(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<[UInt8]> {
                guard case .readResponse(let value) = response else { throw .invalidResponse("not a read response") }
                values += value
                return values.count == 1 ? .send(.readRequest(handle: 2)) : .finished(values)
            }
        }
        let bearer = ScriptedATTBearer()
        bearer.expect(readHandle1, reply: [[0x0B, 0xA1]])
        bearer.expect(readHandle2, reply: [[0x0B, 0xB2]])
        let client = ATTClient(bearer: bearer)
        #expect(try await client.run(ReadTwo()) == [0xA1, 0xB2])

        bearer.expect(readHandle1, reply: [[0x01, 0x0A, 0x01, 0x00, 0x02]])
        await #expect(throws: GATTError.invalidResponse("not a read response")) { try await client.run(ReadTwo()) }
    }

    @Test func concurrentRequestsEachGetTheirOwnResponse() async throws {
        // The peer answers a Read Request for handle h with the value h (little endian).
        let bearer = ScriptedATTBearer { pdu in
            pdu.count == 3 && pdu[0] == 0x0A ? [[0x0B, pdu[1], pdu[2]]] : []
        }
        let client = ATTClient(bearer: bearer)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for handle in UInt16(1)...100 {
                group.addTask {
                    let response = try await client.transact(.readRequest(handle: handle))
                    #expect(response == .readResponse(value: [UInt8(handle & 0xFF), UInt8(handle >> 8)]))
                }
            }
            try await group.waitForAll()
        }
        #expect(Set(bearer.sentPDUs).count == 100)
        #expect(await client.pendingRequestCount == 0)
    }

    @Test("GATT/CL/GAW/BV-01-C: a Write Command goes out at once, beside an outstanding request, and gets no response") func commandsGoOutAtOnceWithoutAResponse() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect(readHandle1, reply: [])
        let client = ATTClient(bearer: bearer)
        let outstanding = Task { try await client.transact(.readRequest(handle: 1)) }
        #expect(await eventually { bearer.sentPDUs.count == 1 })
        try await client.send(command: .writeCommand(handle: 5, value: [0x01, 0x02]))
        #expect(bearer.sentPDUs == [readHandle1, [0x52, 0x05, 0x00, 0x01, 0x02]])
        bearer.inject([0x0B])
        #expect(try await outstanding.value == .readResponse(value: []))
    }
}

@Suite("ATT client: timeout, cancellation, bearer end")
struct ATTClientEndTests {
    @Test func transactionTimeoutClosesTheBearerAndFailsQueuedAndLaterRequests() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect(readHandle1, reply: [])  // never answered
        let clock = ManualClock()
        let client = ATTClient(bearer: bearer, configuration: configuration(timeout: .milliseconds(50)) { $0.clock = clock })
        let updates = await client.updates(for: nil)
        let first = Task { try await client.transact(.readRequest(handle: 1)) }
        #expect(await eventually { await client.pendingRequestCount == 1 })
        let queued = Task { try await client.transact(.readRequest(handle: 2)) }
        #expect(await eventually { await client.pendingRequestCount == 2 })
        // The request is out and its timer armed: its 50 ms pass.
        try await clock.advanceOnceArmed(by: .milliseconds(50))
        let isTimeout: @Sendable (any Error) -> Bool = { error in
            if case .timeout(.readRequest, let seconds)? = error as? GATTError { abs(seconds - 0.05) < 1e-9 } else { false }
        }
        await #expect(performing: { try await first.value }, throws: isTimeout)
        await #expect(performing: { try await queued.value }, throws: isTimeout)
        await #expect(performing: { try await client.transact(.readRequest(handle: 3)) }, throws: isTimeout)
        await #expect(performing: { try await take(1, from: updates) }, throws: isTimeout)
        #expect(await eventually { bearer.endError == .closed })
        #expect(bearer.sentPDUs == [readHandle1])
    }

    @Test func cancellingAQueuedRequestRemovesIt() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect(readHandle1, reply: [])
        let client = ATTClient(bearer: bearer)
        let first = Task { try await client.transact(.readRequest(handle: 1)) }
        #expect(await eventually { await client.pendingRequestCount == 1 })
        let second = Task { try await client.transact(.readRequest(handle: 2)) }
        #expect(await eventually { await client.pendingRequestCount == 2 })
        second.cancel()
        await #expect(throws: GATTError.cancelled) { try await second.value }
        #expect(await client.pendingRequestCount == 1)
        bearer.inject([0x0B, 0x01])
        #expect(try await first.value == .readResponse(value: [0x01]))
        #expect(bearer.sentPDUs == [readHandle1])  // the cancelled request never went out
    }

    @Test func cancellingASentRequestAbandonsTheWaitButTheTransactionStillCompletes() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect(readHandle1, reply: [])
        let client = ATTClient(bearer: bearer)
        let first = Task { try await client.transact(.readRequest(handle: 1)) }
        #expect(await eventually { bearer.sentPDUs.count == 1 })
        first.cancel()
        await #expect(throws: GATTError.cancelled) { try await first.value }
        bearer.expect(readHandle2, reply: [[0x0B, 0x02]])
        let next = Task { try await client.transact(.readRequest(handle: 2)) }
        #expect(await eventually { await client.pendingRequestCount == 2 })
        // Still waiting for the first transaction's response: the next is held back.
        #expect(bearer.sentPDUs == [readHandle1])
        bearer.inject([0x0B, 0x01])  // the late response ends the abandoned transaction
        #expect(try await next.value == .readResponse(value: [0x02]))
        #expect(bearer.sentPDUs == [readHandle1, readHandle2])
    }

    @Test func alreadyCancelledTaskSendsNothing() async throws {
        let bearer = ScriptedATTBearer()
        let client = ATTClient(bearer: bearer)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.transact(.readRequest(handle: 1))
        }
        await #expect(throws: GATTError.cancelled) { try await task.value }
        #expect(bearer.sentPDUs.isEmpty)
    }

    @Test func bearerEndFailsEverythingPendingQueuedAndLater() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect(readHandle1, reply: [])
        let client = ATTClient(bearer: bearer)
        let updates = await client.updates(for: 0x10)
        let first = Task { try await client.transact(.readRequest(handle: 1)) }
        #expect(await eventually { await client.pendingRequestCount == 1 })
        let queued = Task { try await client.transact(.readRequest(handle: 2)) }
        #expect(await eventually { await client.pendingRequestCount == 2 })
        let lost = GATTError.bearer(.disconnected(reason: "connection timeout"))
        bearer.end(with: .disconnected(reason: "connection timeout"))
        await #expect(throws: lost) { try await first.value }
        await #expect(throws: lost) { try await queued.value }
        await #expect(throws: lost) { try await take(1, from: updates) }
        await #expect(throws: lost) { try await client.transact(.readRequest(handle: 3)) }
        await #expect(throws: lost) { try await client.send(command: .writeCommand(handle: 1, value: [])) }
        await #expect(throws: lost) { try await take(1, from: client.updates(for: nil)) }
    }

    @Test func closeFailsEverythingWithClosed() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect(readHandle1, reply: [])
        let client = ATTClient(bearer: bearer)
        let updates = await client.updates(for: nil)
        let first = Task { try await client.transact(.readRequest(handle: 1)) }
        #expect(await eventually { await client.pendingRequestCount == 1 })
        await client.close()
        #expect(bearer.endError == .closed)
        await #expect(throws: GATTError.bearer(.closed)) { try await first.value }
        await #expect(throws: GATTError.bearer(.closed)) { try await take(1, from: updates) }
        await #expect(throws: GATTError.bearer(.closed)) { try await client.exchangeMTU() }
    }
}

@Suite("ATT client: notifications, indications, peer requests")
struct ATTClientUpdateTests {
    @Test("GATT/CL/GAN/BV-01-C: a notification before subscribing is dropped, after it delivered") func notificationBeforeSubscriptionIsDroppedAndAfterIsDelivered() async throws {
        let bearer = ScriptedATTBearer()
        bearer.inject([0x1B, 0x10, 0x00, 0x01])  // nobody subscribed yet
        bearer.expect(readHandle1, reply: [[0x0B]])
        let client = ATTClient(bearer: bearer)
        _ = try await client.transact(.readRequest(handle: 1))  // the client has read past it
        let updates = await client.updates(for: 0x10)
        bearer.inject([0x1B, 0x10, 0x00, 0x02])
        #expect(try await take(1, from: updates) == [ATTValueUpdate(handle: 0x10, value: [0x02], isIndication: false)])
    }

    @Test func notificationArrivingBeforeTheCCCDWriteResponseIsDelivered() async throws {
        let bearer = ScriptedATTBearer()
        // The server notifies before it answers the CCCD write.
        bearer.expect([0x12, 0x11, 0x00, 0x01, 0x00], reply: [[0x1B, 0x10, 0x00, 0x48], [0x13]])
        let client = ATTClient(bearer: bearer)
        let updates = await client.updates(for: 0x10)
        _ = try await client.request(.writeRequest(handle: 0x11, value: [0x01, 0x00]))
        #expect(try await take(1, from: updates) == [ATTValueUpdate(handle: 0x10, value: [0x48], isIndication: false)])
    }

    @Test func updatesAreRoutedByHandleAndToEverySubscriber() async throws {
        let bearer = ScriptedATTBearer()
        let client = ATTClient(bearer: bearer)
        let forHandle = await client.updates(for: 0x10)
        let alsoForHandle = await client.updates(for: 0x10)
        let everything = await client.updates(for: nil)
        bearer.inject([0x1B, 0x11, 0x00, 0xAA])
        bearer.inject([0x1B, 0x10, 0x00, 0xBB])
        let a = ATTValueUpdate(handle: 0x11, value: [0xAA], isIndication: false)
        let b = ATTValueUpdate(handle: 0x10, value: [0xBB], isIndication: false)
        #expect(try await take(1, from: forHandle) == [b])
        #expect(try await take(1, from: alsoForHandle) == [b])
        #expect(try await take(2, from: everything) == [a, b])
    }

    @Test("GATT/CL/GAI/BV-01-C: an indication is delivered, then confirmed") func indicationIsDeliveredThenConfirmed() async throws {
        let bearer = ScriptedATTBearer()
        let client = ATTClient(bearer: bearer)
        let updates = await client.updates(for: 0x20)
        bearer.inject([0x1D, 0x20, 0x00, 0x05, 0x06])
        #expect(try await take(1, from: updates) == [ATTValueUpdate(handle: 0x20, value: [0x05, 0x06], isIndication: true)])
        #expect(await eventually { bearer.sentPDUs == [[0x1E]] })
    }

    @Test func indicationWithNoSubscriberIsStillConfirmed() async throws {
        let bearer = ScriptedATTBearer()
        _ = ATTClient(bearer: bearer)
        bearer.inject([0x1D, 0x20, 0x00, 0x05])
        bearer.inject([0x1D, 0x21, 0x00])
        #expect(await eventually { bearer.sentPDUs == [[0x1E], [0x1E]] })
    }

    @Test func multipleHandleValueNotificationIsSplitPerHandle() async throws {
        let bearer = ScriptedATTBearer()
        let client = ATTClient(bearer: bearer)
        let everything = await client.updates(for: nil)
        let second = await client.updates(for: 0x11)
        bearer.inject([0x23, 0x10, 0x00, 0x02, 0x00, 0xAA, 0xBB, 0x11, 0x00, 0x01, 0x00, 0xCC])
        let a = ATTValueUpdate(handle: 0x10, value: [0xAA, 0xBB], isIndication: false)
        let b = ATTValueUpdate(handle: 0x11, value: [0xCC], isIndication: false)
        #expect(try await take(2, from: everything) == [a, b])
        #expect(try await take(1, from: second) == [b])
        // Notifications are not confirmed: once the indication after them is confirmed (so
        // everything before it was handled), that confirmation is the only PDU sent.
        bearer.inject([0x1D, 0x30, 0x00])
        #expect(await eventually { !bearer.sentPDUs.isEmpty })
        #expect(bearer.sentPDUs == [[0x1E]])
    }

    @Test func requestsFromThePeerAreAnsweredAndCommandsIgnored() async throws {
        let bearer = ScriptedATTBearer()
        let client = ATTClient(bearer: bearer)
        bearer.inject([0x02, 0x40, 0x00])  // the peer exchanges MTU 64
        bearer.inject([0x52, 0x01, 0x00, 0x01])  // a Write Command: ignored
        bearer.inject([0x0A, 0x01, 0x00])  // Read Request
        bearer.inject([0x3F, 0x00])  // an unknown request
        bearer.inject([0x7F, 0x00])  // an unknown command: ignored
        bearer.inject([0x1E])  // a confirmation nobody asked for: ignored
        bearer.inject([0x12, 0x01])  // a malformed Write Request: still answered
        #expect(
            await eventually { bearer.sentPDUs.count == 4 },
            "sent: \(bearer.sentPDUs)")
        #expect(bearer.sentPDUs == [
            [0x03, 0x05, 0x02],  // our receive MTU, 517
            [0x01, 0x0A, 0x00, 0x00, 0x06],
            [0x01, 0x3F, 0x00, 0x00, 0x06],
            [0x01, 0x12, 0x00, 0x00, 0x06],
        ])
        #expect(await client.mtu == 64)
    }

    @Test func peerTrafficWhileARequestIsOutstandingDoesNotDisturbIt() async throws {
        let bearer = ScriptedATTBearer()
        // Before answering, the peer exchanges the MTU, reads, notifies and indicates.
        bearer.expect(readHandle1, reply: [
            [0x02, 0x17, 0x00], [0x0A, 0x05, 0x00], [0x1B, 0x10, 0x00, 0x01], [0x1D, 0x10, 0x00, 0x02], [0x0B, 0x42],
        ])
        let client = ATTClient(bearer: bearer)
        let updates = await client.updates(for: 0x10)
        #expect(try await client.transact(.readRequest(handle: 1)) == .readResponse(value: [0x42]))
        #expect(try await take(2, from: updates).map(\.isIndication) == [false, true])
        #expect(bearer.sentPDUs == [readHandle1, [0x03, 0x05, 0x02], [0x01, 0x0A, 0x00, 0x00, 0x06], [0x1E]])
        #expect(await client.mtu == 23)
    }

    @Test func updateFloodIsBoundedPerStreamAndCounted() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect(readHandle1, reply: [[0x0B]])
        let client = ATTClient(bearer: bearer, configuration: configuration { $0.updateBufferLimit = 8 })
        let updates = await client.updates(for: 0x10)
        for i in 0..<100 { bearer.inject([0x1B, 0x10, 0x00, UInt8(i)]) }
        // The response comes after the flood: once it is in, the client has read it all.
        _ = try await client.transact(.readRequest(handle: 1))
        #expect(await client.droppedUpdateCount == 92)
        let kept = try await take(8, from: updates)
        #expect(kept.map(\.value) == (92..<100).map { [UInt8($0)][...] })
    }

    @Test func terminatingAStreamUnsubscribesIt() async throws {
        let bearer = ScriptedATTBearer()
        let client = ATTClient(bearer: bearer)
        let kept = await client.updates(for: 0x10)
        do {
            let dropped = await client.updates(for: 0x10)
            let droppedToo = await client.updates(for: nil)
            _ = (dropped, droppedToo)  // released here: terminated
        }
        #expect(await eventually { await client.subscriptionCount == 1 })
        bearer.inject([0x1B, 0x10, 0x00, 0x01])
        #expect(try await take(1, from: kept).count == 1)
    }
}

@Suite("Scripted ATT bearer")
struct ScriptedATTBearerTests {
    @Test func unexpectedPDUsAreRecordedAndNotAnswered() async throws {
        let bearer = ScriptedATTBearer(onMismatch: .record)
        bearer.expect(readHandle1, reply: [[0x0B, 0x01]])
        try await bearer.send(readHandle2)
        #expect(bearer.unexpectedPDUs == [readHandle2])
        #expect(bearer.remainingExpectations == 1)
        try await bearer.send(readHandle1)
        #expect(bearer.remainingExpectations == 0)
        var iterator = bearer.pdus.makeAsyncIterator()
        #expect(try await iterator.next() == [0x0B, 0x01])
    }

    @Test("a PDU the script does not expect fails the procedure at once, naming the step with both PDUs in hex")
    func mismatchFailsAtOnce() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect([0x02, 0x05, 0x02], reply: [[0x03, 0xF7, 0x00]])
        bearer.expect(readHandle1, reply: [[0x0B, 0x01]])
        bearer.expect(readHandle2, reply: [[0x0B, 0x02]])
        let client = ATTClient(bearer: bearer)
        #expect(try await client.exchangeMTU() == 247)
        // The script's step 2 reads handle 1; the client reads handle 2. Bounded only against a
        // hang: the ATT timeout (30 s) would be the failure without the script's.
        let failure = try await within(seconds: 10) { () -> String? in
            do {
                _ = try await client.transact(.readRequest(handle: 0x0002))
                return nil
            } catch {
                return "\(error)"
            }
        }
        let expected = "script step 2 of 3: expected \(ScriptedATTBearer.hex(readHandle1)), sent \(ScriptedATTBearer.hex(readHandle2))"
        #expect(bearer.mismatch == expected)
        #expect(failure?.contains(expected) == true, "\(failure ?? "no failure")")
        #expect(bearer.unexpectedPDUs == [readHandle2])
        // Past the script's end: said so.
        let done = ScriptedATTBearer()
        await #expect(throws: BearerError.self) { try await done.send([0x0A, 0x01, 0x00]) }
        #expect(done.mismatch == "script step 1: the script expects nothing more (0 steps), sent 0A 01 00")
    }

    @Test func closureModeAnswersEveryPDU() async throws {
        let bearer = ScriptedATTBearer { pdu in pdu.first == 0x0A ? [[0x0B] + pdu.dropFirst()] : [] }
        let client = ATTClient(bearer: bearer)
        #expect(try await client.transact(.readRequest(handle: 0x0102)) == .readResponse(value: [0x02, 0x01]))
    }

    @Test func sendRefusesPDUsLongerThanTheBearerCarries() async throws {
        let bearer = ScriptedATTBearer(maximumPDULength: 4)
        await #expect(throws: BearerError.pduTooLong(length: 5, maximum: 4)) {
            try await bearer.send([0x12, 0x01, 0x00, 0x01, 0x02])
        }
        bearer.end(with: .closed)
        await #expect(throws: BearerError.closed) { try await bearer.send([0x0A]) }
    }
}

@Suite("ATT client: update handlers")
struct ATTClientUpdateHandlerTests {
    /// What a handler was given, in order, and how it ended.
    final class Recorder: Sendable {
        private let state = Mutex<(values: [ATTValueUpdate], ends: [GATTError])>(([], []))
        /// Whether `onUpdate` accepts values (`false`: they count as dropped).
        let accepts: Bool
        init(accepts: Bool = true) { self.accepts = accepts }
        var values: [ATTValueUpdate] { state.withLock { $0.values } }
        var ends: [GATTError] { state.withLock { $0.ends } }
        func add(_ update: ATTValueUpdate) -> Bool {
            state.withLock { $0.values.append(update) }
            return accepts
        }
        func end(_ error: GATTError) { state.withLock { $0.ends.append(error) } }
    }

    @Test func aHandlerGetsItsHandlesUpdatesInOrderAndTheEndOnce() async throws {
        let bearer = ScriptedATTBearer()
        let client = ATTClient(bearer: bearer)
        let recorder = Recorder()
        _ = await client.addUpdateHandler(for: 0x10, onUpdate: recorder.add, onEnd: recorder.end)
        bearer.inject([0x1B, 0x11, 0x00, 0xAA])  // another handle
        bearer.inject([0x1B, 0x10, 0x00, 0x01])
        bearer.inject([0x1D, 0x10, 0x00, 0x02])  // an indication: delivered and confirmed
        bearer.inject([0x1B, 0x10, 0x00, 0x03])
        #expect(await eventually { recorder.values.count == 3 })
        #expect(recorder.values.map(\.value) == [[0x01], [0x02], [0x03]])
        #expect(recorder.values.map(\.isIndication) == [false, true, false])
        #expect(await eventually { bearer.sentPDUs == [[0x1E]] })
        bearer.end(with: .disconnected(reason: "connection timeout"))
        #expect(await eventually { recorder.ends.count == 1 })
        #expect(recorder.ends == [.bearer(.disconnected(reason: "connection timeout"))])
        #expect(await client.subscriptionCount == 0)
    }

    @Test func aRemovedHandlerIsNotCalledAgainNorEnded() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect(readHandle1, reply: [[0x0B]])
        let client = ATTClient(bearer: bearer)
        let recorder = Recorder()
        let registration = await client.addUpdateHandler(for: nil, onUpdate: recorder.add, onEnd: recorder.end)
        bearer.inject([0x1B, 0x10, 0x00, 0x01])
        #expect(await eventually { recorder.values.count == 1 })
        await client.removeUpdateHandler(registration)
        await client.removeUpdateHandler(registration)  // twice is fine
        #expect(await client.subscriptionCount == 0)
        bearer.inject([0x1B, 0x10, 0x00, 0x02])
        // The response comes after the notification: once it is in, the client has read it.
        _ = try await client.transact(.readRequest(handle: 1))
        await client.close()
        #expect(recorder.values.count == 1)
        #expect(recorder.ends.isEmpty)
    }

    @Test func valuesAHandlerDropsAreCountedAndAHandlerAddedAfterTheEndEndsAtOnce() async throws {
        let bearer = ScriptedATTBearer()
        let client = ATTClient(bearer: bearer)
        let refusing = Recorder(accepts: false)
        _ = await client.addUpdateHandler(for: 0x10, onUpdate: refusing.add, onEnd: refusing.end)
        for i in 0..<5 { bearer.inject([0x1B, 0x10, 0x00, UInt8(i)]) }
        #expect(await eventually { refusing.values.count == 5 })
        #expect(await client.droppedUpdateCount == 5)
        await client.close()
        let late = Recorder()
        _ = await client.addUpdateHandler(for: 0x10, onUpdate: late.add, onEnd: late.end)
        #expect(late.ends == [.bearer(.closed)])
        #expect(refusing.ends == [.bearer(.closed)])
    }
}

import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

// Byte-stream tests of the ATT client's security retry (issue 11): a request refused with
// Insufficient Authentication, Insufficient Encryption or Encryption Key Size Too Short is
// sent once more when the bearer raised the link's security, as BlueZ's client does.

/// A scripted peer behind a bearer that can (or cannot) raise the link's security, recording
/// each refusal it was asked about. `raising` runs inside the raise (e.g. to hold it).
private final class SecurityBearer: ATTBearer {
    let script = ScriptedATTBearer()
    private let accepts: Bool
    private let raising: (@Sendable () async -> Void)?
    /// The refusals asked about, awaitable.
    let asked = Recording<SecurityRefusal>()
    /// Every PDU the client sent, awaitable (recorded before the script sees it).
    let sends = Recording<[UInt8]>()

    init(accepts: Bool, raising: (@Sendable () async -> Void)? = nil) {
        self.accepts = accepts
        self.raising = raising
    }

    /// The refusals the client asked this bearer to raise security after, in order.
    var refusals: [SecurityRefusal] { asked.items }

    var pdus: AsyncThrowingStream<[UInt8], any Error> { script.pdus }
    var maximumPDULength: Int { script.maximumPDULength }
    func send(_ pdu: [UInt8]) async throws(BearerError) {
        sends.append(pdu)
        try await script.send(pdu)
    }
    func close() async { await script.close() }

    func raiseSecurity(after refusal: SecurityRefusal) async -> Bool {
        asked.append(refusal)
        await raising?()
        return accepts
    }
}

private let readHandle3: [UInt8] = [0x0A, 0x03, 0x00]
private let readHandle4: [UInt8] = [0x0A, 0x04, 0x00]
/// An Error Response refusing Read Request on handle 3 with `code`.
private func refusal(_ code: UInt8, handle: UInt8 = 0x03) -> [UInt8] { [0x01, 0x0A, handle, 0x00, code] }

private func configuration(timeout: Duration = .seconds(30), clock: any Clock<Duration> = ContinuousClock()) -> ATTClient.Configuration {
    var configuration = ATTClient.Configuration()
    configuration.transactionTimeout = timeout
    configuration.clock = clock
    return configuration
}

@Suite("ATT client: security raised and the request retried")
struct ATTSecurityRetryTests {
    @Test(arguments: [
        (UInt8(0x05), SecurityRefusal.insufficientAuthentication),
        (UInt8(0x0C), SecurityRefusal.encryptionKeySizeTooShort),
        (UInt8(0x0F), SecurityRefusal.insufficientEncryption),
    ])
    func aSecurityRefusalIsRetriedOnceAfterTheBearerRaisedSecurity(code: UInt8, expected: SecurityRefusal) async throws {
        let bearer = SecurityBearer(accepts: true)
        bearer.script.expect(readHandle3, reply: [refusal(code)])
        bearer.script.expect(readHandle3, reply: [[0x0B, 0x2A]])
        let client = ATTClient(bearer: bearer)
        let response = try await within { try await client.transact(.readRequest(handle: 3)) }
        #expect(response == .readResponse(value: [0x2A]))
        #expect(bearer.script.sentPDUs == [readHandle3, readHandle3])
        #expect(bearer.refusals == [expected])
        #expect(bearer.script.remainingExpectations == 0)
        #expect(await client.pendingRequestCount == 0)
    }

    @Test func aBearerThatDeclinesLeavesTheRefusalAsTheAnswer() async throws {
        let bearer = SecurityBearer(accepts: false)
        bearer.script.expect(readHandle3, reply: [refusal(0x0F)])
        let client = ATTClient(bearer: bearer)
        let response = try await within { try await client.transact(.readRequest(handle: 3)) }
        #expect(response == .errorResponse(requestOpcode: .readRequest, handle: 3, errorCode: .insufficientEncryption))
        #expect(bearer.script.sentPDUs == [readHandle3])
        #expect(bearer.refusals == [.insufficientEncryption])
    }

    @Test func aBearerWithoutTheCapabilityDeclinesByDefault() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect(readHandle3, reply: [refusal(0x05)])
        #expect(await bearer.raiseSecurity(after: .insufficientAuthentication) == false)
        let client = ATTClient(bearer: bearer)
        await #expect(throws: GATTError.att(ATTError(code: .insufficientAuthentication, requestOpcode: .readRequest, handle: 3))) {
            try await within { try await client.request(.readRequest(handle: 3)) }
        }
        #expect(bearer.sentPDUs == [readHandle3])
    }

    @Test func aSecondRefusalOfTheSameRequestStandsButTheNextRequestMayRetryAgain() async throws {
        let bearer = SecurityBearer(accepts: true)
        bearer.script.expect(readHandle3, reply: [refusal(0x0F)])
        bearer.script.expect(readHandle3, reply: [refusal(0x05)])
        bearer.script.expect(readHandle4, reply: [refusal(0x05, handle: 0x04)])
        bearer.script.expect(readHandle4, reply: [[0x0B, 0x07]])
        let client = ATTClient(bearer: bearer)
        let first = try await within { try await client.transact(.readRequest(handle: 3)) }
        #expect(first == .errorResponse(requestOpcode: .readRequest, handle: 3, errorCode: .insufficientAuthentication))
        #expect(bearer.script.sentPDUs == [readHandle3, readHandle3])
        // Once per request: the next request gets its own retry.
        let second = try await within { try await client.transact(.readRequest(handle: 4)) }
        #expect(second == .readResponse(value: [0x07]))
        #expect(bearer.script.sentPDUs == [readHandle3, readHandle3, readHandle4, readHandle4])
        #expect(bearer.refusals == [.insufficientEncryption, .insufficientAuthentication])
    }

    @Test(arguments: [UInt8(0x02), 0x08, 0x0A, 0x0E, 0x80])
    func otherErrorsAreNotRetried(code: UInt8) async throws {
        let bearer = SecurityBearer(accepts: true)
        bearer.script.expect(readHandle3, reply: [refusal(code)])
        let client = ATTClient(bearer: bearer)
        let response = try await within { try await client.transact(.readRequest(handle: 3)) }
        #expect(response == .errorResponse(requestOpcode: .readRequest, handle: 3, errorCode: ATTErrorCode(code)))
        #expect(bearer.script.sentPDUs == [readHandle3])
        #expect(bearer.refusals.isEmpty)
    }

    @Test func requestsQueuedBehindARetriedOneWaitForItAndGoOutAfter() async throws {
        let (held, release) = AsyncStream<Void>.makeStream()
        defer { release.finish() }
        let bearer = SecurityBearer(accepts: true) { for await _ in held { break } }
        bearer.script.expect(readHandle3, reply: [refusal(0x0F)])
        bearer.script.expect(readHandle3, reply: [[0x0B, 0x01]])
        bearer.script.expect(readHandle4, reply: [[0x0B, 0x02]])
        let client = ATTClient(bearer: bearer)
        let first = Task { try await client.transact(.readRequest(handle: 3)) }
        try await bearer.asked.wait(until: { !$0.isEmpty })
        // The raise is held: the second request queues behind the first, then the raise ends.
        let second = Task { try await client.transact(.readRequest(handle: 4)) }
        try await within { try await client.waitForPendingRequests(2) }
        release.yield()
        #expect(try await within { try await first.value } == .readResponse(value: [0x01]))
        #expect(try await within { try await second.value } == .readResponse(value: [0x02]))
        #expect(bearer.script.sentPDUs == [readHandle3, readHandle3, readHandle4])
    }

    @Test func theTransactionTimeoutBoundsARaiseThatNeverEnds() async throws {
        let (held, release) = AsyncStream<Void>.makeStream()
        defer { release.finish() }
        let bearer = SecurityBearer(accepts: true) { for await _ in held {} }
        bearer.script.expect(readHandle3, reply: [refusal(0x0F)])
        let clock = ManualClock()
        let client = ATTClient(bearer: bearer, configuration: configuration(timeout: .milliseconds(100), clock: clock))
        let reading = Task { try await client.transact(.readRequest(handle: 3)) }
        // The raise has begun (and never ends); then the request's 100 ms pass.
        try await bearer.asked.wait(until: { !$0.isEmpty })
        try await clock.advanceOnceArmed(by: .milliseconds(100))
        await #expect(performing: { try await within { try await reading.value } }, throws: { error in
            if case .timeout(.readRequest, _)? = error as? GATTError { true } else { false }
        })
        #expect(bearer.script.sentPDUs == [readHandle3])
        #expect(bearer.script.endError == .closed)
    }

    @Test func theTransactionTimeoutBoundsAResendThatIsNeverAnswered() async throws {
        let bearer = SecurityBearer(accepts: true)
        bearer.script.expect(readHandle3, reply: [refusal(0x05)])
        bearer.script.expect(readHandle3, reply: [])  // encryption came up, the peer never answers
        let clock = ManualClock()
        let client = ATTClient(bearer: bearer, configuration: configuration(timeout: .milliseconds(100), clock: clock))
        let reading = Task { try await client.transact(.readRequest(handle: 3)) }
        // In virtual time the resend goes out before the 100 ms run out, whatever the load.
        try await bearer.sends.wait(until: { $0.count >= 2 })
        try await clock.advanceOnceArmed(by: .milliseconds(100))
        await #expect(performing: { try await within { try await reading.value } }, throws: { error in
            if case .timeout(.readRequest, _)? = error as? GATTError { true } else { false }
        })
        // The request ends with the timeout, and nothing but the read is ever sent: twice.
        #expect(bearer.script.sentPDUs.allSatisfy { $0 == readHandle3 })
        #expect(bearer.script.sentPDUs == [readHandle3, readHandle3])
    }
}

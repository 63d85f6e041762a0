// The link's security as the bearer reports it, read by the GATT server before each request.
import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

/// The peripheral end of a pipe, reporting whatever security the test sets (as the kernel's
/// socket reports BT_SECURITY).
private final class ReportingBearer: ATTBearer {
    let inner: PipeBearer
    let reported = Mutex<LinkSecurity?>(LinkSecurity.none)
    let reportedKeySize = Mutex<UInt8?>(nil)
    init(_ inner: PipeBearer) { self.inner = inner }
    var pdus: AsyncThrowingStream<[UInt8], any Error> { inner.pdus }
    var maximumPDULength: Int { inner.maximumPDULength }
    func send(_ pdu: [UInt8]) async throws(BearerError) { try await inner.send(pdu) }
    func close() async { await inner.close() }
    func linkSecurity() -> LinkSecurity? { reported.withLock { $0 } }
    func encryptionKeySize() -> UInt8? { reportedKeySize.withLock { $0 } }
}

@Suite("Server: the link's security as its bearer reports it")
struct ServerLinkSecurityTests {
    @Test("a read that needs authentication is refused while the bearer reports none or encrypted, served once it reports authenticated; the bearer's report wins over setSecurity")
    func bearerReportDecides() async throws {
        let server = GATTServer(database: try sampleDatabase())
        let (central, peripheral) = PipeBearer.pair()
        let bearer = ReportingBearer(peripheral)
        let connection = await server.connect(bearer)
        let serving = Task { await server.serve(connection) }
        let client = GATTClient(bearer: central)
        let refused = GATTError.att(ATTError(code: .insufficientAuthentication, requestOpcode: .readRequest, handle: 30))
        try await within(seconds: 60) { () async throws in
            await server.setSecurity(.authenticated, for: connection)  // the bearer says none: it wins
            await #expect(throws: refused) { try await client.read(handle: 30) }
            bearer.reported.withLock { $0 = .encrypted }
            await #expect(throws: refused) { try await client.read(handle: 30) }
            bearer.reported.withLock { $0 = .authenticated }  // the central paired since
            #expect(try await client.read(handle: 30) == [1, 2])
        }
        await client.close()
        _ = await serving.value
    }

    @Test("a bearer that cannot tell (nil) leaves what the embedder set")
    func embedderDecidesWhenTheBearerCannotTell() async throws {
        let server = GATTServer(database: try sampleDatabase())
        let (central, peripheral) = PipeBearer.pair()
        let bearer = ReportingBearer(peripheral)
        bearer.reported.withLock { $0 = nil }
        let connection = await server.connect(bearer)
        let serving = Task { await server.serve(connection) }
        let client = GATTClient(bearer: central)
        try await within(seconds: 60) { () async throws in
            await #expect(throws: GATTError.att(ATTError(code: .insufficientAuthentication, requestOpcode: .readRequest, handle: 30))) {
                try await client.read(handle: 30)
            }
            await server.setSecurity(.authenticated, for: connection)
            #expect(try await client.read(handle: 30) == [1, 2])
        }
        await client.close()
        _ = await serving.value
    }

    @Test("an authenticated link with a key shorter than the server requires (16 by default): Encryption Key Size Too Short (0x0C); a 16-octet key, or a server that requires less, is served",
          arguments: [(UInt8(7), UInt8(16), false), (15, 16, false), (16, 16, true), (7, 7, true), (10, 12, false)])
    func keySizeIsPartOfTheSecurity(keySize: UInt8, required: UInt8, served: Bool) async throws {
        var configuration = GATTServer.Configuration()
        configuration.att.requiredEncryptionKeySize = required
        let server = GATTServer(database: try sampleDatabase(), configuration: configuration)
        let (central, peripheral) = PipeBearer.pair()
        let bearer = ReportingBearer(peripheral)
        bearer.reported.withLock { $0 = .authenticated }
        bearer.reportedKeySize.withLock { $0 = keySize }
        let connection = await server.connect(bearer)
        let serving = Task { await server.serve(connection) }
        let client = GATTClient(bearer: central)
        try await within(seconds: 60) { () async throws in
            if served {
                #expect(try await client.read(handle: 30) == [1, 2])
            } else {
                await #expect(throws: GATTError.att(ATTError(code: .encryptionKeySizeTooShort, requestOpcode: .readRequest, handle: 30))) {
                    try await client.read(handle: 30)
                }
            }
        }
        await client.close()
        _ = await serving.value
    }
}

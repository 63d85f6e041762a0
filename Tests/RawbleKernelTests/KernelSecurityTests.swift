#if canImport(Glibc)
import Glibc
#endif
@testable import RawbleKernel
import RawbleBearer
import RawbleTestSupport
import SystemPackage
import Testing

/// Raising the link's security on the kernel's L2CAP socket (issue 11): the level steps BlueZ's
/// client takes, a socket the kernel will not raise declining, and the wait for the kernel to
/// finish (proven against a real kernel in KernelSecurityVMTests).
@Suite struct KernelSecurityTests {
    @Test func levelsFollowBlueZsSteps() {
        let encryption: [SecurityRefusal] = [.insufficientEncryption, .encryptionKeySizeTooShort]
        for refusal in encryption {
            #expect(KernelATTBearer.securityLevel(after: refusal, from: .low) == .medium)
            #expect(KernelATTBearer.securityLevel(after: refusal, from: .medium) == nil)
            #expect(KernelATTBearer.securityLevel(after: refusal, from: .high) == nil)
        }
        #expect(KernelATTBearer.securityLevel(after: .insufficientAuthentication, from: .low) == .medium)
        #expect(KernelATTBearer.securityLevel(after: .insufficientAuthentication, from: .medium) == .high)
        #expect(KernelATTBearer.securityLevel(after: .insufficientAuthentication, from: .high) == .fips)
        #expect(KernelATTBearer.securityLevel(after: .insufficientAuthentication, from: .fips) == nil)
    }

    /// A socket without BT_SECURITY (here a unix packet socket) declines, and the bearer stays up.
    @Test func aSocketThatCannotRaiseDeclinesAndStaysUsable() async throws {
        let (ours, peer) = try seqpacketPair()
        defer { close(peer) }
        let bearer = try await KernelATTBearer.adopt(
            FileDescriptor(rawValue: ours), peer: .any, sendMTU: 23, receiveMTU: 23, sendTimeout: .seconds(30))
        #expect(await bearer.raiseSecurity(after: .insufficientEncryption) == false)
        try await bearer.send([0x0A, 0x03, 0x00])
        #expect(bearer.end == nil)
        await bearer.close()
    }

    /// The wait after raising: on a copy of the descriptor, so its owner may close it; ready
    /// once the socket takes sends again, a timeout or cancellation otherwise.
    @Test func theWaitForRaisedSecurityWatchesACopyUntilTheSocketTakesSendsAgain() async throws {
        let (ours, peer) = try seqpacketPair()
        defer {
            close(ours)
            close(peer)
        }
        let fd = FileDescriptor(rawValue: ours)
        #expect(await L2CAPATTSocket.waitUntilWritable(sharing: fd, timeout: .seconds(30)) == .ready)
        #expect(fcntl(ours, F_GETFD) >= 0)  // the original is still open
        _ = fcntl(ours, F_SETFL, fcntl(ours, F_GETFL) | O_NONBLOCK)
        let chunk = [UInt8](repeating: 0, count: 512)
        while chunk.withUnsafeBytes({ send(ours, $0.baseAddress, $0.count, 0) }) > 0 {}
        #expect(await L2CAPATTSocket.waitUntilWritable(sharing: fd, timeout: .milliseconds(200)) == .timedOut)
        let cancelled = Task { await L2CAPATTSocket.waitUntilWritable(sharing: fd, timeout: .seconds(60)) }
        cancelled.cancel()
        #expect(try await within(seconds: 30) { await cancelled.value } == .cancelled)
        let waiting = Task { await L2CAPATTSocket.waitUntilWritable(sharing: fd, timeout: .seconds(60)) }
        var buffer = [UInt8](repeating: 0, count: 512)
        while buffer.withUnsafeMutableBytes({ recv(peer, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
        #expect(try await within(seconds: 30) { await waiting.value } == .ready)
    }
}

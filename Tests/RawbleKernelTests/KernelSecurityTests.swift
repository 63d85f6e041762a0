#if canImport(Glibc)
import Glibc
#endif
@testable import RawbleKernel
import RawbleBearer
import RawbleManagementCore
import RawbleTestSupport
import RawbleWire
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

/// The management packets rawble sends and reads to pair without bluetoothd, byte for byte
/// (as captured in the VM: a Just Works User Confirmation Request from Linux 6.1).
@Suite struct KernelManagementPacketTests {
    static let strap = BluetoothAddress(0xC0B1_E000_0001)

    @Test func readControllerInformationAndItsAnswer() {
        let read = ManagementCommand.readControllerInformation(index: 1)
        #expect(read.encoded == [0x04, 0x00, 0x01, 0x00, 0x00, 0x00])
        // Command Complete for opcode 0x0004 on hci1, status 0 (the information cut short here:
        // only the status and header matter to the reply).
        let complete: [UInt8] = [0x01, 0x00, 0x01, 0x00, 0x03, 0x00, 0x04, 0x00, 0x00]
        #expect(KernelManagement.reply(to: read, in: complete[...])?.status == .success)
        #expect(KernelManagement.reply(to: .readControllerInformation(index: 0), in: complete[...]) == nil)  // another adapter
        let status: [UInt8] = [0x02, 0x00, 0x01, 0x00, 0x03, 0x00, 0x04, 0x00, 0x11]
        #expect(KernelManagement.reply(to: read, in: status[...])?.status == .invalidIndex)
        #expect(KernelManagement.reply(to: read, in: complete.prefix(8)) == nil)  // truncated
        // New Settings (0x0006) is an event, not an answer.
        #expect(KernelManagement.reply(to: read, in: [0x06, 0x00, 0x01, 0x00, 0x04, 0x00, 0x01, 0x02, 0x00, 0x00][...]) == nil)
    }

    @Test func setPoweredAndItsAnswer() {
        let powerOn = ManagementCommand.setPowered(index: 0, on: true)
        #expect(powerOn.encoded == [0x05, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01])
        // Command Complete for Set Powered on hci0: status 0, current settings 0x00000201 (powered, LE).
        let complete: [UInt8] = [0x01, 0x00, 0x00, 0x00, 0x07, 0x00, 0x05, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00]
        let reply = KernelManagement.reply(to: powerOn, in: complete[...])
        #expect(reply?.status == .success)
        #expect(reply?.returnParameters == [0x01, 0x02, 0x00, 0x00])
        // A length that disagrees with the bytes that came is not an answer (it does not decode).
        #expect(KernelManagement.reply(to: powerOn, in: (complete + [0xEE])[...]) == nil)
        // Permission Denied (an untrusted socket: no CAP_NET_ADMIN) as Command Status.
        let denied: [UInt8] = [0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x05, 0x00, 0x14]
        #expect(KernelManagement.reply(to: powerOn, in: denied[...]) == ManagementSocket.Reply(status: .permissionDenied, returnParameters: []))
    }

    @Test func aJustWorksConfirmationIsAcceptedForThePeerOnly() {
        // Event 0x000F on hci0: C0:B1:E0:00:00:01 LE random (2), confirm hint 1, value 0.
        let request: [UInt8] = [0x0F, 0x00, 0x00, 0x00, 0x0C, 0x00, 0x01, 0x00, 0x00, 0xE0, 0xB1, 0xC0, 0x02, 0x01, 0, 0, 0, 0]
        #expect(KernelManagement.reply(to: request[...], pairingWith: Self.strap)?.encoded
            == [0x1C, 0x00, 0x00, 0x00, 0x07, 0x00, 0x01, 0x00, 0x00, 0xE0, 0xB1, 0xC0, 0x02])
        let other = BluetoothAddress(0xC0B1_E000_0002)
        #expect(KernelManagement.reply(to: request[...], pairingWith: other) == nil)
        #expect(KernelManagement.reply(to: request.prefix(13), pairingWith: Self.strap) == nil)
    }

    @Test func aComparisonOrAPasskeyIsRefusedAtOnce() {
        let comparison: [UInt8] = [0x0F, 0x00, 0x00, 0x00, 0x0C, 0x00, 0x01, 0x00, 0x00, 0xE0, 0xB1, 0xC0, 0x02, 0x00, 0x40, 0xE2, 0x01, 0x00]
        #expect(KernelManagement.reply(to: comparison[...], pairingWith: Self.strap)?.opcode == 0x001D)
        // User Passkey Request (0x0010): the address and its type only.
        let passkey: [UInt8] = [0x10, 0x00, 0x00, 0x00, 0x07, 0x00, 0x01, 0x00, 0x00, 0xE0, 0xB1, 0xC0, 0x02]
        #expect(KernelManagement.reply(to: passkey[...], pairingWith: Self.strap)?.encoded
            == [0x1F, 0x00, 0x00, 0x00, 0x07, 0x00, 0x01, 0x00, 0x00, 0xE0, 0xB1, 0xC0, 0x02])
        // Authentication Failed (0x0011) about the peer: not a question.
        let failed: [UInt8] = [0x11, 0x00, 0x00, 0x00, 0x08, 0x00, 0x01, 0x00, 0x00, 0xE0, 0xB1, 0xC0, 0x02, 0x05]
        #expect(KernelManagement.reply(to: failed[...], pairingWith: Self.strap) == nil)
    }

    /// The kernel's word that pairing failed (it never wakes the suspended socket): heard for
    /// the peer only, with its status; nothing from a question, another peer or a short packet.
    @Test func aFailedPairingIsHeardForThePeerOnly() {
        // Authentication Failed (0x0011) on hci0: C0:B1:E0:00:00:01 LE random, status 0x05 (Authentication Failed).
        let failed: [UInt8] = [0x11, 0x00, 0x00, 0x00, 0x08, 0x00, 0x01, 0x00, 0x00, 0xE0, 0xB1, 0xC0, 0x02, 0x05]
        #expect(KernelManagement.authenticationFailure(in: failed[...], pairingWith: Self.strap) == .authenticationFailed)
        #expect(KernelManagement.authenticationFailure(in: failed[...], pairingWith: BluetoothAddress(0xC0B1_E000_0002)) == nil)
        #expect(KernelManagement.authenticationFailure(in: failed.prefix(13), pairingWith: Self.strap) == nil)
        let request: [UInt8] = [0x0F, 0x00, 0x00, 0x00, 0x0C, 0x00, 0x01, 0x00, 0x00, 0xE0, 0xB1, 0xC0, 0x02, 0x01, 0, 0, 0, 0]
        #expect(KernelManagement.authenticationFailure(in: request[...], pairingWith: Self.strap) == nil)
    }
}

extension KernelSecurityTests {
    /// EINVAL from BT_SECURITY (no Security Manager on the adapter) gets a hint in the log.
    @Test func aRefusedRaiseSaysWhyInTheLog() {
        let refused = KernelError.system(operation: "raising the security of the link", errno: .invalidArgument)
        #expect(KernelATTBearer.hint(refused).contains("security requested but not available"))
        #expect(KernelATTBearer.hint(.system(operation: "x", errno: .ioError)).isEmpty)
    }
}

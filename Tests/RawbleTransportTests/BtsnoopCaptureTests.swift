import Foundation
import Glibc
import RawbleHCITransport
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

@testable import RawbleTransport

/// The whole file at `path` as it is now on disk (read through a separate descriptor).
func contents(of path: String) throws -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    try #require(fd >= 0, "open \(path) failed: errno \(errno)")
    defer { Glibc.close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        try #require(n >= 0, "read \(path) failed: errno \(errno)")
        if n == 0 { return bytes }
        bytes += buffer[0..<n]
    }
}

/// The packets and directions of a btsnoop file, with its records; fails the test if the file
/// does not parse.
func capturedPackets(at path: String) throws -> (packets: [H4Packet], directions: [BtsnoopRecord.Direction], records: [BtsnoopRecord]) {
    let (header, records, error) = BtsnoopReader.read(try contents(of: path))
    #expect(error == nil)
    #expect(header?.datalink == .hciUART)
    let packets = try records.map { try #require(try $0.h4Packet(datalink: .hciUART)) }
    return (packets, records.map(\.direction), records)
}

/// The permission bits of the file at `path`.
func mode(of path: String) throws -> mode_t {
    var status = stat()
    try #require(lstat(path, &status) == 0, "stat \(path): errno \(errno)")
    return status.st_mode & 0o7777
}

/// Writes `bytes` to a new file at `path` with `mode` (whatever the umask).
func write(_ bytes: [UInt8], to path: String, mode: mode_t) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
    try #require(fd >= 0, "create \(path): errno \(errno)")
    defer { Glibc.close(fd) }
    try #require(fchmod(fd, mode) == 0)
    try #require(bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == bytes.count)
}

/// A path for a capture file in a fresh temporary directory (removed by `remove`).
struct CapturePath {
    let directory: String
    let path: String
    init() throws {
        directory = try temporaryDirectory()
        path = directory + "/capture.btsnoop"
    }
    func remove() {
        unlink(path)
        rmdir(directory)
    }
}

@Suite struct BtsnoopCaptureTests {
    @Test func aSessionIsCapturedWithBothDirectionsInOrderAndTheEndPassesThrough() async throws {
        let file = try CapturePath()
        defer { file.remove() }
        let capture = try BtsnoopCaptureFile(path: file.path)
        let peer = try Peer()
        async let accepted = peer.accept()
        let before = BtsnoopCaptureFile.wallClockMicroseconds()
        let transport = CapturingTransport(
            try await H4StreamTransport.connect(tcp: "127.0.0.1", port: peer.port), capture: capture)
        let connection = try await accepted

        try await transport.send(reset)
        #expect(await connection.read(count: reset.encoded.count) == reset.encoded)
        connection.write(commandComplete.encoded)
        #expect(try await receive(1, from: transport) == [commandComplete])
        try await transport.send(aclData)
        #expect(await connection.read(count: aclData.encoded.count) == aclData.encoded)
        connection.write(aclData.encoded + emptyEvent.encoded)
        #expect(try await receive(2, from: transport) == [aclData, emptyEvent])
        connection.close()
        let packets = transport.packets
        let end = try await within(seconds: 5) {
            do {
                for try await _ in packets {}
                return TransportError?.none
            } catch let error as TransportError {
                return error
            }
        }
        #expect(end == .closedByPeer)
        let after = BtsnoopCaptureFile.wallClockMicroseconds()

        let captured = try capturedPackets(at: file.path)
        #expect(captured.packets == [reset, commandComplete, aclData, aclData, emptyEvent])
        #expect(captured.directions == [.sent, .received, .sent, .received, .received])
        let stamps = captured.records.map(\.unixMicroseconds)
        #expect(stamps == stamps.sorted())
        #expect(stamps.allSatisfy { $0 >= before && $0 <= after })
        #expect(capture.recordCount == 5)
        await transport.close()
        #expect(capture.close() == nil)
    }

    @Test func theFileIsCompleteOnDiskAfterEveryRecordWhileStillOpen() throws {
        let file = try CapturePath()
        defer { file.remove() }
        let capture = try BtsnoopCaptureFile(path: file.path)
        #expect(try contents(of: file.path) == BtsnoopWriter.header(datalink: .hciUART))
        capture.record(reset, direction: .sent, at: 1_700_000_000_000_000)
        #expect(try capturedPackets(at: file.path).packets == [reset])
        capture.record(commandComplete, direction: .received, at: 1_700_000_000_000_250)
        let captured = try capturedPackets(at: file.path)
        #expect(captured.packets == [reset, commandComplete])
        #expect(captured.records.map(\.unixMicroseconds) == [1_700_000_000_000_000, 1_700_000_000_000_250])
        // Command sent: flags 2; event received: flags 3 (the btsnoop convention).
        #expect(captured.records.map(\.flags.rawValue) == [2, 3])
        #expect(capture.close() == nil)
    }

    @Test func recordsFromManyThreadsAreWholeAndInTimeOrder() async throws {
        let file = try CapturePath()
        defer { file.remove() }
        let capture = try BtsnoopCaptureFile(path: file.path)
        let big = H4Packet(type: .acl, bytes: [0x01, 0x00, 0x00, 0x10] + [UInt8](repeating: 0x5A, count: 0x1000))
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    for _ in 0..<50 { capture.record(index.isMultiple(of: 2) ? big : reset, direction: .sent) }
                }
            }
        }
        #expect(capture.close() == nil)
        let captured = try capturedPackets(at: file.path)
        #expect(captured.packets.count == 400)
        #expect(captured.packets.filter { $0 == big }.count == 200)
        #expect(captured.packets.filter { $0 == reset }.count == 200)
        let stamps = captured.records.map(\.unixMicroseconds)
        #expect(stamps == stamps.sorted())
    }

    @Test func aPathInAMissingDirectoryIsNotFound() throws {
        let file = try CapturePath()
        defer { file.remove() }
        let path = file.directory + "/missing/capture.btsnoop"
        #expect(throws: PrivateFileError.system(path, operation: "create", errno: ENOENT)) { _ = try BtsnoopCaptureFile(path: path) }
    }

    @Test func aDirectoryOrADeviceCannotHoldACapture() throws {
        let file = try CapturePath()
        defer { file.remove() }
        #expect(throws: PrivateFileError.system(file.directory, operation: "create", errno: EISDIR)) {
            _ = try BtsnoopCaptureFile(path: file.directory)
        }
        // A device is never written to, whoever owns it.
        #expect(throws: PrivateFileError.notARegularFile("/dev/full")) { _ = try BtsnoopCaptureFile(path: "/dev/full") }
    }

    @Test func aWriteFailureIsKeptNotThrownAndLaterRecordsAreDropped() async throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let capture = BtsnoopCaptureFile(descriptor: ends[1], path: "the pipe")
        Glibc.close(ends[0])
        // No reader left: the write fails with EPIPE. SIGPIPE is blocked on a throw-away thread
        // so it cannot end the test process (a thread's pending signal dies with the thread).
        await onThread {
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &set, nil)
            capture.record(reset, direction: .sent)
            capture.record(reset, direction: .sent)
        }
        let expected = TransportError.ioError(errno: EPIPE, operation: "write the pipe")
        #expect(capture.failure == expected)
        #expect(capture.recordCount == 0)
        #expect(capture.close() == expected)
    }

    @Test("a capture is created mode 0600 whatever the umask")
    func modeIsPrivate() throws {
        let file = try CapturePath()
        defer { file.remove() }
        let old = umask(0)
        defer { umask(old) }
        let capture = try BtsnoopCaptureFile(path: file.path)
        #expect(capture.close() == nil)
        #expect(try mode(of: file.path) == 0o600)
    }

    @Test("a symbolic link at the path is refused, not followed: its target is untouched, the link stays")
    func symbolicLinkRefused() throws {
        let file = try CapturePath()
        defer { file.remove() }
        let target = file.directory + "/target"
        defer { unlink(target) }
        try write([1, 2, 3], to: target, mode: 0o644)
        try #require(symlink(target, file.path) == 0)
        #expect(throws: PrivateFileError.symbolicLink(file.path)) { _ = try BtsnoopCaptureFile(path: file.path) }
        // A dangling link too (O_EXCL would otherwise create its target).
        let dangling = file.directory + "/dangling"
        defer { unlink(dangling); unlink(file.directory + "/nowhere") }
        try #require(symlink(file.directory + "/nowhere", dangling) == 0)
        #expect(throws: PrivateFileError.symbolicLink(dangling)) { _ = try BtsnoopCaptureFile(path: dangling) }
        #expect(access(file.directory + "/nowhere", F_OK) != 0)
        #expect(try contents(of: target) == [1, 2, 3])
        var status = stat()
        #expect(lstat(file.path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK)
    }

    @Test("a FIFO is refused at once (the open does not wait for a reader), another user's file is refused and left as it was")
    func foreignOrSpecialRefused() throws {
        let file = try CapturePath()
        defer { file.remove() }
        try #require(mkfifo(file.path, 0o600) == 0)
        #expect(throws: PrivateFileError.notARegularFile(file.path)) { _ = try BtsnoopCaptureFile(path: file.path) }
        unlink(file.path)
        try write([1, 2, 3], to: file.path, mode: 0o666)
        let someoneElse = geteuid() &+ 1
        #expect(throws: PrivateFileError.notOwned(file.path, owner: geteuid(), user: someoneElse)) {
            _ = try PrivateFile.replace(file.path, owner: someoneElse)
        }
        #expect(throws: PrivateFileError.notOwned(file.path, owner: geteuid(), user: someoneElse)) {
            _ = try PrivateFile.openForAppending(file.path, owner: someoneElse)
        }
        #expect(try contents(of: file.path) == [1, 2, 3])
        #expect(try mode(of: file.path) == 0o666)
    }

    @Test("an existing capture of the user's is replaced by a new private file, never written into: another name of it keeps the old bytes")
    func ownFileReplaced() throws {
        let file = try CapturePath()
        defer { file.remove() }
        let other = file.directory + "/hard-link"
        defer { unlink(other) }
        try write([1, 2, 3], to: file.path, mode: 0o644)
        try #require(link(file.path, other) == 0)
        let capture = try BtsnoopCaptureFile(path: file.path)
        capture.record(reset, direction: .sent, at: 1_700_000_000_000_000)
        #expect(capture.close() == nil)
        #expect(try capturedPackets(at: file.path).packets == [reset])
        #expect(try mode(of: file.path) == 0o600)
        #expect(try contents(of: other) == [1, 2, 3])
        // No temporary file left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: file.directory).sorted() == ["capture.btsnoop", "hard-link"])
    }

    @Test("keys are zeros in the file unless included: an LTK reply and SMP Encryption Information split over two fragments")
    func keysRedactedUnlessIncluded() throws {
        let ltk = (0..<16).map { UInt8(0xA0 + $0) }
        let reply = H4Packet(type: .command, bytes: [0x1A, 0x20, 0x12, 0x40, 0x00] + ltk)
        let smp: [UInt8] = [0x11, 0x00, 0x06, 0x00, 0x06] + ltk
        let first = H4Packet(type: .acl, bytes: [0x40, 0x20, 0x07, 0x00] + smp[..<7])
        let rest = H4Packet(type: .acl, bytes: [0x40, 0x10, 0x0E, 0x00] + smp[7...])
        for keys in [KeyMaterial.redacted, .included] {
            let file = try CapturePath()
            defer { file.remove() }
            let capture = try BtsnoopCaptureFile(path: file.path, keys: keys)
            for packet in [reply, first, rest] { capture.record(packet, direction: .sent, at: 1_700_000_000_000_000) }
            #expect(capture.close() == nil)
            let captured = try capturedPackets(at: file.path).packets
            if keys == .included {
                #expect(captured == [reply, first, rest])
            } else {
                let zeros = [UInt8](repeating: 0, count: 16)
                #expect(Array(captured[0].bytes) == [0x1A, 0x20, 0x12, 0x40, 0x00] + zeros)
                #expect(Array(captured[1].payload + captured[2].payload) == [0x11, 0x00, 0x06, 0x00, 0x06] + zeros)
                #expect(captured.map(\.bytes.count) == [reply, first, rest].map(\.bytes.count))
            }
        }
    }

    /// Needs tshark: without it this fails (run Scripts/bootstrap), it is never skipped.
    @Test func wiresharkDecodesTheCapturedReset() async throws {
        let tshark = try TestRequirements.tshark()
        let file = try CapturePath()
        defer { file.remove() }
        let capture = try BtsnoopCaptureFile(path: file.path)
        capture.record(reset, direction: .sent)
        capture.record(commandComplete, direction: .received)
        // Redacted records still decode: an LTK reply, SMP Encryption Information.
        capture.record(H4Packet(type: .command, bytes: [0x1A, 0x20, 0x12, 0x40, 0x00] + [UInt8](repeating: 0xA5, count: 16)), direction: .sent)
        capture.record(H4Packet(type: .acl, bytes: [0x40, 0x00, 0x15, 0x00, 0x11, 0x00, 0x06, 0x00, 0x06] + [UInt8](repeating: 0xA5, count: 16)),
                       direction: .sent)
        #expect(capture.close() == nil)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: tshark)
        process.arguments = ["-r", file.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let state = Mutex<(exited: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))
        process.terminationHandler = { _ in
            let waiter = state.withLock { state in
                state.exited = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
        try process.run()
        // Bound the wait: kill tshark by its PID if it has not exited after 60 s.
        let pid = process.processIdentifier
        let watchdog = Task {
            try await Task.sleep(for: .seconds(60))
            if !state.withLock({ $0.exited }) { kill(pid, SIGKILL) }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let exited = state.withLock { state in
                if state.exited { return true }
                state.waiter = continuation
                return false
            }
            if exited { continuation.resume() }
        }
        watchdog.cancel()
        let text = String(decoding: output.fileHandleForReading.readToEndRetryingInterrupts(), as: UTF8.self)
        #expect(process.terminationStatus == 0)
        #expect(text.contains("Sent Reset"), "tshark said: \(text)")
        #expect(text.contains("Command Complete"), "tshark said: \(text)")
        #expect(text.contains("LE Long Term Key Request Reply"), "tshark said: \(text)")
        #expect(text.contains("Encryption Information"), "tshark said: \(text)")
        #expect(!text.contains("Malformed"), "tshark said: \(text)")
    }
}

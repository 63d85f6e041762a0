import Foundation
import Glibc
import RawbleHCITransport
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
        #expect(throws: TransportError.notFound(path: path)) { _ = try BtsnoopCaptureFile(path: path) }
    }

    @Test func aDirectoryOrAFullDeviceCannotHoldACapture() throws {
        let file = try CapturePath()
        defer { file.remove() }
        #expect(throws: TransportError.ioError(errno: EISDIR, operation: "create \(file.directory)")) {
            _ = try BtsnoopCaptureFile(path: file.directory)
        }
        // /dev/full accepts the open and fails every write with ENOSPC.
        #expect(throws: TransportError.ioError(errno: ENOSPC, operation: "write /dev/full")) {
            _ = try BtsnoopCaptureFile(path: "/dev/full")
        }
    }

    @Test func aWriteFailureIsKeptNotThrownAndLaterRecordsAreDropped() async throws {
        let file = try CapturePath()
        defer { file.remove() }
        try #require(mkfifo(file.path, 0o600) == 0)
        // A reader first (non-blocking open), so the capture's open does not wait.
        let reader = open(file.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        try #require(reader >= 0)
        let capture = try BtsnoopCaptureFile(path: file.path)
        var header = [UInt8](repeating: 0, count: 16)
        #expect(Glibc.read(reader, &header, 16) == 16)
        Glibc.close(reader)
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
        let expected = TransportError.ioError(errno: EPIPE, operation: "write \(file.path)")
        #expect(capture.failure == expected)
        #expect(capture.recordCount == 0)
        #expect(capture.close() == expected)
    }

    /// Needs tshark: without it this fails (run Scripts/bootstrap), it is never skipped.
    @Test func wiresharkDecodesTheCapturedReset() async throws {
        let tshark = try TestRequirements.tshark()
        let file = try CapturePath()
        defer { file.remove() }
        let capture = try BtsnoopCaptureFile(path: file.path)
        capture.record(reset, direction: .sent)
        capture.record(commandComplete, direction: .received)
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
    }
}

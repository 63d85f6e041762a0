import ArgumentParser
import Foundation
@testable import rawble
import RawbleKernel
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// Which capabilities a run of `rawble` keeps: the policy each command line gets, and, for the
/// commands that open no kernel socket, the sets of every thread of a running binary started
/// as nobody with CAP_NET_RAW and CAP_NET_ADMIN (ambient, as `setpriv` gives them: what a file
/// capability gives the installed binary). The kernel path's sets are proven in the VM
/// (`CapabilityVMTests`).
@Suite struct CapabilityDropTests {
    static func policy(_ arguments: [String], environment: [String: String] = [:]) throws -> CapabilityPolicy {
        CapabilityPolicy(command: try Rawble.parseAsRoot(arguments), environment: environment)
    }

    @Test("each command line's policy: what it does with which transport")
    func commandLinesMapToTheirPolicy() throws {
        let peer = "C0:B1:E0:00:00:01"
        #expect(try Self.policy(["decode", "hci", "01 03 0c 00"]) == CapabilityPolicy(use: .offline, channel: .h4))
        #expect(try Self.policy(["report", "session.csv"]) == CapabilityPolicy(use: .offline, channel: .h4))
        #expect(try Self.policy(["adapters"]) == CapabilityPolicy(use: .offline, channel: .h4))
        #expect(try Self.policy(["bonds", "list"]) == CapabilityPolicy(use: .offline, channel: .h4))
        #expect(try Self.policy(["scan"]) == CapabilityPolicy(use: .scan, channel: .raw))
        #expect(try Self.policy(["scan", "--transport", "hci1", "--btsnoop", "x.btsnoop"]) == CapabilityPolicy(use: .scan, channel: .rawWithMonitor))
        #expect(try Self.policy(["scan", "--trace", "--transport", "hci0"]) == CapabilityPolicy(use: .scan, channel: .rawWithMonitor))
        #expect(try Self.policy(["scan", "--transport", "tcp:127.0.0.1:9000"]) == CapabilityPolicy(use: .scan, channel: .h4))
        #expect(try Self.policy(["scan", "--transport", "unix:/tmp/x.sock"]) == CapabilityPolicy(use: .scan, channel: .h4))
        #expect(try Self.policy(["scan", "--transport", "serial:/dev/ttyUSB0"]) == CapabilityPolicy(use: .scan, channel: .h4))
        #expect(try Self.policy(["gatt", peer, "--transport", "user:hci0"]) == CapabilityPolicy(use: .connect, channel: .user))
        #expect(try Self.policy(["hr"]) == CapabilityPolicy(use: .connect, channel: .raw))
        #expect(try Self.policy(["read", peer, "2A37"]) == CapabilityPolicy(use: .connect, channel: .raw))
        #expect(try Self.policy(["pair", peer]) == CapabilityPolicy(use: .connect, channel: .raw))
        #expect(try Self.policy(["peripheral", "hr"]) == CapabilityPolicy(use: .serve, channel: .raw))
        // Several adapters (hr with several straps): what the most demanding of them needs,
        // every one opened before the capabilities drop.
        #expect(try Self.policy(["hr", "--all", "--transport", "tcp:127.0.0.1:9001,tcp:127.0.0.1:9002"]) == CapabilityPolicy(use: .connect, channel: .h4))
        #expect(try Self.policy(["hr", "--all", "--transport", "tcp:127.0.0.1:9001,user:hci1"]) == CapabilityPolicy(use: .connect, channel: .user))
        #expect(try Self.policy(["hr", "--all", "--transport", "user:hci1,hci0"]) == CapabilityPolicy(use: .connect, channel: .raw))
        // RAWBLE_TRANSPORT counts as --transport does; one that does not parse keeps nothing.
        #expect(try Self.policy(["scan"], environment: ["RAWBLE_TRANSPORT": "tcp:127.0.0.1:9000"]) == CapabilityPolicy(use: .scan, channel: .h4))
        #expect(try Self.policy(["scan"], environment: ["RAWBLE_TRANSPORT": "bogus"]) == CapabilityPolicy(use: .scan, channel: .h4))
    }

    // MARK: The sets of a running binary

    /// Every thread's four sets of process `pid` (`/proc/PID/task/*/status`), by thread id.
    static func threadSets(of pid: Int32) throws -> [String: [String: UInt64]] {
        let tasks = "/proc/\(pid)/task"
        var sets: [String: [String: UInt64]] = [:]
        for tid in try FileManager.default.contentsOfDirectory(atPath: tasks) {
            guard let text = try? String(contentsOfFile: "\(tasks)/\(tid)/status", encoding: .utf8) else { continue }
            var fields: [String: UInt64] = [:]
            for field in ["CapEff", "CapPrm", "CapInh", "CapAmb"] {
                fields[field] = ProcessCapabilities.mask(field, inStatus: text)
            }
            sets[tid] = fields
        }
        return sets
    }

    /// Runs `rawble arguments`; once `meet` returns (the binary reached the point it waits for:
    /// past its start, parsing or connecting; `meet` gets the read end of its standard output),
    /// reads every thread's sets, then kills it.
    static func setsWhileRunning(_ arguments: [String], meet: @escaping @Sendable (_ output: Int32) throws -> Void) async throws -> [String: [String: UInt64]] {
        try await onOwnThread {
            // A copy nobody may run, in a folder every user may enter (the checkout may be 0700).
            let folder = try TemporaryFolder.make()
            defer { TemporaryFolder.remove(folder) }
            let copy = folder.appendingPathComponent("rawble")
            try FileManager.default.copyItem(at: CLI.executable.resolvingSymlinksInPath(), to: copy)
            let state = folder.appendingPathComponent("state")
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: false)
            guard chmod(folder.path, 0o755) == 0, chmod(copy.path, 0o755) == 0, chown(state.path, 65534, 65534) == 0 else {
                throw CocoaError(.fileWriteNoPermission)
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: setpriv)
            process.arguments = launch + ["--", copy.path] + arguments
            var environment = ProcessInfo.processInfo.environment
            environment.removeValue(forKey: "RAWBLE_TRANSPORT")
            environment["XDG_STATE_HOME"] = state.path
            process.environment = environment
            process.standardInput = FileHandle.nullDevice
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            try meet(output.fileHandleForReading.fileDescriptor)
            return try threadSets(of: process.processIdentifier)
        }
    }

    /// A btsnoop capture (H4) of 20 000 Command Complete events: 1.6 MB of decoded lines.
    static func bigCapture() -> Data {
        func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
        let record = bigEndian(UInt32(7)) + bigEndian(UInt32(7)) + bigEndian(UInt32(3)) + bigEndian(UInt32(0))
            + bigEndian(Int64(0x00E0_3AB4_4A67_6000)) + [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
        var bytes = Array("btsnoop".utf8) + [0] + bigEndian(UInt32(1)) + bigEndian(UInt32(1002))
        for _ in 0..<20_000 { bytes += record }
        return Data(bytes)
    }

    /// A FIFO at a fresh path; opening it for writing returns once the binary opened it to read.
    static func fifo() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-caps-\(UUID().uuidString)").path
        guard mkfifo(path, 0o600) == 0, chown(path, 65534, 65534) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return path
    }

    /// Opens `path` (a FIFO) for writing: returns once the reader opened it, or after 30 s
    /// (the open is then released by a reader of its own, and the test fails).
    static func meetReader(_ path: String) throws {
        let opened = DispatchSemaphore(value: 0)
        let descriptor = LockedValue<Int32>(-1)
        Thread.detachNewThread {
            descriptor.set(open(path, O_WRONLY | O_CLOEXEC))
            opened.signal()
        }
        if opened.wait(timeout: .now() + 30) == .timedOut {
            let releaser = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            opened.wait()
            close(releaser)
            close(descriptor.get())
            throw POSIXError(.ETIMEDOUT)
        }
        close(descriptor.get())
    }

    static let setpriv = "/usr/bin/setpriv"
    /// As nobody, with exactly CAP_NET_RAW and CAP_NET_ADMIN (inheritable and ambient, so they
    /// are permitted and effective after exec).
    static let launch = ["--reuid=65534", "--regid=65534", "--clear-groups",
                         "--inh-caps=+net_raw,+net_admin", "--ambient-caps=+net_raw,+net_admin"]

    /// This process may start the binary as nobody with the two capabilities: it is root and
    /// has util-linux's `setpriv`.
    static var mayStartCapable: Bool {
        geteuid() == 0 && (ThreadCapabilities.current?.permitted ?? []).isSuperset(of: .bluetooth)
            && FileManager.default.isExecutableFile(atPath: setpriv)
    }


    static func expectNoCapability(_ sets: [String: [String: UInt64]], _ what: String) {
        #expect(!sets.isEmpty, "\(what): no thread read")
        for (tid, fields) in sets {
            for field in ["CapEff", "CapPrm", "CapInh", "CapAmb"] {
                #expect(fields[field] == 0, "\(what): thread \(tid) \(field) = \(String(fields[field] ?? 0xDEAD, radix: 16))")
            }
        }
    }

    @Test("decode and report of a file, scan on unix:: no thread holds any capability while it runs")
    func offlineAndH4RunsHoldNothing() async throws {
        guard Self.mayStartCapable else {
            print("CapabilityDropTests: SKIPPED the running binary's sets: starting it as nobody with CAP_NET_RAW and CAP_NET_ADMIN needs root and setpriv here; the VM test proves them")
            return
        }
        // The control: the same launch gives a program both capabilities in every set but the
        // bounding one's rest (else all-zero sets below would prove nothing).
        let control = try await runToEnd(Self.setpriv, Self.launch + ["--", "/bin/cat", "/proc/self/status"])
        let status = String(decoding: control.output, as: UTF8.self)
        for field in ["CapInh", "CapPrm", "CapEff", "CapAmb"] {
            #expect(ProcessCapabilities.mask(field, inStatus: status) == Capabilities.bluetooth.rawValue, "\(field): \(status)")
        }

        // decode: once its first line is read it is decoding, and it blocks writing the rest
        // (far more than a pipe holds) until it is killed.
        let folder = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(folder) }
        let capture = folder.appendingPathComponent("big.btsnoop")
        try Self.bigCapture().write(to: capture)
        guard chmod(folder.path, 0o755) == 0, chmod(capture.path, 0o644) == 0 else { throw CocoaError(.fileWriteNoPermission) }
        let decoding = try await Self.setsWhileRunning(["decode", "btsnoop", capture.path]) { output in
            var entry = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            var byte: UInt8 = 0
            guard poll(&entry, 1, 30_000) == 1, read(output, &byte, 1) == 1 else { throw POSIXError(.ETIMEDOUT) }
        }
        Self.expectNoCapability(decoding, "decode btsnoop")

        let session = try Self.fifo()
        defer { unlink(session) }
        let reporting = try await Self.setsWhileRunning(["report", session]) { _ in try Self.meetReader(session) }
        Self.expectNoCapability(reporting, "report")

        // scan on unix:PATH: the binary's NIO threads exist once it connected.
        let path = "/tmp/rawble-caps-\(UUID().uuidString.prefix(8)).sock"
        let listener = try Self.listen(path)
        defer { close(listener); unlink(path) }
        let scanning = try await Self.setsWhileRunning(["scan", "--transport", "unix:\(path)", "--duration", "30"]) { _ in
            var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 30_000) == 1 else { throw POSIXError(.ETIMEDOUT) }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            close(connection)
        }
        #expect(scanning.count > 1, "scan: the binary's threads \(scanning.keys.sorted())")
        Self.expectNoCapability(scanning, "scan --transport unix:")
    }

    static func listen(_ path: String) throws -> Int32 {
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
        guard bound, chmod(path, 0o777) == 0, Glibc.listen(listener, 1) == 0 else {
            close(listener)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        return listener
    }
}

/// A value one thread sets and another reads after a semaphore orders them.
private final class LockedValue<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func set(_ new: Value) { lock.withLock { value = new } }
    func get() -> Value { lock.withLock { value } }
}

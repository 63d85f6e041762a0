import Foundation
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// No library code blocks a thread where an async caller may be running: a blocking call on
/// one of Swift's cooperative threads holds it from every other task of the program, and the
/// pool has as many threads as cores (two on a 2-core machine). Blocking work goes to a thread
/// of its own (RawbleKernel's `onBlockingThread`, RawbleTestPeers' `onOwnThread`). The files
/// that still block say where, and why it is not the pool's thread; a new blocking call
/// elsewhere fails here. (docs/testing.md, "The cooperative pool", has the measurements.)
@Suite struct BlockingCallTests {
    /// Calls that block the calling thread (a wait, a sleep, a poll, a child's reaping).
    static let blockingCalls = [
        "usleep(", "nanosleep(", "Thread.sleep", "DispatchSemaphore", "DispatchGroup", "waitpid(", "waitUntilExit",
        " poll(", "Socket.poll(", "syncShutdownGracefully", ".wait(timeout",
    ]

    /// Where a blocking call stays, and on which thread it runs.
    static let allowed: [String: String] = [
        "RawbleKernel/Privileges.swift":
            "the capability keeper's own thread waits for jobs; a caller waits for one syscall the keeper runs, never for the pool",
        "RawbleKernel/KernelManagement.swift":
            "request(_:timeout:) is synchronous: async callers reach it through onBlockingThread",
        "RawbleKernel/BluetoothSocket.swift": "the poll KernelManagement.request uses",
        "RawbleKernel/KernelRawChannel.swift":
            "a write waits for room in a full socket buffer (bounded) on the adapter's event loop, where the send pump runs",
        "RawbleTestPeers/OwnThread.swift": "runToEnd waits for a process inside onOwnThread",
        "RawbleTestPeers/PythonReference.swift": "waits for the Python reference inside onOwnThread",
        "RawbleTestPeers/ChildProcess.swift": "terminate(pid:stdinFD:) runs on a thread of its own (BumblePeer.stop(), terminated(_:))",
        "RawbleTestPeers/FileChanges.swift": "waitForChanges(of:timeout:until:) polls its inotify descriptor inside onOwnThread",
    ]

    @Test("blocking calls only where a thread of their own (or the keeper's, or the loop's) runs them")
    func blockingCallsStayOffTheCooperativePool() throws {
        for module in try ModuleBoundaryTests.libraryModules() {
            for (file, text) in try ModuleBoundaryTests.code(of: module) where Self.allowed["\(module)/\(file)"] == nil {
                for line in text.split(separator: "\n") {
                    for call in Self.blockingCalls where line.contains(call) {
                        Issue.record("\(module)/\(file) blocks its thread (\(call)): \(line.trimmingCharacters(in: .whitespaces))")
                    }
                }
            }
        }
    }

    @Test("no blocking work on Dispatch's global queue, in the binary or the tests: on Linux its threads are the pool Swift's tasks run on (four CLI runs in one test, each reading its pipes there, held every task of the test process for 5 s)")
    func nothingBlocksOnDispatchsGlobalQueue() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var found: [String] = []
        for folder in ["Sources", "Tests"] {
            let base = root.appendingPathComponent(folder)
            guard let files = FileManager.default.enumerator(atPath: base.path) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: base.appendingPathComponent(file), encoding: .utf8)
                for line in text.split(separator: "\n") where line.contains("DispatchQueue" + ".global(") && !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                    found.append("\(folder)/\(file): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(found.isEmpty, "blocking work goes to a thread of its own (onOwnThread, Thread.detachNewThread): \(found)")
    }

    @Test("every file allowed to block still does (the list names no stale file)")
    func theAllowedFilesStillBlock() throws {
        for path in Self.allowed.keys.sorted() {
            let parts = path.split(separator: "/").map(String.init)
            let text = try #require(try ModuleBoundaryTests.code(of: parts[0])[parts[1]], "\(path) is gone")
            #expect(Self.blockingCalls.contains { text.contains($0) }, "\(path) no longer blocks: drop it from the list")
        }
    }
}

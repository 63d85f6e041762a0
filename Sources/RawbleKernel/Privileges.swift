#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@preconcurrency import Dispatch
import CBluetooth
import Synchronization
import SystemPackage

/// Linux capabilities as a set of bits, in the kernel's numbering (bit N is capability N, as
/// the `CapEff:`/`CapPrm:` masks of `/proc/PID/status` show them).
public struct Capabilities: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// CAP_NET_ADMIN (12): powering an adapter on (HCIDEVUP, management Set Powered), a trusted
    /// management socket (bound with it), the HCI user channel's bind.
    public static let netAdmin = Capabilities(rawValue: 1 << 12)
    /// CAP_NET_RAW (13): the monitor channel's bind, the raw channel's event filter (set with
    /// it) and every raw-channel send of a command outside the kernel's security filter.
    public static let netRaw = Capabilities(rawValue: 1 << 13)
    /// The two that rawble's kernel path uses.
    public static let bluetooth: Capabilities = [.netRaw, .netAdmin]

    /// `CAP_NET_RAW, CAP_NET_ADMIN`, or `none`; other bits as their numbers.
    public var description: String {
        var names: [String] = []
        if contains(.netRaw) { names.append("CAP_NET_RAW") }
        if contains(.netAdmin) { names.append("CAP_NET_ADMIN") }
        let others = subtracting(.bluetooth).rawValue
        for bit in 0..<64 where others & (1 << UInt64(bit)) != 0 { names.append("capability \(bit)") }
        return names.isEmpty ? "none" : names.joined(separator: ", ")
    }
}

/// The capability sets of one thread (Linux keeps them per thread; a new thread starts with
/// its creator's).
public struct ThreadCapabilities: Hashable, Sendable {
    public var effective: Capabilities
    public var permitted: Capabilities
    public var inheritable: Capabilities

    public init(effective: Capabilities, permitted: Capabilities, inheritable: Capabilities) {
        self.effective = effective
        self.permitted = permitted
        self.inheritable = inheritable
    }

    /// The calling thread's sets (capget); `nil` when the kernel refuses to say.
    public static var current: ThreadCapabilities? {
        var effective: UInt64 = 0
        var permitted: UInt64 = 0
        var inheritable: UInt64 = 0
        guard rawble_capget(&effective, &permitted, &inheritable) == 0 else { return nil }
        return ThreadCapabilities(effective: Capabilities(rawValue: effective), permitted: Capabilities(rawValue: permitted),
                                  inheritable: Capabilities(rawValue: inheritable))
    }

    /// Sets the calling thread's sets (capset); the errno when the kernel refuses.
    static func set(effective: Capabilities, permitted: Capabilities) -> Int32? {
        rawble_capset(effective.rawValue, permitted.rawValue, 0) == 0 ? nil : errno
    }
}

/// Where rawble's capabilities live while it runs, so that nothing it parses from a file or a
/// peer runs with one (the plan per command and transport is ``CapabilityPolicy``'s).
///
/// Linux keeps capabilities per thread, and a thread starts with its creator's. So ``start(keeping:)``
/// runs first thing, while the process has its one thread: it gives what the run needs to
/// one thread of its own, the *keeper*, which runs nothing but the privileged system calls
/// handed to it (``perform(_:_:)``), and empties every set of the main thread, so every
/// other thread (Swift's, NIO's, Dispatch's) starts with none. The keeper raises a capability
/// into its effective set only around one call, and ``keepOnly(_:)`` drops the rest from its
/// permitted set once the policy says the last call that needs them is done; with nothing
/// left, no thread of the process holds a capability any more.
///
/// Without ``start(keeping:)`` (a library user, the tests) ``perform(_:_:)`` runs the call on
/// the calling thread, with whatever that thread has. A run as root (effective user id 0) is
/// left as it is: uid 0 owns the system's files whatever its capability sets hold, so emptying
/// them would protect little, and would cost root what users expect of `sudo` (a capture
/// written into their home directory needs CAP_DAC_OVERRIDE).
public enum Privileges {
    private static let keeper = Mutex<CapabilityKeeper?>(nil)
    private static let started = Mutex(false)

    /// Lowers the calling thread's effective set and empties its inheritable and ambient sets,
    /// keeping the permitted set for ``start(keeping:)``: for the first moment of `main`, before
    /// the arguments are parsed. A file capability `=ep` raises the effective set at exec.
    public static func lower() {
        guard geteuid() != 0 else { return }
        _ = rawble_clear_ambient()
        guard let now = ThreadCapabilities.current,
              !now.effective.isEmpty || !now.inheritable.isEmpty else { return }
        _ = ThreadCapabilities.set(effective: [], permitted: now.permitted)
    }

    /// Keeps `needed` (what of it this process has) on the keeper thread and empties every
    /// set of the calling thread, ambient included. Call it once, on the main thread, before
    /// any other thread exists (``otherThreadCount`` says whether one does).
    /// - Returns: the capabilities kept (`[]` when the run needs none or the process has none;
    ///   `needed` as root, which is left as it is).
    /// - Throws: the errno of a capset the kernel refused (the process may hold more than it
    ///   should then, so the caller stops).
    @discardableResult
    public static func start(keeping needed: Capabilities) throws(Errno) -> Capabilities {
        guard geteuid() != 0 else { return needed }
        started.withLock { $0 = true }
        _ = rawble_clear_ambient()
        guard let now = ThreadCapabilities.current else { throw Errno(rawValue: errno) }
        let kept = now.permitted.intersection(needed)
        if !kept.isEmpty {
            let keeper = try CapabilityKeeper.start(keeping: kept)
            self.keeper.withLock { $0 = keeper }
        }
        if now != ThreadCapabilities(effective: [], permitted: [], inheritable: []),
           let failure = ThreadCapabilities.set(effective: [], permitted: []) {
            throw Errno(rawValue: failure)
        }
        return kept
    }

    /// What privileged calls can use now: the keeper's permitted set after ``start(keeping:)``,
    /// else the calling thread's effective set.
    public static var available: Capabilities {
        if started.withLock({ $0 }) {
            return keeper.withLock { $0 }?.held ?? []
        }
        return ThreadCapabilities.current?.effective ?? .bluetooth
    }

    /// Runs `body` (one system call and what it needs, nothing that parses input) with `needed`
    /// in the effective set: on the keeper, raised just for it, and waits for it. Without a
    /// keeper (not started, or the run needs no capability), on the calling thread as it is:
    /// the kernel then answers EPERM where the capability is missing, as for a process without it.
    public static func perform<T, Failure: Error>(_ needed: Capabilities, _ body: () throws(Failure) -> T) throws(Failure) -> T {
        guard let keeper = keeper.withLock({ $0 }) else { return try body() }
        return try keeper.perform(needed, body)
    }

    /// Drops from the keeper's permitted set everything but `capabilities`, after the calls
    /// already handed to it. Nothing can raise a dropped capability again in this process.
    public static func keepOnly(_ capabilities: Capabilities) {
        keeper.withLock { $0 }?.keepOnly(capabilities)
    }

    /// The run is over, or never got to its policy (help, version, a completion script, a
    /// usage error): nothing is kept any more, on any thread. Call it on the main thread.
    public static func finish() {
        guard started.withLock({ $0 }) else {
            _ = try? start(keeping: [])
            return
        }
        keepOnly([])
    }

    /// How many threads besides the calling one this process has (from `/proc/self/task`),
    /// or `nil` when it cannot be read.
    public static var otherThreadCount: Int? {
        guard let directory = opendir("/proc/self/task") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.first?.isNumber == true { count += 1 }
        }
        return count - 1
    }
}

/// One call handed to the keeper. The caller fills it and waits on `done`; the keeper takes the
/// body, runs it, lets go of it and only then signals: the semaphore orders every access, and
/// the caller's closure (not escaping, see `perform`) is no longer referenced when it resumes.
private final class Job: @unchecked Sendable {
    let needed: Capabilities
    private var body: (() -> Void)?
    let done = DispatchSemaphore(value: 0)

    init(needed: Capabilities, body: @escaping () -> Void) {
        self.needed = needed
        self.body = body
    }

    /// The body, once; the job holds it no longer.
    func take() -> (() -> Void)? {
        defer { body = nil }
        return body
    }
}

/// A job's result, written by the keeper before it signals and read by the caller after.
private final class ResultBox<Value, Failure: Error>: @unchecked Sendable {
    var value: Result<Value, Failure>?
}

/// The one thread that holds capabilities: runs jobs one at a time, each with the capabilities
/// it asked for raised just around it.
final class CapabilityKeeper: Sendable {
    private struct State {
        var jobs: [Job] = []
        var held: Capabilities
    }
    private let state: Mutex<State>
    private let work = DispatchSemaphore(value: 0)

    private init(held: Capabilities) {
        state = Mutex(State(held: held))
    }

    var held: Capabilities { state.withLock { $0.held } }

    /// Starts the thread (it inherits the caller's sets) and waits until it set its own to
    /// `kept` permitted, nothing effective.
    static func start(keeping kept: Capabilities) throws(Errno) -> CapabilityKeeper {
        let keeper = CapabilityKeeper(held: kept)
        let starting = KeeperStart(keeper: keeper)
        let context = Unmanaged.passRetained(starting).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let start = Unmanaged<KeeperStart>.fromOpaque(argument).takeRetainedValue()
            _ = rawble_set_thread_name("rawble-caps")
            if let failed = ThreadCapabilities.set(effective: [], permitted: start.keeper.held) {
                start.failure.withLock { $0 = failed }
                start.ready.signal()
                return nil
            }
            start.ready.signal()
            start.keeper.run()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<KeeperStart>.fromOpaque(context).release()
            throw Errno(rawValue: created)
        }
        pthread_detach(thread)
        starting.ready.wait()
        if let failed = starting.failure.withLock({ $0 }) { throw Errno(rawValue: failed) }
        return keeper
    }

    /// Runs `body` on the keeper with `needed` (what of it is held) effective, and returns its
    /// result once it ran.
    func perform<T, Failure: Error>(_ needed: Capabilities, _ body: () throws(Failure) -> T) throws(Failure) -> T {
        let outcome = withoutActuallyEscaping(body) { body in
            let result = ResultBox<T, Failure>()
            run(needed) { result.value = Result { () throws(Failure) -> T in try body() } }
            return result.value
        }
        guard let outcome else { return try body() }
        return try outcome.get()
    }

    /// Runs `body` on the keeper with `needed` (what of it is held) effective; returns when it
    /// ran and the keeper let go of it.
    private func run(_ needed: Capabilities, _ body: @escaping () -> Void) {
        let job = Job(needed: needed, body: body)
        state.withLock { $0.jobs.append(job) }
        work.signal()
        job.done.wait()
    }

    /// Drops all but `capabilities` from the permitted set (a job like the others, so it
    /// follows every call already handed over); returns when done.
    func keepOnly(_ capabilities: Capabilities) {
        run([]) { [self] in
            let kept = state.withLock { state in
                state.held.formIntersection(capabilities)
                return state.held
            }
            _ = ThreadCapabilities.set(effective: [], permitted: kept)
        }
    }

    /// The thread's loop: one job at a time. With nothing held it stays, parked, holding
    /// nothing: a job handed to it then runs as on any other thread.
    private func run() {
        while true {
            work.wait()
            guard let job = state.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) else { continue }
            execute(job)
            job.done.signal()
        }
    }

    /// Runs `job`'s body with what it needs raised, then lowers it; the body is let go of when
    /// this returns, before the caller is signalled.
    private func execute(_ job: Job) {
        guard let body = job.take() else { return }
        let raised = job.needed.intersection(held)
        if !raised.isEmpty { _ = ThreadCapabilities.set(effective: raised, permitted: held) }
        body()
        if !raised.isEmpty { _ = ThreadCapabilities.set(effective: [], permitted: held) }
    }
}

private final class KeeperStart: Sendable {
    let keeper: CapabilityKeeper
    /// Signalled once the thread set its sets (or failed to: `failure`).
    let ready = DispatchSemaphore(value: 0)
    let failure = Mutex<Int32?>(nil)

    init(keeper: CapabilityKeeper) {
        self.keeper = keeper
    }
}

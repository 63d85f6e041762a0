import NIOPosix

/// Runs `work`, which blocks its thread (a management request waiting for the kernel's answer,
/// an adapter's power-on, a user channel's bind while the kernel opens the controller), on
/// SwiftNIO's pool for blocking work (`NIOThreadPool.singleton`) and returns its result. An
/// async caller then waits suspended: a blocking call made directly on one of Swift's
/// cooperative threads holds that thread from every other task of the program, and there are
/// only as many as cores (two on a 2-core machine). `operation` names the work in the error
/// thrown when the caller is cancelled before it started (it then never runs).
package func onBlockingThread<T: Sendable>(
    _ operation: String, _ work: @escaping @Sendable () throws(KernelError) -> T
) async throws(KernelError) -> T {
    let result: Result<T, KernelError>
    do {
        result = try await NIOThreadPool.singleton.runIfActive { Result { () throws(KernelError) -> T in try work() } }
    } catch {
        throw .system(operation: operation, errno: .canceled)
    }
    return try result.get()
}

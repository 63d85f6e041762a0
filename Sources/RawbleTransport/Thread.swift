#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

private final class ThreadBody {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

/// Runs `body` on a new detached POSIX thread (no Foundation). Returns an errno on failure.
@discardableResult
func spawnThread(_ body: @escaping @Sendable () -> Void) -> Int32 {
    let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { raw in
        guard let raw else { return nil }
        let box = Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue()
        box.body()
        return nil
    }, context)
    if result != 0 {
        Unmanaged<ThreadBody>.fromOpaque(context).release()
        return result
    }
    pthread_detach(thread)
    return 0
}

extension Duration {
    /// The duration as a `poll(2)` timeout: whole milliseconds rounded up, from 1 to `Int32.max`
    /// (no overflow, whatever the duration).
    var pollMilliseconds: Int32 {
        let milliseconds = (self / .milliseconds(1)).rounded(.up)
        return Int32(max(1, min(Double(Int32.max), milliseconds)))
    }
}

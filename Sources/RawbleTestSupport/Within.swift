/// Thrown by ``within(seconds:_:)`` when the operation did not finish in time.
public struct TestTimeout: Error, Hashable, Sendable {
    public init() {}
}

/// Runs `operation`, failing with ``TestTimeout`` after `seconds`: bounds every wait a test
/// does on a stream or a peer, so a broken peer fails the test instead of hanging it.
public func within<T: Sendable>(
    seconds: Double = 10, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TestTimeout()
        }
        guard let first = try await group.next() else { throw TestTimeout() }
        group.cancelAll()
        return first
    }
}

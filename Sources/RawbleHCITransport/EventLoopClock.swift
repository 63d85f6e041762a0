import NIOCore

/// A clock whose sleeps are timers of a NIO event loop. A task that prefers the loop's
/// ``EventLoopTaskExecutor`` and sleeps on this clock wakes on the loop's own thread with no
/// other thread involved: `Task.sleep` on the default clock goes through Dispatch's timer
/// thread and a wake-up of the loop every time, which for a 1 kHz sender (`rawble peripheral hr
/// --rate 1000`) cost more CPU than the notification it paces. Instants are the continuous
/// clock's, so deadlines mix with `ContinuousClock.now`.
public struct EventLoopClock: Clock {
    public typealias Duration = Swift.Duration
    public typealias Instant = ContinuousClock.Instant

    /// The loop whose timers wake the sleepers.
    public let eventLoop: any EventLoop

    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public var now: Instant { .now }

    public var minimumResolution: Duration { .microseconds(1) }

    /// Sleeps until `deadline` on a loop timer; throws `CancellationError` when the task is
    /// cancelled first (the timer is cancelled with it). A deadline already past returns at once.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let delay = Instant.now.duration(to: deadline)
        guard delay > .zero else { return }
        let (seconds, attoseconds) = delay.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let wait: TimeAmount = nanoseconds.overflow ? .hours(24 * 365) : .nanoseconds(nanoseconds.partialValue &+ attoseconds / 1_000_000_000)
        let timer = eventLoop.scheduleTask(in: wait) {}
        do {
            try await withTaskCancellationHandler {
                try await timer.futureResult.get()
            } onCancel: {
                timer.cancel()
            }
        } catch {
            throw CancellationError()
        }
    }
}

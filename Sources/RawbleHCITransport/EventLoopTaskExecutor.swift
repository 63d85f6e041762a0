import NIOCore

/// A NIO event loop as a Swift concurrency `TaskExecutor`: a task that prefers it
/// (`withTaskExecutorPreference(_:operation:)`, `Task(executorPreference:)`) runs its
/// nonisolated code on the loop's thread. A consumer of values produced on a transport's loop
/// then takes them with no thread hop: each value resumes it on the thread that is already
/// running.
public final class EventLoopTaskExecutor: TaskExecutor {
    /// The loop the jobs run on.
    public let eventLoop: any EventLoop

    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}

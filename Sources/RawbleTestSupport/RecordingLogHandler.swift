import Logging
import Synchronization

/// A swift-log handler that keeps the records it is given, for tests of what a component logs:
/// `Logger(label: "test") { _ in log }`. Copies share one record list (a `Logger` copies its
/// handler), and the level applies as swift-log's own handlers apply theirs.
public struct RecordingLogHandler: LogHandler {
    /// One record: its level and message.
    public struct Record: Sendable, Equatable {
        public var level: Logger.Level
        public var message: String
    }

    private final class Records: Sendable { let value = Mutex<[Record]>([]) }
    private let box = Records()
    private let onRecord: (@Sendable (Record) -> Void)?

    /// Records at `level` and above are kept (swift-log's default: `info`); `onRecord`, when
    /// given, sees each one as it is logged, on the logging thread (how a test acts at an exact
    /// point of a component's work, e.g. the moment a host has sent a command and not yet
    /// waited for its answer).
    public init(level: Logger.Level = .info, onRecord: (@Sendable (Record) -> Void)? = nil) {
        logLevel = level
        self.onRecord = onRecord
    }

    /// Every record kept so far, in order.
    public var records: [Record] { box.value.withLock { $0 } }
    /// Their messages.
    public var lines: [String] { records.map(\.message) }

    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let record = Record(level: event.level, message: "\(event.message)")
        box.value.withLock { $0.append(record) }
        onRecord?(record)
    }
}

import RawbleWire

/// The kinds of RR artifact Lipponen & Tarvainen (2019) tell apart.
public enum ArtifactKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// An ectopic beat: a short interval followed by a long one (or the reverse); the beat is
    /// moved halfway between its neighbours.
    case ectopic
    /// A missed beat: an interval about twice the local median; split in two.
    case missed
    /// An extra beat: an interval that with the next one makes about the local median; the two
    /// are merged (the beat between them is dropped).
    case extra
    /// A long or short interval that is none of the above; its beat is moved halfway between
    /// its neighbours.
    case longShort

    public var description: String { rawValue }
}

/// How many artifacts of each kind a correction found.
public struct ArtifactCounts: Sendable, Hashable {
    public var ectopic = 0
    public var missed = 0
    public var extra = 0
    public var longShort = 0

    public init() {}

    /// All kinds together.
    public var total: Int { ectopic + missed + extra + longShort }

    /// The count of one kind.
    public subscript(kind: ArtifactKind) -> Int {
        get {
            switch kind {
            case .ectopic: ectopic
            case .missed: missed
            case .extra: extra
            case .longShort: longShort
            }
        }
        set {
            switch kind {
            case .ectopic: ectopic = newValue
            case .missed: missed = newValue
            case .extra: extra = newValue
            case .longShort: longShort = newValue
            }
        }
    }

    /// Adds `other`'s counts to these.
    public mutating func add(_ other: ArtifactCounts) {
        for kind in ArtifactKind.allCases { self[kind] += other[kind] }
    }
}

/// One artifact: the input interval it was found on (its position in the series given to the
/// correction, so a plot of the raw tachogram can mark it) and its kind.
public struct Artifact: Sendable, Hashable {
    /// The index of the RR interval, in the input series, whose beat (the one ending it) was
    /// classified as an artifact.
    public var index: Int
    public var kind: ArtifactKind

    public init(index: Int, kind: ArtifactKind) {
        self.index = index
        self.kind = kind
    }
}

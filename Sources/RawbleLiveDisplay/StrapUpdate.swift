/// What one strap's tile shows, as it changes: the one value the live display knows about a
/// strap. Each field left `nil` keeps what the tile showed before, so a caller sends only
/// what changed (a new bpm, a link that dropped).
public struct StrapUpdate: Sendable, Hashable {
    /// The strap's stable key, one tile per key (its Bluetooth address, as the CLI sends it).
    public var id: String
    /// The strap's name as a person knows it; the tile shows ``id`` until one is given.
    public var name: String?
    /// The heart rate just measured, in beats per minute.
    public var bpm: Int?
    /// When ``bpm`` was measured, in seconds since 1970 (the caller's clock): the bpm joins the
    /// tile's trend at that time (a bpm without one is shown, not drawn).
    public var time: Double?
    /// The heart-rate zone of ``bpm`` (0: below zone 1, then 1 to 5), which colours the tile;
    /// sent with each bpm (a bpm without one leaves the tile without a zone colour).
    public var zone: Int?
    /// The strap's battery level in percent.
    public var battery: Int?
    /// Whether values can arrive now.
    public var link: LinkState?

    /// An update of the tile `id`: the fields given change, the others stay.
    public init(id: String, name: String? = nil, bpm: Int? = nil, time: Double? = nil, zone: Int? = nil,
                battery: Int? = nil, link: LinkState? = nil) {
        self.id = id
        self.name = name
        self.bpm = bpm
        self.time = time
        self.zone = zone
        self.battery = battery
        self.link = link
    }
}

/// A strap's link as its tile says it.
public enum LinkState: String, Sendable, Hashable, CaseIterable {
    /// Values arrive.
    case connected
    /// The link dropped; the strap is looked for again.
    case reconnecting
    /// The link dropped and no reconnection follows.
    case lost
    /// The strap's run ended as asked (its `--count` reached).
    case ended
}

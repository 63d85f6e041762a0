import ArgumentParser

/// Which straps a command that follows several (`hr`, `ecg`) was asked for, checked alike for
/// both: devices named, or `--all` up to `--max`, and file names with `{name}` or `{address}`
/// only when there are several.
struct StrapGroupChoice {
    /// The most straps one run follows.
    static let maxStraps = 64

    var devices: [String]
    var all: Bool
    var max: Int?
    /// Whether an option ends each strap's run (`--count`, `--duration`): with `--all` the run
    /// then needs `--max`, how many straps to wait for.
    var ends: Bool
    /// Those options' names, as the error line says them.
    var endNames: String
    var csv: String?
    var jsonl: String?

    /// Whether the run follows several straps (the table, the strap fields).
    var isGroup: Bool { all || devices.count > 1 }

    func validate() throws {
        if all, !devices.isEmpty { throw ValidationError("--all follows every strap in range: leave out the devices named, or --all") }
        if max != nil, !all { throw ValidationError("--max goes with --all (named straps are all followed)") }
        if let max, !(1...Self.maxStraps).contains(max) { throw ValidationError("--max must be between 1 and \(Self.maxStraps)") }
        if all, ends, max == nil {
            throw ValidationError("\(endNames) with --all needs --max: how many straps to wait for before the run can end")
        }
        if devices.count > Self.maxStraps { throw ValidationError("at most \(Self.maxStraps) straps at once") }
        if devices.contains(where: \.isEmpty) { throw ValidationError("a device named is empty") }
        if !isGroup, [csv, jsonl].contains(where: { $0.map(GroupFiles.isTemplate) == true }) {
            throw ValidationError("{name} and {address} in a file name go with several straps (or --all)")
        }
    }
}

/// "Did you mean" for a mistyped name: the closest of the known names, when it is close enough
/// to be a typo (at most one edit in four letters, two in longer words; a swap of two neighbours
/// counts as one), else none.
enum Suggestion {
    static func closest(to typed: String, among names: [String]) -> String? {
        let typed = typed.lowercased()
        let allowed = typed.count <= 4 ? 1 : 2
        var best: (name: String, distance: Int)?
        for name in names {
            let distance = editDistance(Array(typed), Array(name.lowercased()))
            if distance <= allowed, distance < (best?.distance ?? .max) { best = (name, distance) }
        }
        return best?.name
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and adjacent
    /// transpositions, each costing one (`sacn` is one edit from `scan`).
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}

extension BuildStamp {
    /// What `rawble --version` prints: the version, then the commit it was built from —
    /// `0.1.0 (commit 1a2b3c4d5e6f)`, with `, modified` when tracked files differed from that
    /// commit, or `0.1.0 (unknown commit)` when it was built outside a git checkout — so a bug
    /// report names exactly the code that ran.
    static var versionText: String {
        guard let commit else { return "\(version) (unknown commit)" }
        return "\(version) (commit \(commit)\(modified ? ", modified" : ""))"
    }
}

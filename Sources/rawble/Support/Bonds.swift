#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import RawbleHost
import RawbleSMP
import RawbleStack
import RawbleTransport
import RawbleWire

// What the CLI keeps between runs for rawble's own host (issue 24): the bonds, and the local
// identity they belong to. Every use of the bond store goes through `openBondStore`.

/// The folder rawble keeps per-user state in: `$XDG_STATE_HOME/rawble`, else
/// `~/.local/state/rawble` (the one the bond store uses); `nil` when neither variable names an
/// absolute path.
func stateDirectory(environment: [String: String]) -> String? {
    if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/rawble" }
    if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/state/rawble" }
    return nil
}

/// The bonds of `identity` (rawble's own host's identity address): the one place the CLI
/// opens the bond store.
/// Bonds are kept in RawbleStack's ``FileBondStore`` (in the state folder); for this run only
/// when there is none (no HOME or XDG_STATE_HOME).
func openBondStore(environment: [String: String], identity: DeviceAddress) throws -> any BondStore {
    guard let directory = FileBondStore.defaultDirectory(environment: environment) else { return InMemoryBondStore() }
    return FileBondStore(directory: directory, localIdentity: identity)
}

/// rawble's own host's identity on air: a random static address and an Identity Resolving
/// Key, the same on every run so peers' bonds keep matching. Kept per user in one small file,
/// `identity` in the state folder (mode 0600), made on first use.
struct LocalIdentity: Equatable {
    var address: BluetoothAddress
    var identityResolvingKey: UInt128

    var deviceAddress: DeviceAddress { DeviceAddress(address, type: .random) }
    var pairingIdentity: PairingIdentity {
        PairingIdentity(identityResolvingKey: identityResolvingKey, address: deviceAddress)
    }

    /// The identity file's path, or `nil` with no state folder.
    static func path(environment: [String: String]) -> String? {
        stateDirectory(environment: environment).map { $0 + "/identity" }
    }

    /// The identity kept for this user, made and kept on first use. A file that is not an
    /// identity, or that rawble refuses (a symbolic link, not a regular file, another user's,
    /// readable or writable by others, in a folder others can write), is a one-line
    /// ``CLIError`` and is left as it is; when there is no state folder (no HOME), or it
    /// cannot be read or written, a fresh identity for this run only, with why (for a log
    /// line): rawble still works, its bonds do not last.
    static func load(environment: [String: String]) throws -> (identity: LocalIdentity, notKept: String?) {
        guard let path = Self.path(environment: environment) else {
            return (generate(), "no HOME or XDG_STATE_HOME: rawble's identity and bonds last for this run only")
        }
        do {
            if let existing = try readFile(path) { return (existing, nil) }
            let fresh = generate()
            try keep(fresh, at: path)
            // Another rawble may have made one meanwhile: the file's is the one.
            return (try readFile(path) ?? fresh, nil)
        } catch let error as CLIError where error.status == .malformedInput || error.message.hasPrefix(refusalPrefix) {
            throw error
        } catch {
            return (generate(), "\(error): rawble's identity and bonds last for this run only")
        }
    }

    /// How a refused identity file's line begins.
    static let refusalPrefix = "rawble's identity is refused: "

    /// The identity at `path`; `nil` when there is no file. The file holds a key (the IRK):
    /// it is read only when private, as the bond store reads bonds (``PrivateFile/readPrivate(_:limit:owner:)``).
    static func readFile(_ path: String, owner: UInt32 = geteuid()) throws -> LocalIdentity? {
        let read: [UInt8]?
        do {
            read = try PrivateFile.readPrivate(path, limit: 4096, owner: owner)
        } catch .system(_, _, let code) {
            throw CLIError(code == EACCES ? .permission : .cannotOpen,
                           "cannot read rawble's identity \(path): \(String(cString: strerror(code)))",
                           fix: "check the file's permissions (it is the user's own, mode 0600)")
        } catch let refusal {
            let status: ExitStatus = switch refusal {
            case .notOwned, .tooOpen: .permission
            default: .cannotOpen
            }
            throw CLIError(status, refusalPrefix + refusal.description)
        }
        guard let bytes = read else { return nil }
        guard bytes.count <= 4096 else { throw malformed(path, "it is longer than 4096 bytes") }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw malformed(path, "it is not text") }
        return try parse(text, path: path)
    }

    /// The identity in a file's text: `address AA:BB:…` and `irk` with 32 hex digits, one per
    /// line; `#` comments and blank lines ignored.
    static func parse(_ text: String, path: String) throws -> LocalIdentity {
        var address: BluetoothAddress?
        var irk: UInt128?
        for line in text.split(separator: "\n") {
            let trimmed = String(line.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let fields = trimmed.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 2 else { throw malformed(path, "the line '\(trimmed)' is not a name and a value") }
            switch fields[0] {
            case "address":
                guard let parsed = BluetoothAddress(String(fields[1])), parsed.randomKind == .staticAddress else {
                    throw malformed(path, "'\(fields[1])' is not a random static address")
                }
                address = parsed
            case "irk":
                guard fields[1].count == 32, let parsed = UInt128(fields[1], radix: 16) else {
                    throw malformed(path, "the irk is not 32 hex digits")
                }
                irk = parsed
            default:
                throw malformed(path, "'\(fields[0])' is no field of it")
            }
        }
        guard let address else { throw malformed(path, "it has no address line") }
        guard let irk else { throw malformed(path, "it has no irk line") }
        return LocalIdentity(address: address, identityResolvingKey: irk)
    }

    static func malformed(_ path: String, _ why: String) -> CLIError {
        CLIError(.malformedInput, "\(path) is not rawble's identity (\(why))",
                 fix: "remove it (rm \(path)) and rawble makes a new one; peers bonded with the old one must pair again")
    }

    /// A new random static address and IRK.
    static func generate() -> LocalIdentity {
        var generator = SystemRandomNumberGenerator()
        let irk = UInt128(generator.next() as UInt64) << 64 | UInt128(generator.next() as UInt64)
        return LocalIdentity(address: OwnAddressChoice.generateRandomStatic(), identityResolvingKey: irk)
    }

    /// The file's text.
    var text: String {
        let hex = String(identityResolvingKey, radix: 16)
        return """
            # rawble's own-host identity: the random static address it uses on air and its Identity
            # Resolving Key. Peers' bonds belong to them: removing this file means pairing again.
            address \(address)
            irk \(String(repeating: "0", count: 32 - hex.count) + hex)

            """
    }

    /// Writes `identity` to `path` (mode 0600, its folder made 0700 when missing) unless a file
    /// is there already: written to a temporary file, then linked into place (`link(2)` never
    /// replaces what is at `path`, a symbolic link included).
    static func keep(_ identity: LocalIdentity, at path: String) throws {
        let folder = OutputFile.folder(of: path)
        try makeFolder(folder)
        let temporary = "\(path).\(getpid()).tmp"
        let descriptor: Int32
        do {
            descriptor = try PrivateFile.replace(temporary)
        } catch {
            throw OutputFile.error(creating: "rawble's identity", at: temporary, error)
        }
        let bytes = Array(identity.text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        defer { unlink(temporary) }
        guard written == bytes.count, synced else {
            throw OutputFile.error(creating: "rawble's identity", at: path, errno: errno)
        }
        if link(temporary, path) != 0, errno != EEXIST {
            throw OutputFile.error(creating: "rawble's identity", at: path, errno: errno)
        }
    }

    /// `mkdir -p` with mode 0700 for what it makes.
    private static func makeFolder(_ folder: String) throws {
        var current = ""
        for component in folder.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o700) != 0, errno != EEXIST {
                throw CLIError(errno == EACCES ? .permission : .cannotOpen,
                               "cannot make the folder \(current) for rawble's identity: \(String(cString: strerror(errno)))",
                               fix: "set XDG_STATE_HOME to a folder you can write to")
            }
        }
    }
}

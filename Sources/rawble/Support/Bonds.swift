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
func openBondStore(environment: [String: String], identity: DeviceAddress) -> any BondStore {
    guard let directory = FileBondStore.defaultDirectory(environment: environment) else { return InMemoryBondStore() }
    return FileBondStore(directory: directory, localIdentity: identity)
}

/// rawble's own host's identity on air: a random static address and an Identity Resolving
/// Key, the same on every run so peers' bonds keep matching. One per adapter (issue 39: two
/// adapters with one address cannot connect to each other, a central finds its own address),
/// each in a small file in the state folder (mode 0600) named for its adapter
/// (``IdentityOwner``), made the first time that adapter is used.
struct LocalIdentity: Equatable {
    var address: BluetoothAddress
    var identityResolvingKey: UInt128

    var deviceAddress: DeviceAddress { DeviceAddress(address, type: .random) }
    var pairingIdentity: PairingIdentity {
        PairingIdentity(identityResolvingKey: identityResolvingKey, address: deviceAddress)
    }

    /// The one identity rawble 0.1.0 kept for every adapter: `identity` in the state folder.
    static let formerFileName = "identity"

    /// What ``load(for:transport:environment:)`` found, made or took over.
    struct Loaded {
        var identity: LocalIdentity
        /// A line for the log when the identity lasts for this run only, and why.
        var notKept: String?
        /// A line for the log when this adapter took over the identity rawble 0.1.0 kept.
        var adopted: String?
    }

    /// The identity of `owner`, the adapter reached through `transport`, made and kept the first
    /// time that adapter is used, under a lock on the state folder (two rawble processes starting
    /// on one new adapter make one identity, not two). The one identity rawble 0.1.0 kept for
    /// every adapter (``formerFileName``) is taken over, renamed to the adapter's file, by the
    /// first adapter on the HCI user channel or a serial port that has none: the adapters its
    /// bonds were most likely made with (a simulated controller on `tcp:` or `unix:`, as
    /// `Scripts/demo` starts, never takes it).
    ///
    /// A file that is not an identity, or that rawble refuses (a symbolic link, not a regular
    /// file, another user's, readable or writable by others, in a folder others can write), is
    /// a one-line ``CLIError`` and is left as it is; when there is no state folder (no HOME), or
    /// it cannot be read or written, a fresh identity for this run only, with why (for a log
    /// line): rawble still works, its bonds do not last.
    static func load(for owner: IdentityOwner, transport: TransportAddress,
                     environment: [String: String]) throws -> Loaded {
        guard let folder = stateDirectory(environment: environment) else {
            return Loaded(identity: generate(), notKept: "no HOME or XDG_STATE_HOME: rawble's identity and bonds last for this run only")
        }
        let path = folder + "/" + owner.fileName
        do {
            try makeFolder(folder)
            let lock = try FolderLock(folder)
            defer { lock.release() }
            if let existing = try readFile(path) { return Loaded(identity: existing) }
            let former = folder + "/" + formerFileName
            if takesOverFormerIdentity(transport), let taken = try readFile(former) {
                // Under the lock no other rawble makes `path` meanwhile; rename(2) moves the file
                // read just now (the folder is private: checked by readFile).
                guard rename(former, path) == 0 else {
                    throw OutputFile.error(creating: "rawble's identity", at: path, errno: errno)
                }
                return Loaded(identity: taken, adopted: "\(owner) now has the identity rawble 0.1.0 kept for every adapter (\(former) is now \(path)): its bonds work on this adapter")
            }
            let fresh = generate()
            try keep(fresh, at: path, owner: owner)
            return Loaded(identity: try readFile(path) ?? fresh)
        } catch let error as CLIError where error.status == .malformedInput || error.message.hasPrefix(refusalPrefix) {
            throw error
        } catch {
            return Loaded(identity: generate(), notKept: "\(error): rawble's identity and bonds last for this run only")
        }
    }

    /// Whether an adapter on `transport` takes over rawble 0.1.0's one identity: real adapters
    /// (the HCI user channel, a serial port), not simulated ones (`tcp:`, `unix:`).
    static func takesOverFormerIdentity(_ transport: TransportAddress) -> Bool {
        switch transport {
        case .userChannel, .serial: true
        case .tcp, .unix, .kernel: false
        }
    }

    /// Every identity kept in the state folder, by file name (rawble 0.1.0's one included,
    /// when no adapter took it over): what `rawble bonds` lists the bonds of.
    static func all(environment: [String: String]) throws -> [(owner: IdentityOwner?, identity: LocalIdentity)] {
        guard let folder = stateDirectory(environment: environment) else { return [] }
        guard let stream = opendir(folder) else {
            let code = errno
            if code == ENOENT { return [] }
            throw CLIError(code == EACCES ? .permission : .cannotOpen,
                           "cannot list rawble's state folder \(folder): \(String(cString: strerror(code)))",
                           fix: "check the folder's permissions (it is the user's own, mode 0700)")
        }
        var names: [String] = []
        while let entry = readdir(stream) {
            names.append(withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) })
        }
        closedir(stream)
        var found: [(owner: IdentityOwner?, identity: LocalIdentity)] = []
        for name in names.sorted() {
            let owner = IdentityOwner(fileName: name)
            guard owner != nil || name == formerFileName, let identity = try readFile(folder + "/" + name) else { continue }
            found.append((owner, identity))
        }
        return found
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

    /// The file's text, saying which adapter it is for.
    func text(for owner: IdentityOwner) -> String {
        let hex = String(identityResolvingKey, radix: 16)
        return """
            # rawble's own-host identity on \(owner): the random static address it uses on air
            # and its Identity Resolving Key. Peers' bonds belong to them: removing this file
            # means pairing again.
            address \(address)
            irk \(String(repeating: "0", count: 32 - hex.count) + hex)

            """
    }

    /// Writes `identity` of `owner` to `path` (mode 0600, its folder made 0700 when missing)
    /// unless a file is there already: written to a temporary file, then linked into place
    /// (`link(2)` never replaces what is at `path`, a symbolic link included).
    static func keep(_ identity: LocalIdentity, at path: String, owner: IdentityOwner) throws {
        let folder = OutputFile.folder(of: path)
        try makeFolder(folder)
        // A dot file: `all(environment:)` never takes it for an identity.
        let temporary = "\(folder)/.\(path.dropFirst(folder.count + 1)).\(getpid()).tmp"
        let descriptor: Int32
        do {
            descriptor = try PrivateFile.replace(temporary)
        } catch {
            throw OutputFile.error(creating: "rawble's identity", at: temporary, error)
        }
        let bytes = Array(identity.text(for: owner).utf8)
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

/// The own-host adapter an identity is for (``LocalIdentity``): its controller when the
/// controller has a public address (Read BD_ADDR), whichever transport reaches it; else the
/// transport, as it was named (a serial port's baud rate left out). So no two adapters share an
/// identity, and an adapter keeps its own across runs.
enum IdentityOwner: Hashable, CustomStringConvertible {
    /// The controller with this public address.
    case controller(BluetoothAddress)
    /// A controller without a public address, reached through this transport (`tcp:HOST:PORT`,
    /// `unix:PATH`, `serial:PATH`, `user:hciN`).
    case transport(String)

    /// The controller's, when `publicAddress` is one (neither all zeros nor all ones, which
    /// controllers without one report), else the transport's.
    init(publicAddress: BluetoothAddress?, transport: TransportAddress) {
        if let publicAddress, publicAddress != .any, publicAddress != BluetoothAddress(0xFFFF_FFFF_FFFF) {
            self = .controller(publicAddress)
        } else if case .serial(let path, _) = transport {
            self = .transport("serial:\(path)")
        } else {
            self = .transport(transport.description)
        }
    }

    static let filePrefix = "identity-"
    static let controllerPrefix = "controller-"
    static let transportPrefix = "transport-"

    /// The identity file's name in the state folder: `identity-controller-52-41-57-42-4C-01`,
    /// `identity-transport-tcp:127.0.0.1:9000`, `identity-transport-serial:%2Fdev%2FttyUSB0`
    /// (bytes other than letters, digits, `.`, `_`, `:` and `-` as `%XX`).
    var fileName: String {
        switch self {
        case .controller(let address):
            Self.filePrefix + Self.controllerPrefix + "\(address)".split(separator: ":").joined(separator: "-")
        case .transport(let name):
            Self.filePrefix + Self.transportPrefix + Self.escaped(name)
        }
    }

    /// The owner a file name of ``fileName``'s form names; `nil` for any other name.
    init?(fileName: String) {
        guard fileName.hasPrefix(Self.filePrefix) else { return nil }
        let key = fileName.dropFirst(Self.filePrefix.count)
        if key.hasPrefix(Self.controllerPrefix) {
            let words = key.dropFirst(Self.controllerPrefix.count).split(separator: "-", omittingEmptySubsequences: false)
            guard words.count == 6, let address = BluetoothAddress(words.joined(separator: ":")) else { return nil }
            self = .controller(address)
        } else if key.hasPrefix(Self.transportPrefix), let name = Self.unescaped(key.dropFirst(Self.transportPrefix.count)),
                  !name.isEmpty {
            self = .transport(name)
        } else {
            return nil
        }
        guard self.fileName == fileName else { return nil }
    }

    var description: String {
        switch self {
        case .controller(let address): "the controller \(address)"
        case .transport(let name): name
        }
    }

    /// The adapter as `rawble bonds` names it: the controller's public address, or the transport.
    var label: String {
        switch self {
        case .controller(let address): "\(address)"
        case .transport(let name): name
        }
    }

    private static func isKept(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"): true
        default: false
        }
    }

    private static func escaped(_ name: String) -> String {
        var result = ""
        for byte in name.utf8 {
            if isKept(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        return result
    }

    private static func unescaped(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var rest = Array(text.utf8)[...]
        while let byte = rest.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard rest.count >= 2, let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
            rest = rest.dropFirst(2)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// An exclusive `flock(2)` on the state folder (the one ``FileBondStore`` takes for its
/// changes), held while an identity is looked for and made.
struct FolderLock {
    private let descriptor: Int32

    /// Bound on the wait for another rawble's hold: it holds it for a few file operations.
    static let limit: Duration = .seconds(5)

    init(_ folder: String) throws {
        descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CLIError(.cannotOpen, "cannot open the folder \(folder) for rawble's identity: \(String(cString: strerror(errno)))")
        }
        let clock = ContinuousClock()
        let deadline = clock.now + Self.limit
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR, clock.now < deadline else {
                close(descriptor)
                throw CLIError(code == EWOULDBLOCK ? .timeout : .cannotOpen,
                               "cannot lock the folder \(folder) for rawble's identity: "
                               + (code == EWOULDBLOCK ? "another process has held it for \(Self.limit)" : String(cString: strerror(code))),
                               fix: "check which process holds it (fuser \(folder))")
            }
            usleep(10_000)
        }
    }

    /// Releases the lock (closing the descriptor does).
    func release() {
        close(descriptor)
    }
}

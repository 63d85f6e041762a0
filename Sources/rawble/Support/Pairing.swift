#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ArgumentParser
@preconcurrency import Dispatch
import RawbleBearer
import RawbleHost
import RawbleKernel
import RawbleSMP
import RawbleStack
import RawbleWire
import Synchronization

// Pairing on rawble's own host from the command line (issue 24): the options, the settings
// the host session configures the adapter with, and the terminal's pairing agent.

/// `--io`: what the user can do during a pairing.
enum IOArgument: String, ExpressibleByArgument, CaseIterable, Sendable {
    case display, keyboard, yesno
    case keyboardDisplay = "keyboard-display"
    case none

    var capability: SMPIOCapability {
        switch self {
        case .display: .displayOnly
        case .keyboard: .keyboardOnly
        case .yesno: .displayYesNo
        case .keyboardDisplay: .keyboardDisplay
        case .none: .noInputNoOutput
        }
    }
}

/// `--security`: the level a link must reach right after connecting.
enum SecurityArgument: String, ExpressibleByArgument, CaseIterable, Sendable {
    case encrypted, authenticated

    var level: LinkSecurity { self == .authenticated ? .authenticated : .encrypted }
}

/// `--io`, `--passkey`, `--confirm`, `--legacy`: how rawble's own host pairs.
struct PairingOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "What you can do when pairing on rawble's own host: display, keyboard, yesno, keyboard-display, none (Just Works).",
        valueName: "capability"))
    var io: IOArgument = .none

    @Option(name: .long, help: ArgumentHelp(
        "The passkey to type when the peer displays one, for scripts (needs --io keyboard or keyboard-display; else asked on the terminal). A passkey rawble displays is new and random each time.",
        valueName: "digits"))
    var passkey: UInt32?

    @Flag(name: .long, help: ArgumentHelp(
        "Accept a Numeric Comparison without asking (for scripts; needs --io yesno or keyboard-display). Nobody compares the six digits, so the key counts as unauthenticated, as with Just Works."))
    var confirm = false

    @Flag(name: .long, help: ArgumentHelp(
        "Also accept LE legacy pairing, for a peer that cannot do LE Secure Connections (refused by default: its keys are open to an eavesdropper)."))
    var legacy = false

    @Flag(name: .long, help: ArgumentHelp(
        "Use a resolvable private address on rawble's own host, made from rawble's identity key and changed every 15 minutes: devices bonded with rawble recognise it, others see a new device each time."))
    var privateAddress = false

    func validate() throws {
        if let passkey, passkey > 999_999 { throw ValidationError("--passkey is six digits, 0 to 999999") }
        // An option that cannot take effect is refused, never silently ignored.
        if passkey != nil, io != .keyboard, io != .keyboardDisplay {
            throw ValidationError("--passkey is the passkey to type, and --io \(io.rawValue) types none: add --io keyboard (or keyboard-display)")
        }
        if confirm, io != .yesno, io != .keyboardDisplay {
            throw ValidationError("--confirm answers a Numeric Comparison, and --io \(io.rawValue) has none: add --io yesno (or keyboard-display)")
        }
    }

    var settings: PairingSettings {
        PairingSettings(io: io, passkey: passkey, confirm: confirm, privateAddress: privateAddress, legacy: legacy)
    }
}

/// `--io`, `--passkey` and `--security`, on the commands that connect.
struct SecurityOptions: ParsableArguments {
    @OptionGroup var pairing: PairingOptions

    @Option(name: .long, help: ArgumentHelp(
        "Make the link encrypted or authenticated right after connecting (pair, or encrypt with the bond).",
        valueName: "level"))
    var security: SecurityArgument?

    var settings: PairingSettings {
        var settings = pairing.settings
        settings.required = security?.level
        return settings
    }
}

/// How rawble's own host pairs in this run (from the options).
struct PairingSettings: Sendable {
    var io: IOArgument = .none
    /// The passkey to type when asked (`--passkey`); a displayed one is always random.
    var passkey: UInt32?
    /// Numeric Comparisons are accepted without asking (`--confirm`): unauthenticated keys.
    var confirm = false
    /// A resolvable private own address, changed every ``privateAddressPeriod`` (`--private-address`).
    var privateAddress = false
    /// LE legacy pairing accepted from a peer without LE Secure Connections (`--legacy`).
    var legacy = false
    /// The level a link must reach right after connecting (`--security`).
    var required: LinkSecurity?

    /// How long one private address is used: 15 minutes, as BlueZ and phones do.
    static let privateAddressPeriod: Duration = .seconds(900)

    /// Whether anything but the defaults was asked for (which the kernel path cannot do).
    var isCustom: Bool { io != .none || passkey != nil || confirm || privateAddress || legacy || required != nil }

    /// The adapter's pairing: bonding, LE Secure Connections only unless `--legacy`, 16-octet
    /// keys, MITM protection asked for when the user can take part (`--io` other than none).
    func configuration(identity: PairingIdentity?) -> PairingConfiguration {
        PairingConfiguration(ioCapability: io.capability, bonding: true, mitm: io != .none,
                             allowsLegacyPairing: legacy, identity: identity)
    }

    /// On `hciN` the kernel pairs: the one line saying so, when options asked for rawble's own.
    /// On `hciN` the kernel picks the own address: the one line saying so for `--private-address`.
    static func kernelPrivacyRefusal(_ transport: TransportAddress) -> CLIError {
        let name = if case .kernel(let number?) = transport { "hci\(number)" } else { "hciN" }
        return CLIError(.unavailable, "the own address on \(name) is the kernel's (bluetoothd's Privacy setting in /etc/bluetooth/main.conf)",
                        fix: "--private-address works on own-host transports (user:hciN, serial:, tcp:, unix:)")
    }

    static func kernelRefusal(_ transport: TransportAddress, what: String) -> CLIError {
        let name = if case .kernel(let number?) = transport { "hci\(number)" } else { "hciN" }
        return CLIError(.unavailable, "\(what) on \(name) is the kernel's (pair with bluetoothctl there)",
                 fix: "own-host transports (user:hciN, serial:, tcp:, unix:) pair with rawble's own Security Manager")
    }
}

/// The terminal's pairing agent: shows a passkey on stderr, asks for the peer's passkey or to
/// confirm six digits on the terminal (/dev/tty), one line each. With `--passkey` the passkey
/// to type is given, with `--confirm` comparisons are accepted unseen (the digits shown on
/// stderr; the key is unauthenticated); with no terminal the question is declined (the pairing
/// then fails with Passkey Entry Failed or Numeric Comparison Failed). Each peer a passkey was shown or asked for is noted in
/// `passkeys` (a Confirm Value Failed then means a wrong passkey).
struct TerminalPairingAgent: PairingAgent {
    var passkey: UInt32?
    var acceptsComparisons = false
    var passkeys = PasskeyJournal()

    func displayPasskey(_ passkey: UInt32, for peer: DeviceAddress) async {
        passkeys.note(peer)
        StatusLine.printErrorAboveActive("rawble: type the passkey \(Self.digits(passkey)) on \(peer.address) to pair")
    }

    func passkey(for peer: DeviceAddress) async -> UInt32? {
        passkeys.note(peer)
        if let passkey { return passkey }
        guard let answer = await Self.ask("rawble: the passkey \(peer.address) shows: ") else { return nil }
        guard let value = UInt32(answer), value <= 999_999 else { return nil }
        return value
    }

    func confirm(_ number: UInt32, for peer: DeviceAddress) async -> Bool {
        await compare(number, for: peer) != .declined
    }

    /// `--confirm` accepts unseen: nobody compared, so the key is not authenticated.
    func compare(_ number: UInt32, for peer: DeviceAddress) async -> NumericComparisonAnswer {
        if acceptsComparisons {
            StatusLine.printErrorAboveActive("rawble: accepted \(Self.digits(number)) for \(peer.address) unseen (--confirm): it should show the same; the key counts as unauthenticated")
            return .acceptedUnseen
        }
        guard let answer = await Self.ask("rawble: does \(peer.address) show \(Self.digits(number))? [y/N] ") else { return .declined }
        return answer.lowercased() == "y" || answer.lowercased() == "yes" ? .confirmed : .declined
    }

    static func digits(_ number: UInt32) -> String {
        let text = String(number)
        return String(repeating: "0", count: max(0, 6 - text.count)) + text
    }

    /// Shows `prompt` on the terminal and reads one line from it (trimmed); `nil` when there is
    /// no terminal (or it ends). The read blocks a thread of its own, not the host's; the
    /// status line stays off the screen meanwhile.
    static func ask(_ prompt: String) async -> String? {
        await StatusLine.pausingActive {
            // NIO's thread pool for blocking work, not Dispatch's global queue: on Linux that
            // queue's threads are the pool Swift's tasks run on, and a person typing takes seconds.
            (try? await onBlockingThread("reading the terminal") { askBlocking(prompt) }) ?? nil
        }
    }

    private static func askBlocking(_ prompt: String) -> String? {
        let descriptor = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let bytes = Array(prompt.utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 64 {
            let count = read(descriptor, &byte, 1)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return nil }
            // A terminal in raw mode (`rawble shell`'s line editor) ends the line with a return.
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        return String(text.filter { !$0.isWhitespace })
    }
}

/// The peers this run showed a passkey to or asked one for: in their pairings a Confirm Value
/// Failed is a wrong passkey, in others a confirm value that did not match.
final class PasskeyJournal: Sendable {
    private let peers = Mutex<Set<BluetoothAddress>>([])

    func note(_ peer: DeviceAddress) {
        _ = peers.withLock { $0.insert(peer.address) }
    }

    func usedPasskey(with peer: DeviceAddress) -> Bool {
        peers.withLock { $0.contains(peer.address) }
    }
}

/// A failure to pair or encrypt as one line naming the SMP reason, with its class's status
/// (``ExitStatus``: 80-85, else 79). `passkeys`: who this run paired with by passkey.
enum PairingErrors {
    static func cliError(_ error: HostError, passkeys: PasskeyJournal?) -> CLIError {
        switch error {
        case let .pairingFailed(peer, failure):
            let status = status(of: failure, passkeyUsed: passkeys?.usedPasskey(with: peer) ?? false)
            return CLIError(status, "pairing with \(peer) failed: \(what(failure))", fix: fix(status, failure: failure, peer: peer))
        case .securityTimedOut:
            return CLIError(.pairingTimedOut, error.description)
        case .insufficientSecurity:
            return CLIError(.methodUnavailable, error.description)
        default:
            return CLIError(.pairingFailed, error.description)
        }
    }

    /// `the peer stopped it: Numeric Comparison Failed (0x0C)`, `rawble stopped it: ...`.
    static func what(_ failure: PairingFailure) -> String {
        switch failure {
        case .peerFailed(let reason): "the peer stopped it: \(reason)"
        case .failed(let reason): "rawble stopped it: \(reason)"
        case .timedOut: "SMP timeout: no SMP command for 30 s"
        case .encryptionFailed: "\(failure)"
        case .legacyPairingRefused, .weakerThanBond: "rawble stopped it: \(failure)"
        }
    }

    /// The class of a failed pairing: by the SMP reason first, whichever side gave it; then
    /// any other reason the peer gave is the peer aborting, any other of this side's 79.
    static func status(of failure: PairingFailure, passkeyUsed: Bool) -> ExitStatus {
        switch failure {
        case .timedOut: return .pairingTimedOut
        case .encryptionFailed: return .pairingFailed
        case .legacyPairingRefused, .weakerThanBond: return .methodUnavailable
        case .failed, .peerFailed: break
        }
        switch failure.reason {
        case .passkeyEntryFailed?: return .wrongPasskey
        case .confirmValueFailed?: return passkeyUsed ? .wrongPasskey : .confirmMismatch
        case .dhKeyCheckFailed?: return .dhKeyCheckFailed
        case .authenticationRequirements?, .oobNotAvailable?: return .methodUnavailable
        default:
            if case .peerFailed = failure { return .peerAborted }
            return .pairingFailed
        }
    }

    /// What to do about it, for the classes a person can act on.
    static func fix(_ status: ExitStatus, failure: PairingFailure, peer: DeviceAddress) -> String? {
        switch status {
        case .wrongPasskey:
            return "the passkey was wrong or not entered: pair again and type the six digits shown (--passkey for scripts)"
        case .confirmMismatch:
            return "a confirm value did not match its random value (the pairing was tampered with, or a peer's bug): pair again"
        case .dhKeyCheckFailed:
            return "the two sides' keys do not agree (a wrong passkey, or an attacker's public key): pair again"
        case .methodUnavailable where failure == .legacyPairingRefused:
            return "pair again with --legacy to accept LE legacy pairing from \(peer.address) (its keys are weaker)"
        case .methodUnavailable:
            if case .weakerThanBond = failure {
                return "rawble bonds remove \(peer.address), then pair again, to replace the bond with a weaker one"
            }
            return "the peer cannot do the method asked for: try another --io, or leave out --security authenticated"
        case .pairingTimedOut:
            return "\(peer.address) stopped answering mid-pairing (or a passkey was not entered in time): pair again"
        case .peerAborted where failure.reason == .numericComparisonFailed:
            return "the numbers were not confirmed on \(peer.address)"
        case .peerAborted where failure.reason == .pairingNotSupported:
            return "\(peer.address) does not pair"
        case .pairingFailed where failure.reason == .numericComparisonFailed:
            return "the numbers were not confirmed here (--confirm accepts them in scripts)"
        default:
            return nil
        }
    }
}

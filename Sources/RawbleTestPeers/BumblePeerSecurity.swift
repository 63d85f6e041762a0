import Foundation

// Pairing with the peer's Bumble devices (issue 24): the options of the strap (`--strap-*`) and
// of Bumble's central (`--central-*`), and what both log of each pairing, encryption and address
// step (Scripts/python/bumble_fixture/pairing.py; bumble_peer.py's docstring has the format).
//
// Byte order: the scripts log every 128-bit key as hex of ONE BIG-ENDIAN NUMBER (most
// significant byte first, the reverse of the air's and HCI's order), parsed here into UInt128 as
// that number; Rand is the 64-bit number (the air's 8 bytes read little-endian), EDIV the 16-bit
// one. A key read here equals the UInt128 rawble's SMP computes for the same key.

extension BumblePeer {
    /// Types `passkey` (0...999999) for the strap: its answer in the Passkey Entry it waits in
    /// when it must type and has no fixed passkey (``SecurityEvent/passkeyRequested(time:timeout:)``
    /// in ``securityLog()``). `nil` refuses (Pairing Failed 0x01). False once the peer is stopped.
    @discardableResult
    public func typeStrapPasskey(_ passkey: UInt32?) -> Bool {
        writeInputLine("{\"strap\": {\"passkey\": \(passkey.map { String($0) } ?? "null")}}")
    }

    /// How one of the peer's Bumble devices pairs: the strap (``StrapSecurity``) or Bumble's
    /// central (``BumbleCentral/Pairing``). Defaults: NoInputNoOutput, LE Secure Connections,
    /// no MITM bit, bonding.
    public struct PairingOptions: Hashable, Sendable {
        /// The SMP IO capability, as the scripts name it.
        public enum IOCapability: String, Hashable, Sendable, Decodable, CaseIterable {
            /// NoInputNoOutput: Just Works whatever the other side has.
            case none
            case display
            case keyboard
            case yesNo = "yesno"
            case keyboardDisplay = "keyboard-display"
        }

        public var io: IOCapability
        /// LE legacy pairing only (no LE Secure Connections bit).
        public var legacy: Bool
        /// The MITM bit.
        public var mitm: Bool
        /// The Bonding bit and key distribution; `false`: no keys distributed, no bond kept.
        public var bonding: Bool
        /// The passkey (0...999999) displayed when the device displays and entered when it types;
        /// `nil`: a random one displayed, and when it types it waits (30 s) for the test to type
        /// one: ``BumblePeer/typeStrapPasskey(_:)``, ``BumbleCentral/typePasskey(_:central:)``.
        public var passkey: UInt32?
        /// A numeric comparison answered no (Pairing Failed 0x0C).
        public var rejectComparison: Bool
        /// Something the device does wrong in a pairing (`--PREFIX-fault`), for the other side's failures.
        public var fault: Fault?

        /// What `--PREFIX-fault` makes the device do wrong (bumble_fixture/pairing.py's FAULTS).
        public enum Fault: String, Hashable, Sendable, CaseIterable {
            /// Its Pairing Confirm values corrupted: the other side fails with Confirm Value Failed (0x04).
            case confirm
            /// Its DHKey Check corrupted (LE Secure Connections): the other side fails with DHKey Check Failed (0x0B).
            case dhKeyCheck = "dhkey-check"
            /// No SMP command after its Pairing Request or Response: the other side's 30 s SMP timeout.
            case silent
            // The published attacks on a host's Security Manager (bumble_fixture/pairing.py's
            // ATTACKS); the device then logs every SMP command it receives
            // (``SecurityEvent/smpReceived(time:code:)``) and each step of the attack
            // (``SecurityEvent/attack(time:step:)``).
            /// CVE-2020-26558: its public key is the other side's with Y negated (as initiator:
            /// the key that side used in an earlier pairing in the same peer process), and in
            /// Passkey Entry it reflects every round's confirm and random, learning the passkey.
            case reflectPublicKey = "reflect-public-key"
            /// LE legacy, as responder: its Pairing Confirm and Random are the initiator's own.
            case reflectConfirm = "reflect-confirm"
            /// Its Pairing Request or Response offers Maximum Encryption Key Size 17 (SweynTooth CVE-2019-19196).
            case keySize17 = "key-size-17"
            /// Its Pairing Request or Response offers Maximum Encryption Key Size 7: allowed by the
            /// specification, below a minimum of 16 (KNOB for LE).
            case keySize7 = "key-size-7"
            /// As central: LE Enable Encryption with an all-zero key right after the Pairing Response
            /// (SweynTooth CVE-2019-19194); once the controller says how it went (steps `encrypted`
            /// or `refused`), it drops the link.
            case encryptEarly = "encrypt-early"
            /// As central, LE Secure Connections: starts encryption with its LTK instead of sending
            /// its DHKey Check (SweynTooth's DHCheck skip); then as ``encryptEarly``.
            case skipDHKeyCheck = "skip-dhkey-check"
            /// Distributes an identity address that is neither public nor static random.
            case badIdentityAddress = "bad-identity-address"
        }

        public init(io: IOCapability = .none, legacy: Bool = false, mitm: Bool = false, bonding: Bool = true,
                    passkey: UInt32? = nil, rejectComparison: Bool = false, fault: Fault? = nil) {
            self.io = io
            self.legacy = legacy
            self.mitm = mitm
            self.bonding = bonding
            self.passkey = passkey
            self.rejectComparison = rejectComparison
            self.fault = fault
        }

        /// The command-line options for the device named by `prefix` (`strap` or `central`).
        public func arguments(prefix: String) -> [String] {
            var options: [String] = []
            if io != .none { options += ["--\(prefix)-io", io.rawValue] }
            if legacy { options.append("--\(prefix)-legacy") }
            if mitm { options.append("--\(prefix)-mitm") }
            if !bonding { options.append("--\(prefix)-no-bonding") }
            if let passkey { options += ["--\(prefix)-passkey", "\(passkey)"] }
            if rejectComparison { options.append("--\(prefix)-reject-comparison") }
            if let fault { options += ["--\(prefix)-fault", fault.rawValue] }
            return options
        }
    }

    /// The strap's security options: how it pairs, whether it asks for security, what it guards,
    /// whether it hides behind resolvable private addresses. Pass ``arguments`` to
    /// ``BumblePeer/start(arguments:ports:environment:readyTimeout:)`` (with `--strap-only` or
    /// the standard devices).
    public struct StrapSecurity: Hashable, Sendable {
        public var pairing: PairingOptions
        /// An SMP Security Request as soon as a central connects.
        public var securityRequest: Bool
        /// A characteristic readable only once encrypted (`sealed`; handle ``StrapHandles/encryptedRead``).
        public var encryptedRead: Bool
        /// A characteristic readable only once encrypted with an authenticated key (`attested`;
        /// handle ``StrapHandles/authenticatedRead``; ATT error 0x05 before).
        public var authenticatedRead: Bool
        /// Advertising from resolvable private addresses made with the strap's IRK.
        public var privacy: Bool
        /// With ``privacy``: a new address every so many seconds while no central is connected
        /// (`nil`: the first one kept).
        public var addressPeriod: Double?

        public init(pairing: PairingOptions = PairingOptions(), securityRequest: Bool = false,
                    encryptedRead: Bool = false, authenticatedRead: Bool = false, privacy: Bool = false,
                    addressPeriod: Double? = nil) {
            self.pairing = pairing
            self.securityRequest = securityRequest
            self.encryptedRead = encryptedRead
            self.authenticatedRead = authenticatedRead
            self.privacy = privacy
            self.addressPeriod = addressPeriod
        }

        /// The `--strap-*` options.
        public var arguments: [String] {
            var options = pairing.arguments(prefix: "strap")
            if securityRequest { options.append("--strap-security-request") }
            if encryptedRead { options.append("--strap-encrypted-read") }
            if authenticatedRead { options.append("--strap-authenticated-read") }
            if privacy { options.append("--strap-privacy") }
            if privacy, let addressPeriod { options += ["--strap-rpa-period", "\(addressPeriod)"] }
            return options
        }
    }

    /// The strap's pairing options and identity, from the ready line.
    public struct StrapPairingSettings: Hashable, Sendable, Decodable {
        public var io: PairingOptions.IOCapability
        public var secureConnections: Bool
        public var mitm: Bool
        public var bonding: Bool
        public var passkey: UInt32?
        public var rejectComparison: Bool
        public var securityRequest: Bool
        /// The strap's Identity Resolving Key (big-endian hex; ``identityResolvingKey`` parses it).
        public var irk: String
        /// The identity address it distributes (random static, `C0:B1:E0:00:00:01`).
        public var identityAddress: String
        public var identityAddressType: String
        /// Whether it advertises from resolvable private addresses (then ``Device/address`` is the first one).
        public var privacy: Bool
        public var rpaPeriod: Double?

        /// The strap's IRK as a number (what rawble's SMP stores for it).
        public var identityResolvingKey: UInt128? { UInt128(irk, radix: 16) }
    }

    /// The pairing method, as the scripts name it.
    public enum PairingMethod: String, Hashable, Sendable, Decodable {
        case justWorks = "just-works"
        case passkey
        case numericComparison = "numeric-comparison"
        case outOfBand = "oob"
    }

    /// SMP key distribution bits (Core Vol 3 Part H 3.6.1).
    public struct KeyDistribution: OptionSet, Hashable, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Legacy: LTK, EDIV and Rand; with LE Secure Connections the bit sends nothing.
        public static let encryptionKey = KeyDistribution(rawValue: 1)
        /// IRK and identity address.
        public static let identityKey = KeyDistribution(rawValue: 2)
        public static let signingKey = KeyDistribution(rawValue: 4)
        public static let linkKey = KeyDistribution(rawValue: 8)
    }

    /// A pairing a Bumble device completed, as it logged it (the strap: role `peripheral`;
    /// Bumble's central: role `central`). Keys are numbers (the logged big-endian hex).
    public struct PairingRecord: Hashable, Sendable, Decodable {
        public var time: Double
        /// `central` or `peripheral`: the logging device's role.
        public var role: String
        public var method: PairingMethod
        public var secureConnections: Bool
        /// Whether the keys are authenticated (every method but Just Works).
        public var authenticated: Bool
        /// Whether both sides asked to bond.
        public var bonding: Bool
        /// The smaller Maximum Encryption Key Size of the Pairing Request and Response (Bumble
        /// always offers 16 and does not mask keys).
        public var keySize: UInt8
        /// The key that encrypts a later link with this pairing's roles (the central encrypts,
        /// the peripheral answers): LE Secure Connections: the pairing's LTK; legacy: the LTK
        /// the peripheral distributed (`nil` when it sent none).
        public var longTermKey: UInt128?
        /// EDIV and Rand naming ``longTermKey`` (0 with LE Secure Connections).
        public var encryptedDiversifier: UInt16
        public var random: UInt64
        /// Legacy: the STK the link was first encrypted with.
        public var shortTermKey: UInt128?
        /// Legacy: the LTK the central distributed (for links with the roles reversed), its EDIV and Rand.
        public var centralLongTermKey: UInt128?
        public var centralEncryptedDiversifier: UInt16?
        public var centralRandom: UInt64?
        /// The other side's IRK, when it distributed one.
        public var peerIdentityResolvingKey: UInt128?
        /// The other side's identity address (else the address it paired from), `AA:BB:CC:DD:EE:FF`.
        public var peerAddress: String
        /// `public` or `random`.
        public var peerAddressType: String
        /// The address the other side paired from.
        public var peerConnectionAddress: String
        /// The keys the logging device distributed, and those it received (as negotiated).
        public var keysSent: KeyDistribution
        public var keysReceived: KeyDistribution
        /// Passkey Entry: the passkey.
        public var passkey: UInt32?

        private enum CodingKeys: String, CodingKey {
            case time, role, method, secureConnections, authenticated, bonding, keySize, ltk, ediv, rand, stk
            case centralLtk, centralEdiv, centralRand, peerIrk, peerAddress, peerAddressType
            case peerConnectionAddress, keysSent, keysReceived, passkey
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            func key(_ name: CodingKeys) throws -> UInt128? {
                guard let text = try c.decodeIfPresent(String.self, forKey: name) else { return nil }
                guard text.utf8.count == 32, let value = UInt128(text, radix: 16) else {
                    throw DecodingError.dataCorruptedError(forKey: name, in: c,
                                                           debugDescription: "not 32 hex digits: \(text)")
                }
                return value
            }
            time = try c.decode(Double.self, forKey: .time)
            role = try c.decode(String.self, forKey: .role)
            method = try c.decode(PairingMethod.self, forKey: .method)
            secureConnections = try c.decode(Bool.self, forKey: .secureConnections)
            authenticated = try c.decode(Bool.self, forKey: .authenticated)
            bonding = try c.decode(Bool.self, forKey: .bonding)
            keySize = try c.decode(UInt8.self, forKey: .keySize)
            longTermKey = try key(.ltk)
            encryptedDiversifier = try c.decode(UInt16.self, forKey: .ediv)
            random = try c.decode(UInt64.self, forKey: .rand)
            shortTermKey = try key(.stk)
            centralLongTermKey = try key(.centralLtk)
            centralEncryptedDiversifier = try c.decodeIfPresent(UInt16.self, forKey: .centralEdiv)
            centralRandom = try c.decodeIfPresent(UInt64.self, forKey: .centralRand)
            peerIdentityResolvingKey = try key(.peerIrk)
            peerAddress = try c.decode(String.self, forKey: .peerAddress)
            peerAddressType = try c.decode(String.self, forKey: .peerAddressType)
            peerConnectionAddress = try c.decode(String.self, forKey: .peerConnectionAddress)
            keysSent = KeyDistribution(rawValue: try c.decode(UInt8.self, forKey: .keysSent))
            keysReceived = KeyDistribution(rawValue: try c.decode(UInt8.self, forKey: .keysReceived))
            passkey = try c.decodeIfPresent(UInt32.self, forKey: .passkey)
        }
    }

    /// A change of a link's encryption as a Bumble device saw it.
    public struct EncryptionChange: Hashable, Sendable, Decodable {
        public var time: Double
        public var enabled: Bool
        /// Whether the key encrypting the link is authenticated.
        public var authenticated: Bool
        /// The key's size in octets, from the pairing or the bond (the virtual controller reports none).
        public var keySize: UInt8?
        /// `pairing` (the key of a pairing on this link) or `bond` (a stored key).
        public var key: String?
        /// True for an Encryption Key Refresh (a link encrypted again).
        public var refresh: Bool?
    }

    /// The strap's answer to an LE Long Term Key Request.
    public struct LongTermKeyRequest: Hashable, Sendable, Decodable {
        public var time: Double
        public var ediv: UInt16
        public var rand: UInt64
        /// `pairing` (the pairing under way), `bond` (a stored key) or `none` (a negative reply).
        public var answer: String
    }

    /// One pairing, encryption or address step a Bumble device logged (the strap's `--log`
    /// lines with these kinds, or Bumble's central's events: ``BumbleCentral/Event/security``).
    public enum SecurityEvent: Hashable, Sendable, Decodable {
        case pairing(PairingRecord)
        /// Pairing Failed, sent or received: the SMP reason.
        case pairingFailed(time: Double, reason: UInt8)
        case encryption(EncryptionChange)
        /// The HCI status (nil: no bond to encrypt with, no answer in time, or the link dropped:
        /// then `reason` is the disconnection's, 0x3D when the two sides' keys differ).
        case encryptionFailed(time: Double, status: UInt8?, reason: UInt8?)
        case longTermKeyRequest(LongTermKeyRequest)
        case passkeyDisplayed(time: Double, passkey: UInt32)
        /// The device must type a passkey and has none: it waits `timeout` seconds for the test's.
        case passkeyRequested(time: Double, timeout: Double)
        /// The passkey typed; nil when the device had none to type (it then fails the pairing).
        case passkeyEntered(time: Double, passkey: UInt32?)
        case comparison(time: Double, number: UInt32, accepted: Bool)
        /// The strap sent an SMP Security Request with this AuthReq.
        case securityRequestSent(time: Double, authReq: UInt8)
        /// A Security Request received (Bumble's central), with its AuthReq.
        case securityRequest(time: Double, authReq: UInt8)
        /// The end of a link on which SMP or encryption happened (the strap): the HCI reason.
        case disconnection(time: Double, reason: UInt8)
        /// The strap's new resolvable private address (`--strap-privacy`).
        case resolvablePrivateAddress(time: Double, address: String)
        /// An SMP command the attacking device received (its code), logged with an attack fault.
        case smpReceived(time: Double, code: UInt8)
        /// A step of an attack fault: `reflected-public-key`, `passkey-bit`, `passkey-learned`,
        /// `reflected-confirm`, `encrypt-early`, `skip-dhkey-check`, `bad-identity-address`, ...
        case attack(time: Double, step: String)

        /// The kinds (the strap's "kind", the central's "event") these come from.
        public static let kinds: Set<String> = [
            "pairing", "pairing-failed", "encryption", "encryption-failed", "ltk-request", "passkey-displayed",
            "passkey-requested", "passkey-entered", "comparison", "security-request-sent", "security-request", "disconnection", "rpa",
            "smp-received", "attack",
        ]

        /// The pairing record, for a `pairing` step.
        public var pairing: PairingRecord? {
            if case .pairing(let record) = self { record } else { nil }
        }

        private enum CodingKeys: String, CodingKey {
            case kind, event, time, reason, status, passkey, number, accepted, authReq, address, timeout, code, step
        }

        /// Decodes a whole log line or event: its "kind" (or "event") says which step it is.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            guard let kind = try c.decodeIfPresent(String.self, forKey: .kind)
                    ?? c.decodeIfPresent(String.self, forKey: .event) else {
                throw DecodingError.dataCorruptedError(forKey: .kind, in: c, debugDescription: "no kind or event")
            }
            let time = try c.decodeIfPresent(Double.self, forKey: .time) ?? 0
            switch kind {
            case "pairing": self = .pairing(try PairingRecord(from: decoder))
            case "pairing-failed": self = .pairingFailed(time: time, reason: try c.decode(UInt8.self, forKey: .reason))
            case "encryption": self = .encryption(try EncryptionChange(from: decoder))
            case "encryption-failed":
                self = .encryptionFailed(time: time, status: try c.decodeIfPresent(UInt8.self, forKey: .status),
                                         reason: try c.decodeIfPresent(UInt8.self, forKey: .reason))
            case "ltk-request": self = .longTermKeyRequest(try LongTermKeyRequest(from: decoder))
            case "passkey-displayed":
                self = .passkeyDisplayed(time: time, passkey: try c.decode(UInt32.self, forKey: .passkey))
            case "passkey-requested":
                self = .passkeyRequested(time: time, timeout: try c.decode(Double.self, forKey: .timeout))
            case "passkey-entered":
                self = .passkeyEntered(time: time, passkey: try c.decodeIfPresent(UInt32.self, forKey: .passkey))
            case "comparison":
                self = .comparison(time: time, number: try c.decode(UInt32.self, forKey: .number),
                                   accepted: try c.decode(Bool.self, forKey: .accepted))
            case "security-request-sent":
                self = .securityRequestSent(time: time, authReq: try c.decode(UInt8.self, forKey: .authReq))
            case "security-request":
                self = .securityRequest(time: time, authReq: try c.decode(UInt8.self, forKey: .authReq))
            case "disconnection": self = .disconnection(time: time, reason: try c.decode(UInt8.self, forKey: .reason))
            case "rpa": self = .resolvablePrivateAddress(time: time, address: try c.decode(String.self, forKey: .address))
            case "smp-received": self = .smpReceived(time: time, code: try c.decode(UInt8.self, forKey: .code))
            case "attack": self = .attack(time: time, step: try c.decode(String.self, forKey: .step))
            default:
                throw DecodingError.dataCorruptedError(forKey: .kind, in: c, debugDescription: "not a security step: \(kind)")
            }
        }
    }
}

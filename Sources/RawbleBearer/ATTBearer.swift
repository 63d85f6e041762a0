// The ATT bearer contract: what the GATT client needs from a link, and nothing more. It
// depends on no other module, so an embedder who brings their own bearer (any L2CAP, a test
// double) links neither rawble's transports nor the I/O library under them.

/// Why an ATT bearer ended or refused a PDU. Every case can be built by any bearer: none names
/// a type of a particular transport.
public enum BearerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The link under the bearer went away; `reason` says why (e.g. "remote user terminated connection").
    case disconnected(reason: String)
    /// ``ATTBearer/close()`` was called on this side.
    case closed
    /// The PDU is longer than the bearer can carry.
    case pduTooLong(length: Int, maximum: Int)
    /// The link or transport under the bearer failed: one line saying how, as its own error
    /// describes it (e.g. "transport closed by peer"). The bearer is gone.
    case transport(String)
    /// A bounded wait ran out (e.g. for room in a full outgoing queue): what was being done.
    /// The PDU was not sent and the bearer is still up.
    case timedOut(operation: String)
    /// The sending task was cancelled while the PDU waited (e.g. for room in a full queue);
    /// the PDU was not sent and the bearer is still up.
    case cancelled

    public var description: String {
        switch self {
        case .disconnected(let reason): "disconnected: \(reason)"
        case .closed: "bearer closed"
        case let .pduTooLong(length, maximum): "ATT PDU of \(length) bytes exceeds the bearer's \(maximum)"
        case .transport(let failure): failure
        case .timedOut(let operation): "\(operation) timed out"
        case .cancelled: "send cancelled"
        }
    }
}

/// One ATT bearer: the fixed L2CAP channel 0x0004 of one LE connection, whoever runs L2CAP.
///
/// The stack's own L2CAP (over H4 or the HCI user channel) and the kernel's L2CAP ATT socket
/// both provide this interface, so the ATT client above works unchanged on either.
public protocol ATTBearer: Sendable {
    /// Every ATT PDU received from the peer, whole and in order (no reassembly left to do);
    /// finishes by throwing a ``BearerError`` when the bearer ends.
    var pdus: AsyncThrowingStream<[UInt8], any Error> { get }
    /// Sends one ATT PDU (opcode + parameters); returns once it is queued for the link.
    func send(_ pdu: [UInt8]) async throws(BearerError)
    /// The largest ATT PDU the bearer itself can carry (the L2CAP SDU limit, not the ATT MTU,
    /// which the ATT client negotiates with Exchange MTU).
    var maximumPDULength: Int { get }
    /// Ends the bearer: `pdus` finishes with ``BearerError/closed``. Safe to call more than once.
    func close() async
    /// Optional fast path: when it returns `true`, every PDU not yet taken from ``pdus`` and
    /// every later one goes to `receiver` instead, in order, then the end; ``pdus`` must not be
    /// read. `false` (the default, or once ``pdus`` was read): nothing changes.
    func deliverPDUs(to receiver: any ATTPDUReceiver) -> Bool
    /// Optional: raises the link's security because the peer refused a request with
    /// `refusal`, so the ATT client can send that request once more (as BlueZ's client does).
    /// Returns `true` once the bearer asked for more security (pairing or encryption may still
    /// be under way: later sends wait for it); `false` when it cannot (no pairing on this
    /// link, already at its highest level, the request failed). The default declines.
    func raiseSecurity(after refusal: SecurityRefusal) async -> Bool
    /// Optional: how secure the link is now, as far as attribute permissions care, or `nil`
    /// when the bearer cannot tell (the default). A GATT server checks each request against it.
    func linkSecurity() -> LinkSecurity?
    /// Optional: the size, in octets (7–16), of the key the link is encrypted with, or `nil`
    /// when it is not encrypted or the bearer cannot tell (the default). Part of the link's
    /// security: a GATT server refuses an attribute that needs encryption over a key shorter
    /// than it requires (Encryption Key Size Too Short), the check KNOB's downgrade to a short
    /// key meets.
    func encryptionKeySize() -> UInt8?
}

/// How secure a link is, as attribute permissions see it (Core Vol 3 Part C 10.3): what a
/// bearer reports and what a GATT server checks reads and writes against.
public enum LinkSecurity: Int, Hashable, Sendable, Comparable {
    /// Not encrypted.
    case none = 0
    /// Encrypted with an unauthenticated key (Just Works).
    case encrypted = 1
    /// Encrypted with an authenticated key.
    case authenticated = 2

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// An ATT Error Response that asks for more security on the link (Core Vol 3 Part F
/// 3.4.1.1): the refusals a bearer able to pair or encrypt may act on. Raw values are the
/// ATT error codes, so this module needs nothing from the wire layer.
public enum SecurityRefusal: UInt8, Hashable, Sendable, CustomStringConvertible {
    /// Insufficient Authentication (0x05): the link must be authenticated (paired).
    case insufficientAuthentication = 0x05
    /// Encryption Key Size Too Short (0x0C): the link must be encrypted with a longer key.
    case encryptionKeySizeTooShort = 0x0C
    /// Insufficient Encryption (0x0F): the link must be encrypted.
    case insufficientEncryption = 0x0F

    /// `Insufficient Encryption (0x0F)`.
    public var description: String {
        let name = switch self {
        case .insufficientAuthentication: "Insufficient Authentication"
        case .encryptionKeySizeTooShort: "Encryption Key Size Too Short"
        case .insufficientEncryption: "Insufficient Encryption"
        }
        let hex = String(rawValue, radix: 16, uppercase: true)
        return "\(name) (0x\(hex.count < 2 ? "0" + hex : hex))"
    }
}

/// Takes a bearer's PDUs synchronously, on whatever task delivers them: the fast path a bearer
/// may offer through ``ATTBearer/deliverPDUs(to:)`` instead of its ``ATTBearer/pdus`` stream
/// (no task hop, no copy per PDU).
public protocol ATTPDUReceiver: AnyObject, Sendable {
    /// One whole PDU from the peer, in order; calls never overlap. Must return quickly and must
    /// not call back into the bearer.
    func receive(_ pdu: ArraySlice<UInt8>)
    /// The bearer ended (after every PDU it delivered); nothing more follows.
    func bearerEnded(_ error: BearerError)
}

extension ATTBearer {
    /// Bearers without a fast path keep the default: `false`, read ``pdus`` instead.
    public func deliverPDUs(to receiver: any ATTPDUReceiver) -> Bool { false }

    /// Bearers that cannot pair or encrypt keep the default: `false`, the refusal stands.
    public func raiseSecurity(after refusal: SecurityRefusal) async -> Bool { false }

    /// Bearers that cannot tell keep the default: `nil`, the server keeps what its embedder set.
    public func linkSecurity() -> LinkSecurity? { nil }

    /// Bearers that cannot tell keep the default: `nil`, the server keeps what its embedder set.
    public func encryptionKeySize() -> UInt8? { nil }
}

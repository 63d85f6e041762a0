/// The subevent carried by an LE Meta event (`0x3E`, Core Vol 4 Part E 7.7.65): its wire
/// form is the subevent code followed by the subevent's parameters.
///
/// Subevents this stack does not decode are kept in ``unknown(subevent:parameters:)`` and
/// re-encode to the same bytes.
public enum LEMetaEvent: Hashable, Sendable {
    /// `0x01` LE Connection Complete, `0x0A` Enhanced Connection Complete v1 or `0x29` v2:
    /// one type, told apart by ``LEConnectionComplete/kind``.
    case connectionComplete(LEConnectionComplete)
    /// `0x02`: reports of legacy advertising PDUs, several per event.
    case advertisingReport([AdvertisingReport])
    /// `0x03`: new connection parameters are in use (or the update failed).
    case connectionUpdateComplete(ConnectionUpdateComplete)
    /// `0x04`: the peer's LE features (page 0), answering LE Read Remote Features.
    case readRemoteFeaturesComplete(ReadRemoteFeaturesComplete)
    /// `0x05`: the central started encryption; the peripheral's host answers with the key
    /// (LE Long Term Key Request Reply) or without (Negative Reply).
    case longTermKeyRequest(LongTermKeyRequest)
    /// `0x06`: the peer asks for new connection parameters; the host must reply.
    case remoteConnectionParameterRequest(RemoteConnectionParameterRequest)
    /// `0x07`: the link layer's maximum payload sizes or times changed.
    case dataLengthChange(DataLengthChange)
    /// `0x0C`: the PHYs in use changed (or an LE Set PHY failed).
    case phyUpdateComplete(PHYUpdateComplete)
    /// `0x0D`: reports of extended (or legacy, bit 4) advertising PDUs, several per event.
    case extendedAdvertisingReport([AdvertisingReport])
    /// `0x12`: an extended advertising set stopped: a central connected to it (connectable
    /// sets), its duration ran out or its event count was reached.
    case advertisingSetTerminated(AdvertisingSetTerminated)
    /// Any other subevent, kept with its raw parameters (without the subevent code).
    case unknown(subevent: UInt8, parameters: ArraySlice<UInt8>)

    /// The subevent code this event is sent with.
    public var subeventCode: UInt8 {
        switch self {
        case .connectionComplete(let e): return e.kind.subeventCode
        case .advertisingReport: return 0x02
        case .connectionUpdateComplete: return 0x03
        case .readRemoteFeaturesComplete: return 0x04
        case .longTermKeyRequest: return 0x05
        case .remoteConnectionParameterRequest: return 0x06
        case .dataLengthChange: return 0x07
        case .phyUpdateComplete: return 0x0C
        case .extendedAdvertisingReport: return 0x0D
        case .advertisingSetTerminated: return 0x12
        case .unknown(let subevent, _): return subevent
        }
    }

    /// The specification's name, e.g. `"LE Advertising Report"`; `"LE Unknown Subevent (0xNN)"`
    /// for a subevent code not in the table.
    public var name: String {
        Self.name(ofSubevent: subeventCode) ?? "LE Unknown Subevent (0x\(hex(subeventCode)))"
    }

    /// The specification's name for an LE subevent code (Core Vol 4 Part E 7.7.65, e.g. `0x02` →
    /// `"LE Advertising Report"`); `nil` for a code the specification does not assign.
    public static func name(ofSubevent code: UInt8) -> String? { subeventNames[code] }

    /// LE Connection Update Complete (`0x03`).
    public struct ConnectionUpdateComplete: Hashable, Sendable {
        public var status: HCIStatus
        public var connectionHandle: UInt16
        /// Connection interval in units of 1.25 ms.
        public var connectionInterval: UInt16
        /// Connection events the peripheral may skip.
        public var peripheralLatency: UInt16
        /// Supervision timeout in units of 10 ms.
        public var supervisionTimeout: UInt16

        public init(status: HCIStatus, connectionHandle: UInt16, connectionInterval: UInt16,
                    peripheralLatency: UInt16, supervisionTimeout: UInt16) {
            self.status = status
            self.connectionHandle = connectionHandle
            self.connectionInterval = connectionInterval
            self.peripheralLatency = peripheralLatency
            self.supervisionTimeout = supervisionTimeout
        }

        /// The connection interval in milliseconds.
        public var connectionIntervalMilliseconds: Double { Double(connectionInterval) * 1.25 }
        /// The supervision timeout in milliseconds.
        public var supervisionTimeoutMilliseconds: Int { Int(supervisionTimeout) * 10 }
    }

    /// LE Read Remote Features Complete (`0x04`; "Page 0" in Core 6.0).
    public struct ReadRemoteFeaturesComplete: Hashable, Sendable {
        public var status: HCIStatus
        public var connectionHandle: UInt16
        /// The peer's LE feature bits (Core Vol 6 Part B 4.6), bit 0 = LE Encryption.
        public var features: UInt64

        public init(status: HCIStatus, connectionHandle: UInt16, features: UInt64) {
            self.status = status
            self.connectionHandle = connectionHandle
            self.features = features
        }
    }

    /// LE Long Term Key Request (`0x05`): which key the central encrypts with, by the Rand and
    /// EDIV it sent (both 0 for a key of LE Secure Connections or pairing's STK).
    public struct LongTermKeyRequest: Hashable, Sendable {
        public var connectionHandle: UInt16
        public var random: UInt64
        public var encryptedDiversifier: UInt16

        public init(connectionHandle: UInt16, random: UInt64, encryptedDiversifier: UInt16) {
            self.connectionHandle = connectionHandle
            self.random = random
            self.encryptedDiversifier = encryptedDiversifier
        }
    }

    /// LE Remote Connection Parameter Request (`0x06`): answer with the Reply or Negative
    /// Reply command, or the peer may drop the link.
    public struct RemoteConnectionParameterRequest: Hashable, Sendable {
        public var connectionHandle: UInt16
        /// Minimum and maximum connection interval, units of 1.25 ms.
        public var intervalMin: UInt16
        public var intervalMax: UInt16
        /// Maximum peripheral latency, in connection events.
        public var maxLatency: UInt16
        /// Supervision timeout, units of 10 ms.
        public var timeout: UInt16

        public init(connectionHandle: UInt16, intervalMin: UInt16, intervalMax: UInt16,
                    maxLatency: UInt16, timeout: UInt16) {
            self.connectionHandle = connectionHandle
            self.intervalMin = intervalMin
            self.intervalMax = intervalMax
            self.maxLatency = maxLatency
            self.timeout = timeout
        }
    }

    /// LE Data Length Change (`0x07`): maximum link-layer payload octets and air times (µs).
    public struct DataLengthChange: Hashable, Sendable {
        public var connectionHandle: UInt16
        public var maxTXOctets: UInt16
        public var maxTXTime: UInt16
        public var maxRXOctets: UInt16
        public var maxRXTime: UInt16

        public init(connectionHandle: UInt16, maxTXOctets: UInt16, maxTXTime: UInt16,
                    maxRXOctets: UInt16, maxRXTime: UInt16) {
            self.connectionHandle = connectionHandle
            self.maxTXOctets = maxTXOctets
            self.maxTXTime = maxTXTime
            self.maxRXOctets = maxRXOctets
            self.maxRXTime = maxRXTime
        }
    }

    /// LE Advertising Set Terminated (`0x12`, 5 bytes).
    public struct AdvertisingSetTerminated: Hashable, Sendable {
        /// Success when a connection ended the set; Advertising Timeout (0x3C) when its
        /// duration ran out; Limit Reached (0x43) when its event count was reached.
        public var status: HCIStatus
        public var advertisingHandle: UInt8
        /// The connection that ended the set; meaningful only when ``status`` is success.
        public var connectionHandle: UInt16
        /// `Num_Completed_Extended_Advertising_Events`: events sent before the set stopped.
        public var completedEvents: UInt8

        public init(status: HCIStatus, advertisingHandle: UInt8, connectionHandle: UInt16, completedEvents: UInt8) {
            self.status = status
            self.advertisingHandle = advertisingHandle
            self.connectionHandle = connectionHandle
            self.completedEvents = completedEvents
        }
    }

    /// LE PHY Update Complete (`0x0C`).
    public struct PHYUpdateComplete: Hashable, Sendable {
        public var status: HCIStatus
        public var connectionHandle: UInt16
        public var txPHY: LEPHY
        public var rxPHY: LEPHY

        public init(status: HCIStatus, connectionHandle: UInt16, txPHY: LEPHY, rxPHY: LEPHY) {
            self.status = status
            self.connectionHandle = connectionHandle
            self.txPHY = txPHY
            self.rxPHY = rxPHY
        }
    }
}

/// An LE physical layer as HCI numbers it in events: `1` LE 1M, `2` LE 2M, `3` LE Coded.
/// `0` appears only as an extended advertising report's secondary PHY ("no packets").
public struct LEPHY: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    /// No packets on the secondary advertising channel (extended advertising reports only).
    public static let noPackets = LEPHY(0)
    public static let le1M = LEPHY(1)
    public static let le2M = LEPHY(2)
    public static let leCoded = LEPHY(3)

    /// `"LE 1M"`, `"LE 2M"`, `"LE Coded"`, `"none"`, or `"0xNN"` for other values.
    public var name: String {
        switch rawValue {
        case 0: "none"
        case 1: "LE 1M"
        case 2: "LE 2M"
        case 3: "LE Coded"
        default: "0x\(hex(rawValue))"
        }
    }

    public var description: String { name }
}

/// An LE connection was created (or creating it failed): the shared shape of LE Connection
/// Complete (`0x01`), LE Enhanced Connection Complete v1 (`0x0A`) and v2 (`0x29`), so upper
/// layers handle one type. ``kind`` holds what only the enhanced variants carry.
public struct LEConnectionComplete: Hashable, Sendable {
    /// Which event this came from, with the fields only that event has.
    public enum Kind: Hashable, Sendable {
        /// LE Connection Complete (`0x01`).
        case legacy
        /// LE Enhanced Connection Complete v1 (`0x0A`). A resolvable private address is
        /// all-zero when none was used.
        case enhanced(localResolvablePrivateAddress: BluetoothAddress,
                      peerResolvablePrivateAddress: BluetoothAddress)
        /// LE Enhanced Connection Complete v2 (`0x29`): adds the advertising set (`0xFF` none)
        /// and periodic advertising sync (`0xFFFF` none) that led to the connection.
        case enhancedV2(localResolvablePrivateAddress: BluetoothAddress,
                        peerResolvablePrivateAddress: BluetoothAddress,
                        advertisingHandle: UInt8, syncHandle: UInt16)

        /// The LE subevent code of this variant.
        public var subeventCode: UInt8 {
            switch self {
            case .legacy: 0x01
            case .enhanced: 0x0A
            case .enhancedV2: 0x29
            }
        }
    }

    /// The local device's role on the new connection.
    public enum Role: Hashable, Sendable, CustomStringConvertible {
        case central
        case peripheral
        case other(UInt8)

        @inlinable
        public init(rawValue: UInt8) {
            switch rawValue {
            case 0: self = .central
            case 1: self = .peripheral
            default: self = .other(rawValue)
            }
        }

        @inlinable
        public var rawValue: UInt8 {
            switch self {
            case .central: 0
            case .peripheral: 1
            case .other(let v): v
            }
        }

        public var description: String {
            switch self {
            case .central: "central"
            case .peripheral: "peripheral"
            case .other(let v): "0x\(hex(v))"
            }
        }
    }

    public var kind: Kind
    public var status: HCIStatus
    public var connectionHandle: UInt16
    public var role: Role
    /// `public`/`random`, or (enhanced variants) `publicIdentity`/`randomIdentity` when the
    /// controller resolved the peer's private address to ``peerAddress``.
    public var peerAddressType: LEAddressType
    public var peerAddress: BluetoothAddress
    /// Connection interval in units of 1.25 ms.
    public var connectionInterval: UInt16
    /// Connection events the peripheral may skip.
    public var peripheralLatency: UInt16
    /// Supervision timeout in units of 10 ms.
    public var supervisionTimeout: UInt16
    /// Central's sleep clock accuracy code `0...7` (500 ppm ... 20 ppm); see ``centralClockAccuracyPPM``.
    public var centralClockAccuracy: UInt8

    public init(kind: Kind = .legacy, status: HCIStatus, connectionHandle: UInt16, role: Role,
                peerAddressType: LEAddressType, peerAddress: BluetoothAddress,
                connectionInterval: UInt16, peripheralLatency: UInt16, supervisionTimeout: UInt16,
                centralClockAccuracy: UInt8) {
        self.kind = kind
        self.status = status
        self.connectionHandle = connectionHandle
        self.role = role
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.connectionInterval = connectionInterval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
        self.centralClockAccuracy = centralClockAccuracy
    }

    /// The peer's address with its type.
    public var peer: DeviceAddress { DeviceAddress(peerAddress, type: peerAddressType) }

    /// The connection interval in milliseconds.
    public var connectionIntervalMilliseconds: Double { Double(connectionInterval) * 1.25 }
    /// The supervision timeout in milliseconds.
    public var supervisionTimeoutMilliseconds: Int { Int(supervisionTimeout) * 10 }

    /// The central clock accuracy in ppm, `nil` for a reserved code.
    public var centralClockAccuracyPPM: Int? {
        switch centralClockAccuracy {
        case 0: 500
        case 1: 250
        case 2: 150
        case 3: 100
        case 4: 75
        case 5: 50
        case 6: 30
        case 7: 20
        default: nil
        }
    }

    /// Local resolvable private address used for the connection (enhanced variants only).
    public var localResolvablePrivateAddress: BluetoothAddress? {
        switch kind {
        case .legacy: nil
        case .enhanced(let local, _), .enhancedV2(let local, _, _, _): local
        }
    }

    /// The peer's resolvable private address as seen on air (enhanced variants only).
    public var peerResolvablePrivateAddress: BluetoothAddress? {
        switch kind {
        case .legacy: nil
        case .enhanced(_, let peer), .enhancedV2(_, let peer, _, _): peer
        }
    }

    /// Advertising set that produced this connection (v2 only; `0xFF` none).
    public var advertisingHandle: UInt8? {
        if case .enhancedV2(_, _, let handle, _) = kind { return handle }
        return nil
    }

    /// Periodic advertising sync that produced this connection (v2 only; `0xFFFF` none).
    public var syncHandle: UInt16? {
        if case .enhancedV2(_, _, _, let handle) = kind { return handle }
        return nil
    }
}

// MARK: - Decoding and encoding

extension LEMetaEvent: WireDecodable, WireEncodable {
    /// Decodes LE Meta event parameters: subevent code, then that subevent's parameters,
    /// which must fill `bytes` exactly.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> LEMetaEvent {
        guard let subevent = bytes.first else {
            throw WireError(.truncated(needed: 1, available: 0), at: bytes.startIndex, in: "HCI LE Meta event")
        }
        let parameters = bytes.dropFirst()
        switch subevent {
        case 0x01, 0x0A, 0x29:
            return .connectionComplete(try LEConnectionComplete.decode(subevent: subevent, from: parameters))

        case 0x02:
            return .advertisingReport(try AdvertisingReport.decodeLegacyReports(parameters))

        case 0x03:
            var r = ByteReader(parameters, context: "HCI LE Connection Update Complete event")
            let event = ConnectionUpdateComplete(
                status: HCIStatus(try r.readUInt8()), connectionHandle: try r.readUInt16(),
                connectionInterval: try r.readUInt16(), peripheralLatency: try r.readUInt16(),
                supervisionTimeout: try r.readUInt16())
            try r.expectEnd()
            return .connectionUpdateComplete(event)

        case 0x04:
            var r = ByteReader(parameters, context: "HCI LE Read Remote Features Complete event")
            let event = ReadRemoteFeaturesComplete(
                status: HCIStatus(try r.readUInt8()), connectionHandle: try r.readUInt16(),
                features: try r.readUInt64())
            try r.expectEnd()
            return .readRemoteFeaturesComplete(event)

        case 0x05:
            var r = ByteReader(parameters, context: "HCI LE Long Term Key Request event")
            let event = LongTermKeyRequest(connectionHandle: try r.readUInt16(), random: try r.readUInt64(),
                                           encryptedDiversifier: try r.readUInt16())
            try r.expectEnd()
            return .longTermKeyRequest(event)

        case 0x06:
            var r = ByteReader(parameters, context: "HCI LE Remote Connection Parameter Request event")
            let event = RemoteConnectionParameterRequest(
                connectionHandle: try r.readUInt16(), intervalMin: try r.readUInt16(),
                intervalMax: try r.readUInt16(), maxLatency: try r.readUInt16(), timeout: try r.readUInt16())
            try r.expectEnd()
            return .remoteConnectionParameterRequest(event)

        case 0x07:
            var r = ByteReader(parameters, context: "HCI LE Data Length Change event")
            let event = DataLengthChange(
                connectionHandle: try r.readUInt16(), maxTXOctets: try r.readUInt16(),
                maxTXTime: try r.readUInt16(), maxRXOctets: try r.readUInt16(), maxRXTime: try r.readUInt16())
            try r.expectEnd()
            return .dataLengthChange(event)

        case 0x0C:
            var r = ByteReader(parameters, context: "HCI LE PHY Update Complete event")
            let event = PHYUpdateComplete(
                status: HCIStatus(try r.readUInt8()), connectionHandle: try r.readUInt16(),
                txPHY: LEPHY(try r.readUInt8()), rxPHY: LEPHY(try r.readUInt8()))
            try r.expectEnd()
            return .phyUpdateComplete(event)

        case 0x0D:
            return .extendedAdvertisingReport(try AdvertisingReport.decodeExtendedReports(parameters))

        case 0x12:
            var r = ByteReader(parameters, context: "HCI LE Advertising Set Terminated event")
            let event = AdvertisingSetTerminated(
                status: HCIStatus(try r.readUInt8()), advertisingHandle: try r.readUInt8(),
                connectionHandle: try r.readUInt16(), completedEvents: try r.readUInt8())
            try r.expectEnd()
            return .advertisingSetTerminated(event)

        default:
            return .unknown(subevent: subevent, parameters: parameters)
        }
    }

    /// Writes the subevent code and the subevent's parameters.
    public func encode(into writer: inout ByteWriter) {
        writer.write(subeventCode)
        switch self {
        case .connectionComplete(let e):
            e.encodeParameters(into: &writer)
        case .advertisingReport(let reports):
            AdvertisingReport.encodeLegacyReports(reports, into: &writer)
        case .connectionUpdateComplete(let e):
            writer.write(e.status.rawValue)
            writer.write(e.connectionHandle)
            writer.write(e.connectionInterval)
            writer.write(e.peripheralLatency)
            writer.write(e.supervisionTimeout)
        case .readRemoteFeaturesComplete(let e):
            writer.write(e.status.rawValue)
            writer.write(e.connectionHandle)
            writer.write(e.features)
        case .longTermKeyRequest(let e):
            writer.write(e.connectionHandle)
            writer.write(e.random)
            writer.write(e.encryptedDiversifier)
        case .remoteConnectionParameterRequest(let e):
            writer.write(e.connectionHandle)
            writer.write(e.intervalMin)
            writer.write(e.intervalMax)
            writer.write(e.maxLatency)
            writer.write(e.timeout)
        case .dataLengthChange(let e):
            writer.write(e.connectionHandle)
            writer.write(e.maxTXOctets)
            writer.write(e.maxTXTime)
            writer.write(e.maxRXOctets)
            writer.write(e.maxRXTime)
        case .phyUpdateComplete(let e):
            writer.write(e.status.rawValue)
            writer.write(e.connectionHandle)
            writer.write(e.txPHY.rawValue)
            writer.write(e.rxPHY.rawValue)
        case .extendedAdvertisingReport(let reports):
            AdvertisingReport.encodeExtendedReports(reports, into: &writer)
        case .advertisingSetTerminated(let e):
            writer.write(e.status.rawValue)
            writer.write(e.advertisingHandle)
            writer.write(e.connectionHandle)
            writer.write(e.completedEvents)
        case .unknown(_, let parameters):
            writer.write(contentsOf: parameters)
        }
    }
}

extension LEConnectionComplete {
    /// Decodes the parameters (after the subevent code) of subevent `0x01`, `0x0A` or `0x29`.
    static func decode(subevent: UInt8, from parameters: ArraySlice<UInt8>) throws(WireError) -> LEConnectionComplete {
        let context = switch subevent {
        case 0x01: "HCI LE Connection Complete event"
        case 0x0A: "HCI LE Enhanced Connection Complete event"
        default: "HCI LE Enhanced Connection Complete v2 event"
        }
        var r = ByteReader(parameters, context: context)
        let status = HCIStatus(try r.readUInt8())
        let handle = try r.readUInt16()
        let role = Role(rawValue: try r.readUInt8())
        let peerType = LEAddressType(rawValue: try r.readUInt8())
        let peerAddress = try r.readAddress()
        var local = BluetoothAddress.any, peerRPA = BluetoothAddress.any
        if subevent != 0x01 {
            local = try r.readAddress()
            peerRPA = try r.readAddress()
        }
        let interval = try r.readUInt16()
        let latency = try r.readUInt16()
        let timeout = try r.readUInt16()
        let accuracy = try r.readUInt8()
        let kind: Kind
        switch subevent {
        case 0x01: kind = .legacy
        case 0x0A: kind = .enhanced(localResolvablePrivateAddress: local, peerResolvablePrivateAddress: peerRPA)
        default:
            kind = .enhancedV2(localResolvablePrivateAddress: local, peerResolvablePrivateAddress: peerRPA,
                               advertisingHandle: try r.readUInt8(), syncHandle: try r.readUInt16())
        }
        try r.expectEnd()
        return LEConnectionComplete(
            kind: kind, status: status, connectionHandle: handle, role: role,
            peerAddressType: peerType, peerAddress: peerAddress, connectionInterval: interval,
            peripheralLatency: latency, supervisionTimeout: timeout, centralClockAccuracy: accuracy)
    }

    /// Writes the parameters after the subevent code, in the layout of ``kind``.
    func encodeParameters(into writer: inout ByteWriter) {
        writer.write(status.rawValue)
        writer.write(connectionHandle)
        writer.write(role.rawValue)
        writer.write(peerAddressType.rawValue)
        writer.write(peerAddress)
        switch kind {
        case .legacy: break
        case .enhanced(let local, let peer), .enhancedV2(let local, let peer, _, _):
            writer.write(local)
            writer.write(peer)
        }
        writer.write(connectionInterval)
        writer.write(peripheralLatency)
        writer.write(supervisionTimeout)
        writer.write(centralClockAccuracy)
        if case .enhancedV2(_, _, let advertisingHandle, let syncHandle) = kind {
            writer.write(advertisingHandle)
            writer.write(syncHandle)
        }
    }
}

// One-byte code values carried in LE central commands (Core Vol 4 Part E 7.8). Each is a
// struct over its raw byte rather than an enum, so values a later specification adds are kept
// as they are and equal values always compare equal.

extension HCICommand {
    /// `Own_Address_Type`: which address the controller uses for its own PDUs.
    public struct OwnAddressType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// The controller's public address.
        public static let `public` = OwnAddressType(rawValue: 0)
        /// The random address set with LE Set Random Address.
        public static let random = OwnAddressType(rawValue: 1)
        /// A resolvable private address from the resolving list, else the public address.
        public static let resolvableOrPublic = OwnAddressType(rawValue: 2)
        /// A resolvable private address from the resolving list, else the random address.
        public static let resolvableOrRandom = OwnAddressType(rawValue: 3)

        public var description: String {
            switch rawValue {
            case 0: "public"
            case 1: "random"
            case 2: "resolvable or public"
            case 3: "resolvable or random"
            default: "0x\(hex(rawValue))"
            }
        }
    }

    /// `LE_Scan_Type`: passive scanning listens only; active scanning sends scan requests.
    public struct ScanType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let passive = ScanType(rawValue: 0)
        public static let active = ScanType(rawValue: 1)

        public var description: String {
            switch rawValue {
            case 0: "passive"
            case 1: "active"
            default: "0x\(hex(rawValue))"
            }
        }
    }

    /// `Scanning_Filter_Policy` (Core Vol 6 Part B 4.3.3).
    public struct ScanFilterPolicy: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Every advertisement, except directed ones not addressed to this device.
        public static let basicUnfiltered = ScanFilterPolicy(rawValue: 0)
        /// Only advertisers in the Filter Accept List.
        public static let basicFiltered = ScanFilterPolicy(rawValue: 1)
        /// Like ``basicUnfiltered``, also directed advertisements whose target is a resolvable private address.
        public static let extendedUnfiltered = ScanFilterPolicy(rawValue: 2)
        /// Like ``basicFiltered``, also directed advertisements whose target is a resolvable private address.
        public static let extendedFiltered = ScanFilterPolicy(rawValue: 3)

        public var description: String {
            switch rawValue {
            case 0: "basic unfiltered"
            case 1: "basic filtered"
            case 2: "extended unfiltered"
            case 3: "extended filtered"
            default: "0x\(hex(rawValue))"
            }
        }
    }

    /// `Initiator_Filter_Policy`: connect to the peer named in the command, or to any device
    /// in the Filter Accept List.
    public struct InitiatorFilterPolicy: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Use the peer address given in the command.
        public static let peerAddress = InitiatorFilterPolicy(rawValue: 0)
        /// Ignore the peer address; connect to any device in the Filter Accept List.
        public static let filterAcceptList = InitiatorFilterPolicy(rawValue: 1)

        public var description: String {
            switch rawValue {
            case 0: "peer address"
            case 1: "filter accept list"
            default: "0x\(hex(rawValue))"
            }
        }
    }

    /// `Filter_Duplicates` of LE Set Extended Scan Enable.
    public struct FilterDuplicates: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Report every advertisement received.
        public static let disabled = FilterDuplicates(rawValue: 0)
        /// Report each advertiser once until scanning is disabled.
        public static let enabled = FilterDuplicates(rawValue: 1)
        /// Report each advertiser once per scan period.
        public static let resetEachPeriod = FilterDuplicates(rawValue: 2)

        public var description: String {
            switch rawValue {
            case 0: "disabled"
            case 1: "enabled"
            case 2: "enabled, reset each period"
            default: "0x\(hex(rawValue))"
            }
        }
    }

    /// `Advertising_Type` of LE Set Advertising Parameters (legacy advertising PDUs).
    public struct AdvertisingType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// ADV_IND: connectable and scannable, undirected.
        public static let connectableUndirected = AdvertisingType(rawValue: 0)
        /// ADV_DIRECT_IND, high duty cycle.
        public static let connectableDirectedHighDuty = AdvertisingType(rawValue: 1)
        /// ADV_SCAN_IND: scannable, not connectable.
        public static let scannableUndirected = AdvertisingType(rawValue: 2)
        /// ADV_NONCONN_IND: neither connectable nor scannable.
        public static let nonConnectableUndirected = AdvertisingType(rawValue: 3)
        /// ADV_DIRECT_IND, low duty cycle.
        public static let connectableDirectedLowDuty = AdvertisingType(rawValue: 4)

        public var description: String {
            switch rawValue {
            case 0: "ADV_IND"
            case 1: "ADV_DIRECT_IND (high duty cycle)"
            case 2: "ADV_SCAN_IND"
            case 3: "ADV_NONCONN_IND"
            case 4: "ADV_DIRECT_IND (low duty cycle)"
            default: "0x\(hex(rawValue))"
            }
        }
    }

    /// `Advertising_Filter_Policy`: which scan and connection requests an advertiser accepts.
    public struct AdvertisingFilterPolicy: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Scan and connection requests from anyone.
        public static let acceptAll = AdvertisingFilterPolicy(rawValue: 0)
        /// Scan requests from the Filter Accept List only; connection requests from anyone.
        public static let filterScanRequests = AdvertisingFilterPolicy(rawValue: 1)
        /// Scan requests from anyone; connection requests from the Filter Accept List only.
        public static let filterConnectionRequests = AdvertisingFilterPolicy(rawValue: 2)
        /// Both only from the Filter Accept List.
        public static let filterAll = AdvertisingFilterPolicy(rawValue: 3)

        public var description: String {
            switch rawValue {
            case 0: "accept all"
            case 1: "filter scan requests"
            case 2: "filter connection requests"
            case 3: "filter all"
            default: "0x\(hex(rawValue))"
            }
        }
    }

    /// `Advertising_Channel_Map`: bit 0 channel 37, bit 1 channel 38, bit 2 channel 39.
    public struct AdvertisingChannels: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let channel37 = AdvertisingChannels(rawValue: 1 << 0)
        public static let channel38 = AdvertisingChannels(rawValue: 1 << 1)
        public static let channel39 = AdvertisingChannels(rawValue: 1 << 2)
        /// All three primary advertising channels (the default).
        public static let all: AdvertisingChannels = [.channel37, .channel38, .channel39]
    }
}

// MARK: - Units

/// Converts a count of `unit`-millisecond steps to milliseconds.
@inline(__always)
func hciMilliseconds(_ value: some BinaryInteger, unit: Double) -> Double {
    Double(value) * unit
}

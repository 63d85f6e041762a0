// The values of the peripheral role: what to advertise, and the advertisement that runs.

import RawbleWire

/// What a peripheral advertises and how: the data and scan response (typed AD structures),
/// whether centrals may connect, the interval, and what happens after a central connected.
public struct Advertisement: Hashable, Sendable {
    /// What advertising does once a central connected (the controller stops a connectable
    /// legacy advertisement, or an extended set, when a central connects to it).
    public enum Restart: Hashable, Sendable {
        /// Advertise again when that central disconnects: one central at a time (a strap).
        case afterDisconnection
        /// Advertise again at once, so more centrals can connect (if the controller refuses
        /// while connected, it is tried again after the disconnection).
        case afterConnection
        /// Stay silent; `Adapter.advertise(_:)` starts it again.
        case never
    }

    /// Which advertising commands to use.
    public enum Commands: Hashable, Sendable {
        /// Extended advertising (with legacy PDUs when the data fits 31 bytes) when the
        /// controller has it, else legacy advertising.
        case automatic
        /// LE Set Advertising Parameters / Data / Enable only.
        case legacy
        /// The extended advertising commands (required).
        case extended
    }

    /// The advertising data (flags, name, service UUIDs …).
    public var data: AdvertisingData
    /// The scan response, or `nil` for none (then the advertisement is not scannable unless
    /// it is connectable with legacy PDUs, whose ADV_IND always is).
    public var scanResponse: AdvertisingData?
    /// Whether centrals may connect.
    public var isConnectable: Bool
    /// Advertising interval range, units of 0.625 ms (0x20 = 20 ms … 0x4000 = 10.24 s for
    /// legacy advertising; extended takes up to 24 bits).
    public var intervalMin: UInt32
    public var intervalMax: UInt32
    /// The own address type; `nil` uses the adapter's own address (`ControllerInfo.ownAddress` in RawbleHost).
    public var ownAddressType: HCICommand.OwnAddressType?
    /// What happens after a central connected.
    public var restart: Restart
    public var commands: Commands

    /// - Parameters: interval in units of 0.625 ms; 100 ms (160) by default.
    public init(data: AdvertisingData, scanResponse: AdvertisingData? = nil, isConnectable: Bool = true,
                intervalMin: UInt32 = 160, intervalMax: UInt32 = 160,
                ownAddressType: HCICommand.OwnAddressType? = nil, restart: Restart = .afterDisconnection,
                commands: Commands = .automatic) {
        self.data = data
        self.scanResponse = scanResponse
        self.isConnectable = isConnectable
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.ownAddressType = ownAddressType
        self.restart = restart
        self.commands = commands
    }
}

/// An advertisement running on a controller: legacy, or the extended advertising set it uses.
public struct AdvertisingSet: Hashable, Sendable {
    /// The advertising handle (0 for legacy advertising).
    public let handle: UInt8
    /// Whether the extended advertising commands run it.
    public let isExtended: Bool
    /// The transmit power: the one the controller chose for an extended set, or legacy
    /// advertising's channel power when the controller reports it; dBm.
    public let txPower: Int8?

    public init(handle: UInt8, isExtended: Bool, txPower: Int8?) {
        self.handle = handle
        self.isExtended = isExtended
        self.txPower = txPower
    }
}

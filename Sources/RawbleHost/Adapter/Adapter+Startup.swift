// The start-up sequence: works on a minimal controller (only Reset, LE Read Buffer Size or
// Read Buffer Size, and LE Set Random Address are required) and adapts to what it supports.

import RawbleHostCore
import RawbleWire

extension Adapter {
    func runStartupSequence() async throws(HostError) {
        if configuration.owner == .kernel {
            try await learnKernelOwnedController()
            return
        }
        try await execute(.reset, timeout: configuration.resetTimeout)
        var info = controller

        if case .localVersion(let version)? = await optionally(.readLocalVersionInformation) {
            info.version = version
        }
        if case .supportedCommands(let supported)? = await optionally(.readLocalSupportedCommands) {
            info.supportedCommands = supported
        }
        var lmpFeatures: LMPFeatures?
        if info.supports(.readLocalSupportedFeatures, assumed: true),
           case .localFeatures(let features)? = await optionally(.readLocalSupportedFeatures) {
            lmpFeatures = features
        }
        // A dual-mode controller only runs LE procedures once the host says it supports LE.
        if let lmpFeatures, !lmpFeatures.contains(.brEDRNotSupported),
           info.supports(.writeLEHostSupport, assumed: false) {
            await optionally(.writeLEHostSupport(leSupportedHost: true))
        }
        if info.supports(.leReadLocalSupportedFeatures, assumed: true),
           case .leLocalFeatures(let features)? = await optionally(.leReadLocalSupportedFeatures) {
            info.leFeatures = features
        }
        if info.supports(.setEventMask, assumed: true) {
            await optionally(.setEventMask(.leCentralDefault))
        }
        if info.supports(.leSetEventMask, assumed: true) {
            await optionally(.leSetEventMask(.leHostDefault))
        }
        if case .deviceAddress(let address)? = await optionally(.readBDADDR), address != .any {
            info.publicAddress = address
        }

        try await chooseIdentity(info)

        let (length, count) = try await readBufferSizes(info)
        info.aclDataLength = Int(length)
        info.aclPacketCount = Int(count)
        do {
            links.useFlowControl(try ACLFlowControl(dataLength: length, totalPackets: count))
        } catch {
            throw .unsupported("LE ACL data (buffers: \(length) bytes × \(count))")
        }

        switch configuration.ownAddress {
        case .randomStatic(let chosen):
            let address = chosen ?? OwnAddressChoice.generateRandomStatic()
            try await execute(.leSetRandomAddress(address))
            info.ownAddress = DeviceAddress(address, type: .random)
        case .public:
            guard let address = info.publicAddress else {
                throw .unsupported("a public address (Read BD_ADDR gave none): use the random static own address")
            }
            info.ownAddress = DeviceAddress(address, type: .public)
        case .resolvablePrivate(let period):
            guard let identity = configuration.pairing?.identity else {
                throw .unsupported("a resolvable private own address without an identity to distribute (set the pairing configuration's identity: its IRK makes the addresses)")
            }
            guard period >= .seconds(1) else {
                throw .unsupported("a resolvable private address changed more often than once a second (\(period))")
            }
            let address = BluetoothAddress.resolvablePrivate(irk: identity.identityResolvingKey)
            try await execute(.leSetRandomAddress(address))
            info.ownAddress = DeviceAddress(address, type: .random)
            ownAddressRotation = OwnAddressRotation(irk: identity.identityResolvingKey, period: period)
        }

        let extended = info.leFeatures?.contains(.extendedAdvertising) ?? false
        info.usesExtendedScanning = extended
            && info.supports(.leSetExtendedScanParameters, assumed: false)
            && info.supports(.leSetExtendedScanEnable, assumed: false)
        info.usesExtendedCreateConnection = extended && info.supports(.leExtendedCreateConnection, assumed: false)
        controller = info
        logger.debug("controller ready: own address \(info.ownAddress), ACL \(length) bytes × \(count), \(info.usesExtendedScanning ? "extended" : "legacy") scanning")
    }

    /// Applies ``Configuration/identityForController``'s choice for this controller, if any.
    private func chooseIdentity(_ info: ControllerInfo) async throws(HostError) {
        guard let choose = configuration.identityForController else { return }
        let chosen: Identity
        do {
            chosen = try await choose(info)
        } catch let error as HostError {
            throw error
        } catch {
            throw .identityUnavailable("\(error)")
        }
        configuration.ownAddress = chosen.ownAddress
        configuration.pairing?.identity = chosen.pairing
        configuration.bonds = chosen.bonds
    }

    /// The kernel set the controller up: read what scanning needs, change nothing (no Reset,
    /// no event masks, no random address, no ACL buffers: the kernel owns them).
    private func learnKernelOwnedController() async throws(HostError) {
        var info = controller
        if case .localVersion(let version)? = await optionally(.readLocalVersionInformation) {
            info.version = version
        }
        if case .supportedCommands(let supported)? = await optionally(.readLocalSupportedCommands) {
            info.supportedCommands = supported
        }
        if case .leLocalFeatures(let features)? = await optionally(.leReadLocalSupportedFeatures) {
            info.leFeatures = features
        }
        guard case .deviceAddress(let address) = try await execute(.readBDADDR) else {
            throw .unsupported("Read BD_ADDR gave no address")
        }
        info.publicAddress = address
        info.ownAddress = DeviceAddress(address, type: .public)
        // As the kernel does: the extended commands whenever the controller has them (once
        // they were used, a Bluetooth 5 controller refuses the legacy ones until power-off).
        info.usesExtendedScanning = (info.leFeatures?.contains(.extendedAdvertising) ?? false)
            && info.supports(.leSetExtendedScanParameters, assumed: false)
            && info.supports(.leSetExtendedScanEnable, assumed: false)
        info.usesExtendedCreateConnection = false
        controller = info
        logger.debug("kernel's controller: address \(address), \(info.usesExtendedScanning ? "extended" : "legacy") scanning")
    }

    /// LE Read Buffer Size v2, else v1, else (when LE shares the BR/EDR buffers) Read Buffer Size.
    private func readBufferSizes(_ info: ControllerInfo) async throws(HostError) -> (UInt16, UInt16) {
        if info.supports(.leReadBufferSizeV2, assumed: false),
           case .leBufferSize(let size)? = await optionally(.leReadBufferSizeV2),
           size.aclDataPacketLength > 0, size.totalACLDataPackets > 0 {
            return (size.aclDataPacketLength, UInt16(size.totalACLDataPackets))
        }
        if info.supports(.leReadBufferSize, assumed: true),
           case .leBufferSize(let size)? = await optionally(.leReadBufferSize),
           size.aclDataPacketLength > 0, size.totalACLDataPackets > 0 {
            return (size.aclDataPacketLength, UInt16(size.totalACLDataPackets))
        }
        let shared = try await execute(.readBufferSize)
        guard case .bufferSize(let size) = shared, size.aclDataPacketLength > 0, size.totalACLDataPackets > 0 else {
            throw .unsupported("ACL data buffers (neither LE Read Buffer Size nor Read Buffer Size reported any)")
        }
        return (size.aclDataPacketLength, size.totalACLDataPackets)
    }

    /// Runs a command the host can do without: a refusal or timeout is logged, not thrown.
    /// Only the end of the transport is fatal, and the step after this one reports it.
    @discardableResult
    func optionally(_ command: HCICommand) async -> CommandReturn? {
        do {
            return try await execute(command)
        } catch {
            logger.notice("start-up: \(command.opcode) skipped: \(error)")
            return nil
        }
    }
}

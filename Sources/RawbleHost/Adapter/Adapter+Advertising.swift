// The peripheral role: advertising (legacy or extended, from what the controller supports),
// the links centrals make to it, and advertising again after them. On rawble's own host the
// adapter makes those links; on a kernel-owned controller the kernel does (they reach a
// listening L2CAP socket), and the adapter only follows them to advertise again.

import RawbleBearer
import RawbleHostCore
import RawbleWire

extension Adapter {
    /// The one advertising set the adapter uses with the extended commands.
    static let advertisingHandle: UInt8 = 0

    /// Whether the adapter would advertise with the extended commands: the controller has the
    /// Extended Advertising feature and the commands (as scanning chooses its commands).
    public var usesExtendedAdvertising: Bool {
        (controller.leFeatures?.contains(.extendedAdvertising) ?? false)
            && controller.supports(.leSetExtendedAdvertisingParameters, assumed: false)
            && controller.supports(.leSetExtendedAdvertisingData, assumed: false)
            && controller.supports(.leSetExtendedAdvertisingEnable, assumed: false)
    }

    /// Starts advertising. Extended advertising is used when the controller has it (legacy
    /// PDUs when the data fits 31 bytes, so every scanner sees it), else legacy advertising.
    /// Centrals that connect arrive on ``incomingConnections``; what happens to advertising
    /// then is `Advertisement.restart`.
    /// - Throws: ``HostError/advertisingDataTooLong(_:length:maximum:)`` when the data or scan
    ///   response does not fit (31 bytes legacy, the controller's maximum extended);
    ///   ``HostError/busy(_:)`` when an advertisement already runs; ``HostError/cancelled``
    ///   when ``stopAdvertising()`` came while it started (advertising is switched off again);
    ///   ``HostError/unsupported(_:)`` for combinations extended PDUs cannot carry.
    /// On a kernel-owned controller the commands go through the raw channel (as BlueZ's daemon
    /// sends them through mgmt) and the links are the kernel's: nothing arrives on
    /// ``incomingConnections``; a listening L2CAP socket takes them.
    @discardableResult
    public func advertise(_ advertisement: Advertisement) async throws(HostError) -> AdvertisingSet {
        if let failure { throw failure }
        if advertiser.running == nil { await changeOwnAddressIfDue() }
        if let failure { throw failure }
        guard advertiser.running == nil else { throw .busy("an advertisement already runs on this adapter: stop it first") }
        advertiser.generation += 1
        let generation = advertiser.generation
        // A central may connect as soon as the controller advertises, before this call resumes
        // after the enable (its LE Connection Complete can come in the same read): it is
        // accepted for the advertisement starting now.
        advertiser.starting = advertisement
        advertiser.connectedWhileStarting = false
        defer { if advertiser.generation == generation { advertiser.starting = nil } }
        let extended: Bool
        switch advertisement.commands {
        case .automatic: extended = usesExtendedAdvertising
        case .legacy: extended = false
        case .extended:
            guard usesExtendedAdvertising else { throw .unsupported("extended advertising") }
            extended = true
        }
        let set = extended ? try await startExtendedAdvertising(advertisement)
                           : try await startLegacyAdvertising(advertisement)
        // A stop (or close) that came while the commands ran wins: the advertising just
        // enabled is switched off again.
        if let failure { throw failure }
        guard advertiser.generation == generation else {
            do {
                if set.isExtended {
                    try await execute(.leSetExtendedAdvertisingEnable(.one(.init(handle: set.handle), enable: false)))
                } else {
                    try await execute(.leSetAdvertisingEnable(false))
                }
            } catch {
                logger.warning("advertising stopped while it started: switching it off failed: \(error)")
            }
            throw .cancelled
        }
        // The controller stopped advertising for a central that connected meanwhile.
        let connected = advertiser.connectedWhileStarting
        advertiser.running = Advertiser.Running(advertisement: advertisement, set: set, isOn: !connected)
        if connected, advertisement.restart == .afterConnection { restartAdvertising() }
        logger.debug("advertising (\(extended ? "extended" : "legacy"), \(advertisement.isConnectable ? "connectable" : "not connectable"))")
        return set
    }

    /// Stops advertising, if it runs (the controller's advertising is switched off and an
    /// extended set removed). Links centrals already made stay up.
    public func stopAdvertising() async throws(HostError) {
        advertiser.generation += 1
        advertiser.starting = nil
        guard let running = advertiser.running else { return }
        advertiser.running = nil
        if running.set.isExtended {
            let handle = running.set.handle
            try await execute(.leSetExtendedAdvertisingEnable(.one(.init(handle: handle), enable: false)))
            try await execute(.leRemoveAdvertisingSet(handle: handle))
        } else {
            // Disabling advertising that a connection already stopped has no effect (7.8.9).
            try await execute(.leSetAdvertisingEnable(false))
        }
        logger.debug("advertising stopped")
    }

    private func ownAddressType(for advertisement: Advertisement) -> HCICommand.OwnAddressType {
        advertisement.ownAddressType ?? (controller.ownAddress.type == .random ? .random : .public)
    }

    private func startLegacyAdvertising(_ advertisement: Advertisement) async throws(HostError) -> AdvertisingSet {
        let maximum = AdvertisingData.maximumLegacyCount
        guard let data = HCICommand.AdvertisingPayload(advertisement.data.bytes) else {
            throw .advertisingDataTooLong("advertising data", length: advertisement.data.bytes.count, maximum: maximum)
        }
        var response: HCICommand.AdvertisingPayload?
        if let scanResponse = advertisement.scanResponse {
            guard let payload = HCICommand.AdvertisingPayload(scanResponse.bytes) else {
                throw .advertisingDataTooLong("scan response", length: scanResponse.bytes.count, maximum: maximum)
            }
            response = payload
        }
        guard advertisement.intervalMin <= 0x4000, advertisement.intervalMax <= 0x4000 else {
            throw .unsupported("a legacy advertising interval above 0x4000 (10.24 s)")
        }
        let type: HCICommand.AdvertisingType = advertisement.isConnectable ? .connectableUndirected
            : response != nil ? .scannableUndirected : .nonConnectableUndirected
        try await execute(.leSetAdvertisingParameters(HCICommand.AdvertisingParameters(
            intervalMin: UInt16(advertisement.intervalMin), intervalMax: UInt16(advertisement.intervalMax),
            type: type, ownAddressType: ownAddressType(for: advertisement))))
        try await execute(.leSetAdvertisingData(data))
        if let response { try await execute(.leSetScanResponseData(response)) }
        var txPower: Int8?
        if controller.supports(.leReadAdvertisingPhysicalChannelTxPower, assumed: false),
           case .advertisingTxPower(let power)? = await optionally(.leReadAdvertisingPhysicalChannelTxPower) {
            txPower = power
        }
        try await execute(.leSetAdvertisingEnable(true))
        return AdvertisingSet(handle: 0, isExtended: false, txPower: txPower)
    }

    private func startExtendedAdvertising(_ advertisement: Advertisement) async throws(HostError) -> AdvertisingSet {
        let handle = Self.advertisingHandle
        let data = Array(advertisement.data.bytes)
        let response = advertisement.scanResponse.map { Array($0.bytes) }
        let legacyPDUs = data.count <= AdvertisingData.maximumLegacyCount
            && (response?.count ?? 0) <= AdvertisingData.maximumLegacyCount
        var properties: HCICommand.AdvertisingEventProperties = []
        if legacyPDUs {
            properties = advertisement.isConnectable ? [.legacy, .connectable, .scannable]
                : response != nil ? [.legacy, .scannable] : [.legacy]
        } else {
            let maximum = try await maximumExtendedDataLength()
            if data.count > maximum {
                throw .advertisingDataTooLong("advertising data", length: data.count, maximum: maximum)
            }
            if let response, response.count > maximum {
                throw .advertisingDataTooLong("scan response", length: response.count, maximum: maximum)
            }
            // Extended PDUs are connectable or scannable, never both; a scannable set's data is
            // all in its scan response (Core Vol 4 Part E 7.8.53, 7.8.54).
            if advertisement.isConnectable {
                guard response == nil else {
                    throw .unsupported("a scan response with connectable extended advertising (over 31 bytes: give no scan response)")
                }
                properties = [.connectable]
            } else if response != nil {
                guard data.isEmpty else {
                    throw .unsupported("advertising data with a scannable extended advertisement (over 31 bytes: put it all in the scan response)")
                }
                properties = [.scannable]
            }
        }
        let own = ownAddressType(for: advertisement)
        // A set that survived a previous host (Bumble's Reset keeps them) is replaced.
        _ = await optionally(.leRemoveAdvertisingSet(handle: handle))
        let selected = try await execute(.leSetExtendedAdvertisingParameters(HCICommand.ExtendedAdvertisingParameters(
            handle: handle, properties: properties, intervalMin: advertisement.intervalMin,
            intervalMax: advertisement.intervalMax, ownAddressType: own)))
        if own == .random || own == .resolvableOrRandom, controller.ownAddress.type == .random {
            try await execute(.leSetAdvertisingSetRandomAddress(handle: handle, address: controller.ownAddress.address))
        }
        for fragment in HCICommand.AdvertisingDataFragment.fragments(of: data, handle: handle) {
            try await execute(.leSetExtendedAdvertisingData(fragment))
        }
        if let response {
            for fragment in HCICommand.AdvertisingDataFragment.fragments(of: response, handle: handle) {
                try await execute(.leSetExtendedScanResponseData(fragment))
            }
        }
        try await execute(.leSetExtendedAdvertisingEnable(.one(.init(handle: handle), enable: true)))
        var txPower: Int8?
        if case .selectedTxPower(let power) = selected { txPower = power }
        return AdvertisingSet(handle: handle, isExtended: true, txPower: txPower)
    }

    /// LE Read Maximum Advertising Data Length, read once; 251 (one command) when the
    /// controller does not say.
    private func maximumExtendedDataLength() async throws(HostError) -> Int {
        if let known = advertiser.maximumExtendedDataLength { return known }
        var maximum = HCICommand.AdvertisingDataFragment.maximumCount
        if controller.supports(.leReadMaximumAdvertisingDataLength, assumed: false),
           case .maximumAdvertisingDataLength(let length)? = await optionally(.leReadMaximumAdvertisingDataLength) {
            maximum = min(Int(length), AdvertisingData.maximumExtendedCount)
        }
        advertiser.maximumExtendedDataLength = maximum
        return maximum
    }

    // MARK: Centrals connecting

    /// A central connected to the advertisement: the link is handed out on
    /// ``incomingConnections`` (as ``Connection``, with its ATT bearer), and advertising,
    /// which the controller stopped, may start again. `false` when nothing advertises (the
    /// caller lets the link go).
    func acceptIncomingConnection(_ record: ConnectionRecord) -> Bool {
        guard let advertisement = advertiser.running?.advertisement ?? advertiser.starting,
              advertisement.isConnectable else { return false }
        record.claimed = true
        record.signaling = LESignalingResponder(signalingMTU: record.signaling.signalingMTU, isPeripheral: true)
        advertiser.acceptedHandles.insert(record.handle)
        if var running = advertiser.running {
            running.isOn = false
            advertiser.running = running
        } else {
            advertiser.connectedWhileStarting = true
        }
        let bearer = L2CAPATTBearer(adapter: self, lifetime: record.lifetime, inbox: record.attInbox)
        let connection = Connection(handle: record.handle, peer: record.peer, parameters: record.parameters,
                                    att: bearer, adapter: self, lifetime: record.lifetime)
        logger.debug("\(record.peer) connected to the advertisement, handle 0x\(String(record.handle, radix: 16))")
        incomingContinuation.yield(connection)
        if advertiser.running != nil, advertisement.restart == .afterConnection { restartAdvertising() }
        return true
    }

    /// On a kernel-owned controller: a central connected to the advertisement (the kernel
    /// owns the link, so no ``Connection`` is made). The controller stopped advertising; it
    /// starts again as the advertisement's restart says. `false` when nothing advertises.
    @discardableResult
    func noteKernelAcceptedConnection(_ complete: LEConnectionComplete) -> Bool {
        guard complete.role == .peripheral, complete.status.isSuccess,
              let advertisement = advertiser.running?.advertisement ?? advertiser.starting,
              advertisement.isConnectable else { return false }
        advertiser.acceptedHandles.insert(complete.connectionHandle)
        if var running = advertiser.running {
            running.isOn = false
            advertiser.running = running
        } else {
            advertiser.connectedWhileStarting = true
        }
        logger.debug("\(complete.peer) connected to the advertisement through the kernel, handle 0x\(String(complete.connectionHandle, radix: 16))")
        if advertiser.running != nil, advertisement.restart == .afterConnection { restartAdvertising() }
        return true
    }

    /// A link a central made ended: advertising starts again when its restart says so.
    func acceptedLinkEnded(_ handle: UInt16) {
        guard advertiser.acceptedHandles.remove(handle) != nil, let running = advertiser.running,
              !running.isOn, running.advertisement.restart != .never else { return }
        restartAdvertising()
    }

    /// An extended set stopped by itself (a connection, its duration, its event count).
    func advertisingSetTerminated(_ event: LEMetaEvent.AdvertisingSetTerminated) {
        guard var running = advertiser.running, running.set.isExtended,
              running.set.handle == event.advertisingHandle else { return }
        running.isOn = false
        advertiser.running = running
        if !event.status.isSuccess {
            logger.notice("advertising set \(event.advertisingHandle) ended: \(event.status)")
        }
    }

    /// Switches the running advertisement on again (its parameters and data are still set).
    private func restartAdvertising() {
        let generation = advertiser.generation
        Task {
            guard self.advertiser.generation == generation, self.advertiser.running?.isOn == false else { return }
            // Advertising is off: a due change of the own address is made before it is back on.
            await self.changeOwnAddressIfDue()
            guard self.advertiser.generation == generation, let running = self.advertiser.running,
                  !running.isOn, self.failure == nil else { return }
            let command: HCICommand = running.set.isExtended
                ? .leSetExtendedAdvertisingEnable(.one(.init(handle: running.set.handle), enable: true))
                : .leSetAdvertisingEnable(true)
            do {
                try await self.execute(command)
            } catch {
                // E.g. Command Disallowed: the controller cannot take another central now.
                self.logger.notice("advertising could not start again: \(error)")
                return
            }
            guard self.advertiser.generation == generation, var now = self.advertiser.running else { return }
            now.isOn = true
            self.advertiser.running = now
            self.logger.debug("advertising again")
        }
    }
}

/// The adapter's advertising state, used only on its executor.
final class Advertiser {
    /// The advertisement the caller asked for, while it is not stopped.
    struct Running {
        let advertisement: Advertisement
        let set: AdvertisingSet
        /// Whether the controller advertises now (a connection stops it).
        var isOn: Bool
    }

    var running: Running?
    /// The advertisement ``Adapter/advertise(_:)`` is starting (its commands under way).
    var starting: Advertisement?
    /// A central connected to ``starting`` before it was running.
    var connectedWhileStarting = false
    /// The links centrals made to this advertisement: a disconnection may restart it.
    var acceptedHandles: Set<UInt16> = []
    /// LE Read Maximum Advertising Data Length, once read.
    var maximumExtendedDataLength: Int?
    /// Ids of advertise/stop calls: a restart started for an old advertisement does nothing.
    var generation: UInt64 = 0
}

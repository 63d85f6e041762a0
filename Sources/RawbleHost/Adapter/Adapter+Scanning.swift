import RawbleHostCore
import RawbleWire

extension Adapter {
    /// Starts scanning and returns the devices found, as ``ScanOptions`` says. Extended
    /// scanning commands are used when the controller has them; legacy and extended reports
    /// are parsed either way. The scan stops when the sequence's consumer stops, after the
    /// options' ``ScanOptions/duration``, or on ``stopScanning()``; the sequence throws when the
    /// transport ends.
    /// - Throws: ``HostError/busy(_:)`` when a scan is already running.
    public func scan(_ options: ScanOptions = ScanOptions()) async throws(HostError) -> AsyncThrowingStream<DiscoveredDevice, any Error> {
        // A scan whose consumer already stopped is stopping: finish that here rather than
        // answer busy. The previous Set Scan Enable (off) goes first, or it would stop this one.
        if scanner.current?.consumerEnded.isSet == true { try? await stopScanning() }
        if let stop = scanStop { _ = await stop.value }
        await changeOwnAddressIfDue()
        if let failure { throw failure }
        guard !scanner.isRunning else { throw .busy("a scan is already running on this adapter") }
        nextSessionID += 1
        let id = nextSessionID
        let (devices, output) = AsyncThrowingStream.makeStream(
            of: DiscoveredDevice.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(4096))
        let session = ScanSession(id: id, options: options, output: output)
        scanner.start(session)
        let consumerEnded = session.consumerEnded
        output.onTermination = { _ in
            consumerEnded.set()
            Task { await self.scanConsumerEnded(id) }
        }
        do {
            try await enableScanning(session)
        } catch {
            scanner.end(session)
            session.finish(throwing: error)
            throw error
        }
        if let duration = options.duration {
            Task {
                try? await self.clock.sleep(for: duration)
                guard self.scanner.current === session else { return }
                try? await self.stopScanning()
            }
        }
        return devices
    }

    /// Stops the running scan (if any): its sequence finishes, then scanning is disabled.
    /// When a stop is already on its way (the consumer ended, or another caller), this waits for
    /// that one to reach the controller, so whoever closes next never cuts it off.
    public func stopScanning() async throws(HostError) {
        if let session = scanner.end() {
            session.finish()
            // Its own task: the caller's cancellation must not keep the controller scanning.
            scanStop = Task { () -> Result<Void, HostError> in
                // A resume under way sends its enable first; the disable comes after it.
                if let resume = self.scanResume { await resume.value }
                let extended = session.usesExtendedCommands
                do throws(HostError) {
                    if session.controlled, let control = self.configuration.scanControl {
                        try await control.stopScanning()
                        return .success(())
                    }
                    // Another program's scan: switched off, the kernel would still believe it
                    // scans, and find and connect nothing more until the adapter restarts.
                    if session.sharesForeignScan { return .success(()) }
                    try await self.setScanEnabled(false, extended: extended, filterDuplicates: false)
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
        }
        guard let stop = scanStop else { return }
        let result = await stop.value
        if scanStop == stop { scanStop = nil }
        try result.get()
    }

    /// On a controller the kernel owns, others send commands too: the kernel disables scanning
    /// whenever it sees no use for it (e.g. once one of its connections ended), a scan rawble
    /// runs included, and its reports stop without a word. A running scan whose consumer still
    /// reads is switched on again, with its own parameters (the kernel may have set others).
    ///
    /// Another program switching scanning on while a scan of the adapter's own commands runs
    /// makes that scan the other program's (its parameters, its to stop): the session reads it
    /// and no longer switches it off.
    func noticeForeignCommand(_ command: HCICommand) {
        let enabled: Bool? = switch command {
        case .leSetScanEnable(let enable, _): enable
        case .leSetExtendedScanEnable(let parameters): parameters.enable
        default: nil
        }
        // A scan the kernel runs for us is the kernel's to switch on again (its ScanControl).
        guard let enabled, let session = scanner.current, !session.controlled else { return }
        if enabled {
            if !session.sharesForeignScan {
                logger.debug("another program on the adapter (the kernel?) switched scanning on: reading its scan, which it stops")
            }
            session.sharesForeignScan = true
            return
        }
        // Whoever's it was, no scan runs now.
        session.sharesForeignScan = false
        guard !session.consumerEnded.isSet, scanStop == nil, scanResume == nil else { return }
        logger.notice("another program on the adapter (the kernel?) stopped scanning: scanning again")
        scanResume = Task {
            defer { self.scanResume = nil }
            // The kernel switches scanning off first when it starts a scan of its own (its
            // discovery, with its parameters): its enable follows within milliseconds, and a
            // scan of ours in between would make its parameters fail.
            try? await self.clock.sleep(for: Self.foreignScanSettleTime)
            guard self.scanner.current === session, !session.consumerEnded.isSet, self.scanStop == nil,
                  !session.sharesForeignScan else { return }
            do {
                try await self.enableScanning(session)
            } catch {
                self.logger.warning("could not scan again after another program stopped it: \(error)")
            }
        }
    }

    /// How long after another program switched scanning off the adapter's own scan starts
    /// again, unless that program switched it on again meanwhile.
    public static let foreignScanSettleTime: Duration = .milliseconds(300)

    private func scanConsumerEnded(_ id: UInt64) async {
        guard scanner.current?.id == id else { return }
        try? await stopScanning()
    }

    private func enableScanning(_ session: ScanSession, mayTryExtended: Bool = true) async throws(HostError) {
        let options = session.options
        if let control = configuration.scanControl, !session.declinedControl {
            switch try await control.startScanning(active: options.active) {
            case .scanning:
                session.controlled = true
                return
            case .declined(let reason):
                logger.notice("scanning with the adapter's own commands: \(reason)")
                session.declinedControl = true
            }
        }
        let own: HCICommand.OwnAddressType = controller.ownAddress.type == .random ? .random : .public
        let type: HCICommand.ScanType = options.active ? .active : .passive
        // The controller's duplicate filter stays off: most filter by address alone, which would
        // hide a device's changed data and RSSI. The aggregator decides what is new instead.
        let filterDuplicates = false
        if controller.usesExtendedScanning {
            let parameters = HCICommand.ExtendedScanParameters(
                ownAddressType: own, filterPolicy: .basicUnfiltered,
                le1M: HCICommand.PHYScanParameters(type: type, interval: options.interval, window: options.window))
            do {
                session.usesExtendedCommands = true
                guard try await setScanParameters(.leSetExtendedScanParameters(parameters), extended: true) else {
                    shareForeignScan(session)
                    return
                }
                try await setScanEnabled(true, extended: true, filterDuplicates: filterDuplicates)
                session.sharesForeignScan = false
                return
            } catch {
                guard case .commandFailed(_, .unknownCommand) = error else { throw error }
                logger.notice("extended scanning refused (\(error)): falling back to legacy scanning")
                controller.usesExtendedScanning = false
                session.usesExtendedCommands = false
            }
        }
        let parameters = HCICommand.ScanParameters(type: type, interval: options.interval, window: options.window,
                                                   ownAddressType: own, filterPolicy: .basicUnfiltered)
        do throws(HostError) {
            guard try await setScanParameters(.leSetScanParameters(parameters), extended: false) else {
                // On a kernel-owned controller: Command Disallowed. A Bluetooth 5 controller
                // refuses the legacy commands once the extended ones were used (below), else
                // another program scans.
                throw HostError.commandFailed(.leSetScanParameters, .commandDisallowed)
            }
            try await setScanEnabled(true, extended: false, filterDuplicates: filterDuplicates)
            session.sharesForeignScan = false
        } catch {
            // A Bluetooth 5 controller refuses the legacy commands once the extended ones were
            // used since power-on (Core Vol 4 Part E 3.1.1), e.g. by the kernel or another host,
            // even when its features do not claim extended advertising: switch, if it has them.
            guard case .commandFailed(_, .commandDisallowed) = error, mayTryExtended,
                  controller.supports(.leSetExtendedScanParameters, assumed: false),
                  controller.supports(.leSetExtendedScanEnable, assumed: false) else {
                if case .commandFailed(.leSetScanParameters, .commandDisallowed) = error, configuration.owner == .kernel {
                    shareForeignScan(session)
                    return
                }
                throw error
            }
            logger.notice("legacy scanning refused (\(error)): the extended commands were used since power-on; scanning with them")
            controller.usesExtendedScanning = true
            try await enableScanning(session, mayTryExtended: false)
        }
    }

    /// Sets the scan parameters; `false` when the controller scans for another program.
    ///
    /// Parameters cannot change while the controller scans (Command Disallowed, Core Vol 4
    /// Part E 7.8.10). On a controller rawble's host owns, that scan is one a previous host left
    /// (Bumble's Reset does not stop it either): it is switched off and the parameters set
    /// again. On one the kernel owns it is the kernel's (its discovery for bluetoothd, or its
    /// scan for a connection it makes), and switching it off would leave the kernel believing
    /// it scans: its discovery would never end or find anything again, and it would make no LE
    /// connection until the adapter restarts. That scan is left alone.
    private func setScanParameters(_ command: HCICommand, extended: Bool) async throws(HostError) -> Bool {
        do {
            try await execute(command)
            return true
        } catch {
            guard case .commandFailed(_, .commandDisallowed) = error else { throw error }
            if configuration.owner == .kernel { return false }
            try await setScanEnabled(false, extended: extended, filterDuplicates: false)
            try await execute(command)
            return true
        }
    }

    /// The controller the kernel owns already scans for another program: `session` reads that
    /// scan's reports (with its parameters: bluetoothd's discovery scans actively) and leaves
    /// it running when it ends.
    private func shareForeignScan(_ session: ScanSession) {
        logger.notice("the adapter already scans for another program (the kernel, for bluetoothd or a connection): reading that scan, which is left running")
        session.sharesForeignScan = true
    }

    /// Switches scanning on or off. Switching it off when it is already off is done, whatever
    /// the controller answers: some (Broadcom's among them) answer Command Disallowed, where the
    /// specification lets the command succeed. The kernel (or another host) may have stopped a
    /// scan rawble started, so that answer comes in the field on every stop.
    private func setScanEnabled(_ enabled: Bool, extended: Bool, filterDuplicates: Bool) async throws(HostError) {
        do {
            if extended {
                try await execute(.leSetExtendedScanEnable(HCICommand.ExtendedScanEnable(
                    enable: enabled, filterDuplicates: filterDuplicates ? .enabled : .disabled)))
            } else {
                try await execute(.leSetScanEnable(enable: enabled, filterDuplicates: filterDuplicates))
            }
        } catch {
            guard !enabled, case .commandFailed(_, .commandDisallowed) = error else { throw error }
            logger.debug("scanning off: the controller answers Command Disallowed (it is off already)")
        }
    }
}

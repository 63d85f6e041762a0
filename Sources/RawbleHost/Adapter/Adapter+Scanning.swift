extension Adapter {
    /// Starts scanning and returns the devices found, as ``ScanOptions`` says. Extended
    /// scanning commands are used when the controller has them; legacy and extended reports
    /// are parsed either way. The scan stops when the sequence's consumer stops (or on
    /// ``stopScanning()``); the sequence throws when the transport ends.
    /// - Throws: ``HostError/busy(_:)`` when a scan is already running.
    public func scan(_ options: ScanOptions = ScanOptions()) async throws(HostError) -> AsyncThrowingStream<DiscoveredDevice, any Error> {
        // A scan whose consumer already stopped is stopping: finish that here rather than
        // answer busy. The previous Set Scan Enable (off) goes first, or it would stop this one.
        if scanner.current?.consumerEnded.isSet == true { try? await stopScanning() }
        if let stop = scanStop { _ = await stop.value }
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
    func noticeForeignCommand(_ command: HCICommand) {
        let disabled: Bool = switch command {
        case .leSetScanEnable(let enable, _): !enable
        case .leSetExtendedScanEnable(let parameters): !parameters.enable
        default: false
        }
        // A scan the kernel runs for us is the kernel's to switch on again (its ScanControl).
        guard disabled, let session = scanner.current, !session.controlled, !session.consumerEnded.isSet,
              scanStop == nil, scanResume == nil else { return }
        logger.notice("another program on the adapter (the kernel?) stopped scanning: scanning again")
        scanResume = Task {
            defer { self.scanResume = nil }
            guard self.scanner.current === session, !session.consumerEnded.isSet, self.scanStop == nil else { return }
            do {
                try await self.enableScanning(session)
            } catch {
                self.logger.warning("could not scan again after another program stopped it: \(error)")
            }
        }
    }

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
                try await executeDisablingScanIfBusy(.leSetExtendedScanParameters(parameters), extended: true)
                session.usesExtendedCommands = true
                try await setScanEnabled(true, extended: true, filterDuplicates: filterDuplicates)
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
        do {
            try await executeDisablingScanIfBusy(.leSetScanParameters(parameters), extended: false)
            try await setScanEnabled(true, extended: false, filterDuplicates: filterDuplicates)
        } catch {
            // A Bluetooth 5 controller refuses the legacy commands once the extended ones were
            // used since power-on (Core Vol 4 Part E 3.1.1), e.g. by the kernel or another host,
            // even when its features do not claim extended advertising: switch, if it has them.
            guard case .commandFailed(_, .commandDisallowed) = error, mayTryExtended,
                  controller.supports(.leSetExtendedScanParameters, assumed: false),
                  controller.supports(.leSetExtendedScanEnable, assumed: false) else { throw error }
            logger.notice("legacy scanning refused (\(error)): the extended commands were used since power-on; scanning with them")
            controller.usesExtendedScanning = true
            try await enableScanning(session, mayTryExtended: false)
        }
    }

    /// Scan parameters cannot change while the controller scans (a previous host may have left
    /// it scanning, and Bumble's Reset does not stop it): disable once and retry.
    private func executeDisablingScanIfBusy(_ command: HCICommand, extended: Bool) async throws(HostError) {
        do {
            try await execute(command)
        } catch {
            guard case .commandFailed(_, .commandDisallowed) = error else { throw error }
            try await setScanEnabled(false, extended: extended, filterDuplicates: false)
            try await execute(command)
        }
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

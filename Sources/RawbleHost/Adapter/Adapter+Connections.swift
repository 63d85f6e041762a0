import RawbleBearer
import RawbleHostCore
import RawbleSMP
import RawbleWire

/// A connection attempt in progress: the result lands here whether or not anyone is awaiting it yet.
final class PendingConnection {
    /// Why the host called the attempt off (with LE Create Connection Cancel).
    enum Abandonment {
        case timedOut, cancelled
    }

    let id: UInt64
    let peer: DeviceAddress
    let timeout: Duration
    var abandoned: Abandonment?
    /// Gives up on the attempt after `timeout`; cancelled once it ends.
    var timer: Task<Void, Never>?
    private var result: Result<LEConnectionComplete, HostError>?
    private var continuation: CheckedContinuation<Result<LEConnectionComplete, HostError>, Never>?

    /// What the caller learns when the attempt was called off.
    var abandonmentError: HostError {
        abandoned == .cancelled ? .cancelled : .connectionTimedOut(peer, seconds: timeout.seconds)
    }

    init(id: UInt64, peer: DeviceAddress, timeout: Duration) {
        self.id = id
        self.peer = peer
        self.timeout = timeout
    }

    var isFinished: Bool { result != nil }

    func finish(_ result: Result<LEConnectionComplete, HostError>) {
        guard self.result == nil else { return }
        self.result = result
        timer?.cancel()
        continuation?.resume(returning: result)
        continuation = nil
    }

    func await(_ continuation: CheckedContinuation<Result<LEConnectionComplete, HostError>, Never>) {
        if let result {
            continuation.resume(returning: result)
        } else {
            self.continuation = continuation
        }
    }
}

extension Adapter {
    /// How long the host waits for the controller to confirm Create Connection Cancel.
    static let cancelGracePeriod: Duration = .seconds(2)

    /// Connects to `address` as central (LE Extended Create Connection when the controller has
    /// it, else LE Create Connection). One attempt runs at a time; others wait their turn. The
    /// identity address of a bonded peer that uses resolvable private addresses connects to the
    /// address a scan last heard it from (`DiscoveredDevice.identity`).
    /// - Throws: ``HostError/connectionTimedOut(_:seconds:)`` when no connection completes
    ///   within `timeout` (the attempt is cancelled), ``HostError/connectionFailed(_:_:)``;
    ///   ``HostError/connectionRefused(_:reason:)`` when the controller has no room for one more
    ///   link (Memory Capacity Exceeded, Connection Limit Exceeded, Connection Rejected due to
    ///   Limited Resources): its line names the status and the links this adapter holds, which
    ///   stay up;
    ///   ``HostError/cancelled`` when the task is cancelled: the attempt is called off with LE
    ///   Create Connection Cancel (and a link that completed in the race is disconnected).
    public func connect(to address: DeviceAddress, timeout: Duration = .seconds(10)) async throws(HostError) -> Connection {
        if let failure { throw failure }
        // A bonded peer's identity: the private address it was last heard from (it answers
        // there, not at its identity address).
        let peer = scanner.resolver.lastPrivateAddress[address] ?? address
        if configuration.owner == .kernel {
            throw .unsupported("connections on a kernel-owned controller (they go through the kernel's L2CAP socket)")
        }
        if Task.isCancelled { throw .cancelled }
        await changeOwnAddressIfDue()
        while connecting != nil {
            try await waitForConnectTurn()
            if let failure { throw failure }
        }
        nextSessionID += 1
        let pending = PendingConnection(id: nextSessionID, peer: peer, timeout: timeout)
        connecting = pending
        defer {
            if connecting === pending { connecting = nil }
            // Every waiter looks again (one of them may have been cancelled meanwhile).
            for waiter in connectTurnWaiters.values { waiter.resume() }
            connectTurnWaiters.removeAll()
        }
        do {
            try await start(createConnectionCommand(to: peer))
        } catch {
            // Cancelled while the command was on its way: the controller may have started
            // connecting, so the wait below (cancelled at once) calls the attempt off.
            if error != .cancelled { pending.finish(.failure(refusal(error, connectingTo: peer))) }
        }
        let id = pending.id
        if !pending.isFinished {
            pending.timer = Task {
                do { try await self.clock.sleep(for: timeout) } catch { return }
                await self.abandonConnectionAttempt(id, because: .timedOut)
            }
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { pending.await($0) }
        } onCancel: {
            Task { await self.abandonConnectionAttempt(id, because: .cancelled) }
        }
        let complete = try result.get()
        guard let record = links[complete.connectionHandle] else {
            throw failure ?? .disconnected(.unknownConnectionIdentifier)
        }
        record.claimed = true
        let bearer = L2CAPATTBearer(adapter: self, lifetime: record.lifetime, inbox: record.attInbox)
        let connection = Connection(handle: record.handle, peer: record.peer, parameters: record.parameters,
                                    att: bearer, adapter: self, lifetime: record.lifetime)
        if configuration.encryptsBondedLinks { await encryptWithBond(record.lifetime, peer: record.peer) }
        return connection
    }

    /// A new central link to a bonded peer is encrypted with the bond's key before it is used;
    /// when that fails the link stays up, unencrypted, and the reason is logged (a read that
    /// needs encryption then pairs, or fails in one line).
    private func encryptWithBond(_ lifetime: LinkLifetime, peer: DeviceAddress) async {
        guard configuration.pairing != nil else { return }
        let bond: Bond?
        do {
            bond = try await configuration.bonds.bond(for: peer)
        } catch {
            logger.warning("the bond store could not be read (\(error)): \(peer) is not encrypted with a bond")
            return
        }
        guard let bond, bond.centralKey != nil else { return }
        guard configuration.pairing?.accepts(keySize: bond.keySize) == true else {
            logger.notice("the bond with \(peer) has a \(bond.keySize)-octet key, shorter than the pairing configuration accepts: not used (pair again)")
            return
        }
        do {
            try await secure(lifetime, level: bond.level, forcePairing: false, timeout: configuration.encryptionTimeout)
        } catch {
            logger.notice("the link to \(peer) is not encrypted with its bond: \(error)")
        }
    }

    /// A Create Connection the controller refused: when it has no room for one more link,
    /// ``HostError/connectionRefused(_:reason:)`` saying so (with the links held); else as it came.
    private func refusal(_ error: HostError, connectingTo peer: DeviceAddress) -> HostError {
        guard case .commandFailed(_, let status) = error, HCIStatus.linkLimitStatuses.contains(status) else { return error }
        return connectionFailure(peer, status)
    }

    /// A connection attempt that ended with `status`: a controller out of room for one more link
    /// (some report it in LE Connection Complete rather than Command Status) gets the line with
    /// the links this adapter holds and what to do; any other status is
    /// ``HostError/connectionFailed(_:_:)``.
    private func connectionFailure(_ peer: DeviceAddress, _ status: HCIStatus) -> HostError {
        guard HCIStatus.linkLimitStatuses.contains(status) else { return .connectionFailed(peer, status) }
        let held = links.handles.count
        logger.notice("the controller refused a link to \(peer) (\(status)) while this adapter holds \(held)")
        return .connectionRefused(peer, reason: HostError.linkLimitReason(status, holding: held))
    }

    /// Waits until the current connection attempt ends (or the adapter fails);
    /// ``HostError/cancelled`` at once when the task is cancelled.
    private func waitForConnectTurn() async throws(HostError) {
        nextSessionID += 1
        let id = nextSessionID
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // The attempt may have ended (or the adapter failed) before this wait was
                // filed: every `await` may let the adapter run other work first.
                if connecting == nil || failure != nil || Task.isCancelled {
                    continuation.resume()
                } else {
                    connectTurnWaiters[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.stopWaitingForConnectTurn(id) }
        }
        if Task.isCancelled { throw .cancelled }
    }

    private func stopWaitingForConnectTurn(_ id: UInt64) {
        connectTurnWaiters.removeValue(forKey: id)?.resume()
    }

    private func createConnectionCommand(to peer: DeviceAddress) -> HCICommand {
        let own: HCICommand.OwnAddressType = controller.ownAddress.type == .random ? .random : .public
        let parameters = configuration.connectionParameters
        if controller.usesExtendedCreateConnection {
            return .leExtendedCreateConnection(HCICommand.ExtendedCreateConnection(
                filterPolicy: .peerAddress, ownAddressType: own,
                peerAddressType: peer.type, peerAddress: peer.address,
                le1M: HCICommand.PHYConnectionParameters(scanInterval: 0x0030, scanWindow: 0x0030, connection: parameters)))
        }
        return .leCreateConnection(HCICommand.CreateConnection(
            scanInterval: 0x0030, scanWindow: 0x0030, filterPolicy: .peerAddress,
            peerAddressType: peer.type, peerAddress: peer.address, ownAddressType: own,
            connection: parameters))
    }

    /// Calls the attempt off (it ran out of time, or its caller was cancelled): LE Create
    /// Connection Cancel, then a short grace period for the controller to report the
    /// cancellation (or a connection that won the race). A cancellation that comes while a
    /// timeout is already calling the attempt off only changes what the caller is told.
    func abandonConnectionAttempt(_ id: UInt64, because reason: PendingConnection.Abandonment) async {
        guard let pending = connecting, pending.id == id, !pending.isFinished else { return }
        guard pending.abandoned == nil else {
            if reason == .cancelled { pending.abandoned = .cancelled }
            return
        }
        pending.abandoned = reason
        switch reason {
        case .timedOut:
            logger.notice("no connection to \(pending.peer) within \(formatSeconds(pending.timeout.seconds)) s: cancelling")
        case .cancelled:
            logger.debug("connection to \(pending.peer) cancelled by the caller")
        }
        do {
            try await execute(.leCreateConnectionCancel)
        } catch {
            // Command Disallowed: no attempt runs in the controller (it never started, or
            // its Connection Complete, handled before this answer, already ended it).
            logger.notice("LE Create Connection Cancel: \(error)")
            pending.finish(.failure(pending.abandonmentError))
            return
        }
        // The controller reports the cancelled attempt with LE Connection Complete.
        try? await clock.sleep(for: Self.cancelGracePeriod)
        pending.finish(.failure(pending.abandonmentError))
    }

    func handleConnectionComplete(_ complete: LEConnectionComplete) {
        let pending = connecting
        guard complete.status.isSuccess else {
            guard let pending, !pending.isFinished else {
                logger.notice("a connection attempt nobody waits for ended: \(complete.status)")
                return
            }
            if pending.abandoned != nil, complete.status == .unknownConnectionIdentifier {
                // What a successful Create Connection Cancel reports.
                pending.finish(.failure(pending.abandonmentError))
            } else {
                pending.finish(.failure(connectionFailure(pending.peer, complete.status)))
            }
            return
        }
        guard links[complete.connectionHandle] == nil else {
            logger.warning("Connection Complete for handle 0x\(String(complete.connectionHandle, radix: 16)), which is already connected: ignored")
            return
        }
        nextSessionID += 1
        let record = ConnectionRecord(
            lifetime: LinkLifetime(id: nextSessionID, handle: complete.connectionHandle),
            peer: complete.peer,
            parameters: LinkParameters(interval: complete.connectionInterval, latency: complete.peripheralLatency,
                                       supervisionTimeout: complete.supervisionTimeout),
            attBufferLimit: configuration.attReceiveBufferLimit,
            isCentral: complete.role == .central,
            pairing: makePairingEngine(isCentral: complete.role == .central, peer: complete.peer))
        links.add(record)
        if complete.role == .peripheral, acceptIncomingConnection(record) { return }
        logger.debug("connected to \(complete.peer), handle 0x\(String(complete.connectionHandle, radix: 16))")
        if let pending, !pending.isFinished, complete.role == .central, pending.abandoned != .cancelled {
            // (A connection that wins the race against a timeout's cancel is still wanted.)
            pending.finish(.success(complete))
        } else {
            // Nobody asked for this link (a peripheral-role link while nothing advertises, one
            // that completed after its attempt was given up, or after its caller was
            // cancelled): the host lets it go.
            if let pending, complete.role == .central, pending.abandoned == .cancelled {
                pending.finish(.failure(.cancelled))
            }
            logger.notice("disconnecting \(complete.peer): no connection attempt is waiting for it")
            let lifetime = record.lifetime
            Task {
                try? await self.disconnect(lifetime, reason: .remoteUserTerminatedConnection, timeout: .seconds(5))
            }
        }
    }

    func handleDisconnection(_ event: HCIEvent.DisconnectionComplete) {
        guard let record = links[event.connectionHandle] else {
            logger.notice("Disconnection Complete for unknown handle 0x\(String(event.connectionHandle, radix: 16)): ignored")
            return
        }
        guard event.status.isSuccess else {
            logger.warning("disconnection of \(record.peer) failed: \(event.status)")
            return
        }
        _ = links.remove(event.connectionHandle, failingSendsWith: .disconnected(reason: event.reason.description))
        logger.debug("disconnected from \(record.peer): \(event.reason)")
        record.end(bearerError: .disconnected(reason: event.reason.description), hostError: .disconnected(event.reason))
        acceptedLinkEnded(event.connectionHandle)
    }

    /// Sends HCI Disconnect for the link and waits, bounded, for its Disconnection Complete.
    /// A cancelled task stops waiting at once (``HostError/cancelled``); the link still goes.
    func disconnect(_ lifetime: LinkLifetime, reason: HCIStatus, timeout: Duration) async throws(HostError) {
        guard links.record(lifetime) != nil else { return }
        do {
            try await start(.disconnect(handle: lifetime.handle, reason: reason))
        } catch {
            if case .commandFailed(_, .unknownConnectionIdentifier) = error { return }
            throw error
        }
        let waiter = lifetime.makeWaiterID()
        let clock = self.clock
        let timer = Task {
            do { try await clock.sleep(for: timeout) } catch { return }
            lifetime.resume(waiter: waiter, with: .commandTimedOut(.disconnect, seconds: timeout.seconds))
        }
        let ending = await withTaskCancellationHandler {
            await withCheckedContinuation { lifetime.register($0, id: waiter) }
        } onCancel: {
            lifetime.resume(waiter: waiter, with: .cancelled)
        }
        timer.cancel()
        switch ending {
        case .commandTimedOut, .cancelled: throw ending
        default: return
        }
    }

    /// Disconnects by handle (used by ``close()``).
    func disconnect(handle: UInt16, reason: HCIStatus, timeout: Duration) async throws(HostError) {
        guard let record = links[handle] else { return }
        try await disconnect(record.lifetime, reason: reason, timeout: timeout)
    }

    func linkParameters(_ lifetime: LinkLifetime) -> LinkParameters? {
        guard let record = links.record(lifetime) else { return nil }
        return record.parameters
    }

    // MARK: Fixed channels

    /// Queues an ATT PDU for the link. A full outgoing queue is back-pressure, not a failure:
    /// the PDU waits its turn (after any PDU already waiting) for room, bounded by
    /// ``Configuration/aclSendTimeout`` and by the caller's cancellation; only the end of the
    /// link (or of the bearer) fails it as such.
    func sendATT(_ pdu: [UInt8], on lifetime: LinkLifetime) async throws(BearerError) {
        guard let record = links.record(lifetime), !record.attClosed else {
            if let ending = lifetime.ending { throw bearerError(for: ending) }
            throw .closed
        }
        let handle = lifetime.handle
        let frame = L2CAPFrame(channelID: .att, payload: pdu).encoded
        if !links.hasBlockedSends(on: handle) {
            do {
                if try links.enqueue(frame, on: handle) { return }
            } catch {
                throw bearerError(for: error)
            }
        }
        if Task.isCancelled { throw .cancelled }
        nextSessionID += 1
        let id = nextSessionID
        let timeout = configuration.aclSendTimeout
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, BearerError>, Never>) in
                // The link may have ended, or room come, before this wait was filed (every
                // `await` may let the adapter run other work first): a PDU never waits on a
                // handle a newer link may have taken, nor for room that is already there.
                guard let current = links.record(lifetime), !current.attClosed else {
                    continuation.resume(returning: .failure(lifetime.ending.map { bearerError(for: $0) } ?? .closed))
                    return
                }
                let timer = Task {
                    do { try await self.clock.sleep(for: timeout) } catch { return }
                    self.links.unblockSend(id, on: handle, with: .timedOut(
                        operation: "waiting \(formatSeconds(timeout.seconds)) s for room in the outgoing ACL queue of connection 0x\(String(handle, radix: 16))"))
                }
                links.block(BlockedSend(id: id, frame: frame, continuation: continuation, timer: timer), on: handle)
                links.admitBlockedSends()
            }
        } onCancel: {
            Task { await self.unblockSend(id, on: handle, with: .cancelled) }
        }
        try result.get()
    }

    /// Ends one blocked send early (timeout, cancellation), if it still waits.
    private func unblockSend(_ id: UInt64, on handle: UInt16, with error: BearerError) {
        links.unblockSend(id, on: handle, with: error)
    }

    // MARK: Connection parameter updates

    /// Bound on the wait for one update's LE Connection Update Complete before the next one
    /// goes (a controller that never reports it cannot stall the queue).
    static let parameterUpdateTimeout: Duration = .seconds(10)

    /// Asks the controller for `parameters` on the link: one LE Connection Update at a time
    /// per connection, each awaited to its Complete event; a request that comes meanwhile
    /// replaces any still queued (only the newest matters). One task per link at most.
    func requestParameterUpdate(_ parameters: HCICommand.ConnectionParameters, on record: ConnectionRecord) {
        record.queuedParameterUpdate = parameters
        guard !record.parameterUpdatesRunning else { return }
        record.parameterUpdatesRunning = true
        let lifetime = record.lifetime
        Task { await self.runParameterUpdates(on: lifetime) }
    }

    private func runParameterUpdates(on lifetime: LinkLifetime) async {
        while let record = links.record(lifetime),
              let parameters = record.queuedParameterUpdate {
            record.queuedParameterUpdate = nil
            let completedBefore = record.parameterUpdatesCompleted
            do {
                try await start(.leConnectionUpdate(handle: lifetime.handle, parameters: parameters))
            } catch {
                logger.notice("LE Connection Update: \(error)")
                continue
            }
            nextSessionID += 1
            let id = nextSessionID
            await withCheckedContinuation { continuation in
                // The link may have ended while the command was on its way.
                guard links.record(lifetime) === record else {
                    continuation.resume()
                    return
                }
                let timer = Task {
                    do { try await self.clock.sleep(for: Self.parameterUpdateTimeout) } catch { return }
                    self.parameterUpdateTimedOut(on: lifetime, id: id)
                }
                record.awaitParameterUpdate(id: id, completedBefore: completedBefore, continuation, timer: timer)
            }
        }
        if let record = links.record(lifetime) {
            record.parameterUpdatesRunning = false
        }
    }

    private func parameterUpdateTimedOut(on lifetime: LinkLifetime, id: UInt64) {
        guard let record = links.record(lifetime) else { return }
        logger.notice("no LE Connection Update Complete from the controller for \(record.peer) in time")
        record.parameterUpdateEnded(id: id)
    }

    func closeATT(on lifetime: LinkLifetime) {
        guard let record = links.record(lifetime), !record.attClosed else { return }
        record.attClosed = true
        links.failBlockedSends(on: lifetime.handle, with: .closed)
        record.attInbox.finish(.closed)
    }
}

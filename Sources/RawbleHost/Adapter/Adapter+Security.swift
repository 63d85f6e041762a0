// Pairing and encryption on rawble's own host: each link's SMP engine (RawbleSMP's
// `SMPPairing`, sans I/O) fed with what arrives on the Security Manager channel, the
// controller's encryption events and the clock; what it asks for carried out here (SMP PDUs,
// LE Enable Encryption, the user's answers through the pairing agent); bonds kept in and
// looked up from the configuration's store.

import RawbleBearer
import RawbleHostCore
import RawbleSMP
import RawbleWire

extension Adapter {
    /// A new link's pairing engine, or `nil` when the configuration does not pair.
    func makePairingEngine(isCentral: Bool, peer: DeviceAddress) -> SMPPairing<HostClock.Instant>? {
        guard let pairing = configuration.pairing else { return nil }
        return SMPPairing(role: isCentral ? .initiator : .responder, configuration: pairing,
                          localAddress: controller.ownAddress, peerAddress: peer)
    }

    // MARK: Making a link secure

    /// See ``Connection/secure(_:timeout:)`` and ``Connection/pair(authenticated:timeout:)``.
    @discardableResult
    func secure(_ lifetime: LinkLifetime, level: LinkSecurity, forcePairing: Bool,
                timeout: Duration) async throws(HostError) -> LinkSecurity {
        if let failure { throw failure }
        guard var record = links.record(lifetime) else { throw lifetime.ending ?? .disconnected(.unknownConnectionIdentifier) }
        if !forcePairing, lifetime.security >= level { return lifetime.security }
        guard record.pairing != nil else { throw .pairingDisabled }
        // What settles from here on is what this call waits for (see `waitForSecurity`).
        var settlements = record.securitySettlements
        if !record.securityPending {
            if record.isCentral {
                // The bond decides both ways: its key may be good enough, and a new pairing must
                // not be weaker than it.
                let bond = await storedBond(for: record.peer)
                // The link may have ended, or a pairing started, while the store answered.
                guard let current = links.record(lifetime) else { throw lifetime.ending ?? .disconnected(.unknownConnectionIdentifier) }
                record = current
                if !forcePairing, lifetime.security >= level { return lifetime.security }
                settlements = record.securitySettlements
                if !record.securityPending {
                    if !forcePairing, let bond, let key = bond.centralKey, level <= bond.level,
                       configuration.pairing?.accepts(keySize: bond.keySize) == true {
                        encrypt(record, with: key, bond: bond)
                    } else {
                        try startPairing(on: record, authenticated: level == .authenticated, keeping: bond)
                    }
                }
            } else {
                try requestSecurity(on: record, authenticated: level == .authenticated)
            }
        }
        let reached = try await waitForSecurity(on: record, settledSince: settlements, timeout: timeout)
        guard reached >= level else { throw .insufficientSecurity(record.peer, reached: reached, required: level) }
        return reached
    }

    /// See ``L2CAPATTBearer/raiseSecurity(after:)``: BlueZ's steps (encrypt first; after
    /// Insufficient Authentication on an encrypted link, pair for an authenticated key).
    func raiseSecurity(on lifetime: LinkLifetime, after refusal: SecurityRefusal) async -> Bool {
        let before = lifetime.security
        let target: LinkSecurity
        switch refusal {
        case .insufficientEncryption, .encryptionKeySizeTooShort:
            target = .encrypted
        case .insufficientAuthentication:
            target = before >= .encrypted ? .authenticated : .encrypted
        }
        guard before < target else {
            logger.debug("the peer answered \(refusal) with the link already \(HostError.name(before)): nothing to raise")
            return false
        }
        do {
            let reached = try await secure(lifetime, level: target, forcePairing: false, timeout: Self.securityRaiseTimeout)
            logger.debug("the peer answered \(refusal): the link is now \(HostError.name(reached))")
            lifetime.lastRaiseFailure = nil
            return reached > before
        } catch {
            lifetime.lastRaiseFailure = error
            if case .insufficientSecurity(_, let reached, _) = error { return reached > before }
            logger.notice("the peer answered \(refusal), and the link could not be made more secure: \(error)")
            return false
        }
    }

    /// Bound on a security raise for a refused ATT request (the ATT client's own transaction
    /// timeout usually ends it first, by cancelling).
    static let securityRaiseTimeout: Duration = .seconds(40)

    /// The bond kept for `peer` (its identity address, or an address its IRK resolves); `nil`
    /// when none is or the store failed (logged: the link goes on without it).
    private func storedBond(for peer: DeviceAddress) async -> Bond? {
        do {
            return try await configuration.bonds.bond(for: peer)
        } catch {
            logger.warning("the bond store could not be read (\(error)): going on as if \(peer) had no bond")
            return nil
        }
    }

    /// Central: starts a pairing (the Pairing Request), asking for MITM protection when
    /// `authenticated`, else as the configuration says; a pairing weaker than `bond` fails.
    private func startPairing(on record: ConnectionRecord, authenticated: Bool, keeping bond: Bond?) throws(HostError) {
        guard var engine = record.pairing, let base = configuration.pairing else { throw .pairingDisabled }
        if engine.hasTimedOut { throw .pairingFailed(record.peer, .timedOut) }
        engine.configuration.mitm = base.mitm || authenticated
        engine.bondToKeep = bond?.strength
        record.pairing = engine
        record.pairingGeneration += 1
        logger.debug("pairing with \(record.peer)\(authenticated ? " (an authenticated key is needed)" : "")")
        runPairing(on: record) { engine, now in engine.start(now: now) }
    }

    /// Peripheral: asks the central to encrypt or pair (Security Request).
    private func requestSecurity(on record: ConnectionRecord, authenticated: Bool) throws(HostError) {
        guard var engine = record.pairing, let base = configuration.pairing else { throw .pairingDisabled }
        if engine.hasTimedOut { throw .pairingFailed(record.peer, .timedOut) }
        engine.configuration.mitm = base.mitm || authenticated
        record.pairing = engine
        runPairing(on: record) { engine, now in engine.requestSecurity(now: now) }
    }

    /// Waits, bounded by `timeout` and by the caller's cancellation, until the link's pairing or
    /// encryption settles; returns the level reached.
    ///
    /// `settlements`: the record's count of settlements when the caller started what it waits
    /// for. Every `await` is a place where the actor may run other work first; on a task that
    /// prefers the adapter's task executor, as rawble's commands run, each one is a trip
    /// through the loop's queue, where the controller's answer (an Encryption Change that
    /// came at once) may already wait. A settlement counted since then ends the wait at once
    /// with its result instead of leaving it to its timeout.
    private func waitForSecurity(on record: ConnectionRecord, settledSince settlements: UInt64,
                                 timeout: Duration) async throws(HostError) -> LinkSecurity {
        nextSessionID += 1
        let id = nextSessionID
        let lifetime = record.lifetime
        let peer = record.peer
        // The timer holds the record weakly: the record's end, or its deinit, settles the wait
        // when the link goes first.
        let timer = Task { [weak record] in
            do { try await self.clock.sleep(for: timeout) } catch { return }
            record?.securityWaiters.removeValue(forKey: id)?.resume(returning: .failure(HostError.securityTimedOut(peer, seconds: timeout.seconds)))
        }
        defer { timer.cancel() }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<LinkSecurity, HostError>, Never>) in
                if let ending = lifetime.ending {
                    continuation.resume(returning: .failure(ending))
                } else if record.securitySettlements != settlements, let settled = record.lastSecuritySettlement {
                    continuation.resume(returning: settled)
                } else {
                    record.securityWaiters[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.settleSecurityWaiter(id, on: lifetime, with: .failure(.cancelled)) }
        }
        return try result.get()
    }

    private func settleSecurityWaiter(_ id: UInt64, on lifetime: LinkLifetime, with result: Result<LinkSecurity, HostError>) {
        links.record(lifetime)?.securityWaiters.removeValue(forKey: id)?.resume(returning: result)
    }

    /// Reads the bonds' IRKs for resolving private addresses in scans (a store that fails is
    /// logged: nothing resolves until the next bond).
    func loadResolvingKeys() async {
        guard configuration.owner == .host else { return }
        do {
            scanner.resolver.use(try await configuration.bonds.bonds())
        } catch {
            logger.warning("the bond store could not be read (\(error)): bonded peers' private addresses are not resolved")
        }
    }

    // MARK: The engine

    /// One SMP command from the peer, for the link's engine. A Pairing Request that would
    /// start a pairing waits, with what follows it, until the bond kept for the peer is looked
    /// up: the pairing must not be weaker than that bond.
    func receiveSecurityManager(_ payload: ArraySlice<UInt8>, on record: ConnectionRecord) {
        if record.heldSecurityManagerPDUs != nil {
            // Bounded: a peer that floods while the store answers loses the excess (the
            // pairing then fails on a missing PDU, or times out).
            if record.heldSecurityManagerPDUs?.count ?? 0 < Self.heldSecurityManagerLimit {
                record.heldSecurityManagerPDUs?.append(payload)
            }
            return
        }
        guard !record.isCentral, let engine = record.pairing, !engine.isPairing, !engine.hasTimedOut,
              payload.first == SMPCode.pairingRequest.rawValue else {
            feedSecurityManager(payload, on: record)
            return
        }
        record.heldSecurityManagerPDUs = [payload]
        let lifetime = record.lifetime
        let peer = record.peer
        Task {
            let bond = await self.storedBond(for: peer)
            guard let record = self.links.record(lifetime) else { return }
            record.pairing?.bondToKeep = bond?.strength
            let held = record.heldSecurityManagerPDUs ?? []
            record.heldSecurityManagerPDUs = nil
            for payload in held { self.feedSecurityManager(payload, on: record) }
        }
    }

    /// SMP commands held at most while a bond is looked up.
    static let heldSecurityManagerLimit = 32

    private func feedSecurityManager(_ payload: ArraySlice<UInt8>, on record: ConnectionRecord) {
        // Outside a pairing, this PDU may start one (a Pairing Request) whose first question
        // (legacy Passkey Entry asks at once) must belong to it: a new generation before the
        // engine runs.
        if record.pairing?.isPairing != true { record.pairingGeneration += 1 }
        runPairing(on: record) { engine, now in engine.receive(payload, now: now) }
    }

    /// Gives the engine one input (with the time) and carries out what it returns; then
    /// moves the timeout to the engine's new deadline.
    func runPairing(on record: ConnectionRecord,
                    _ input: (inout SMPPairing<HostClock.Instant>, HostClock.Instant) -> [PairingAction]) {
        guard var engine = record.pairing else { return }
        let actions = input(&engine, clock.now)
        record.pairing = engine
        carryOut(actions, on: record)
        schedulePairingTimeout(for: record)
    }

    private func carryOut(_ actions: [PairingAction], on record: ConnectionRecord) {
        for action in actions {
            switch action {
            case .send(let pdu):
                do {
                    try links.send(pdu.encoded, channel: .securityManager, on: record.handle)
                } catch {
                    logger.warning("SMP \(pdu.code) to \(record.peer) not sent: \(error)")
                }
            case .displayPasskey(let passkey):
                display(passkey, on: record)
            case .requestPasskey:
                askForPasskey(on: record)
            case .confirmNumericComparison(let number):
                askToConfirm(number, on: record)
            case let .startEncryption(key, diversifier, random):
                encrypt(record, with: Bond.LongTermKey(value: key, encryptedDiversifier: diversifier, random: random), bond: nil)
            case .securityRequested(let requirements):
                securityRequested(requirements, on: record)
            case .completed(let outcome):
                pairingCompleted(outcome, on: record)
            case .failed(let failure):
                record.pairingGeneration += 1
                logger.notice("pairing with \(record.peer) failed: \(failure)")
                record.settleSecurity(.failure(.pairingFailed(record.peer, failure)))
            case .ignored(let why):
                logger.debug("SMP with \(record.peer): \(why)")
            }
        }
    }

    private func schedulePairingTimeout(for record: ConnectionRecord) {
        record.pairingTimer?.cancel()
        record.pairingTimer = nil
        guard let deadline = record.pairing?.deadline else { return }
        let lifetime = record.lifetime
        let clock = self.clock
        record.pairingTimer = Task {
            do { try await clock.sleep(until: deadline) } catch { return }
            self.pairingTimeoutFired(on: lifetime)
        }
    }

    private func pairingTimeoutFired(on lifetime: LinkLifetime) {
        guard let record = links.record(lifetime) else { return }
        runPairing(on: record) { engine, now in engine.expire(now: now) }
    }

    // MARK: The user

    private func display(_ passkey: UInt32, on record: ConnectionRecord) {
        logger.debug("pairing with \(record.peer): showing the passkey")
        guard let agent = configuration.pairingAgent else {
            logger.notice("pairing with \(record.peer) shows a passkey, and there is no pairing agent to show it")
            return
        }
        let peer = record.peer
        Task { await agent.displayPasskey(passkey, for: peer) }
    }

    private func askForPasskey(on record: ConnectionRecord) {
        guard let agent = configuration.pairingAgent else {
            logger.notice("pairing with \(record.peer) needs the passkey it shows, and there is no pairing agent to ask: declined")
            runPairing(on: record) { engine, now in engine.cancel(now: now) }
            return
        }
        let peer = record.peer
        let lifetime = record.lifetime
        let generation = record.pairingGeneration
        Task {
            let passkey = await agent.passkey(for: peer)
            self.answer(on: lifetime, generation: generation) { engine, now in
                guard let passkey else { return engine.cancel(now: now) }
                return engine.enterPasskey(passkey, now: now)
            }
        }
    }

    private func askToConfirm(_ number: UInt32, on record: ConnectionRecord) {
        guard let agent = configuration.pairingAgent else {
            logger.notice("pairing with \(record.peer) needs a numeric comparison, and there is no pairing agent to ask: declined")
            runPairing(on: record) { engine, now in engine.confirmNumericComparison(false, now: now) }
            return
        }
        let peer = record.peer
        let lifetime = record.lifetime
        let generation = record.pairingGeneration
        Task {
            let answer = await agent.compare(number, for: peer)
            self.answer(on: lifetime, generation: generation) { engine, now in
                engine.confirmNumericComparison(answer != .declined, comparedByPerson: answer == .confirmed, now: now)
            }
        }
    }

    /// The user's answer, for the pairing that asked (dropped when it has ended since).
    private func answer(on lifetime: LinkLifetime, generation: UInt64,
                        _ input: (inout SMPPairing<HostClock.Instant>, HostClock.Instant) -> [PairingAction]) {
        guard let record = links.record(lifetime), record.pairingGeneration == generation,
              record.pairing?.isPairing == true else {
            logger.debug("an answer for a pairing that has ended: dropped")
            return
        }
        runPairing(on: record, input)
    }

    // MARK: Outcomes

    private func pairingCompleted(_ outcome: PairingOutcome, on record: ConnectionRecord) {
        record.pairingGeneration += 1
        let level: LinkSecurity = outcome.isAuthenticated ? .authenticated : .encrypted
        let lifetime = record.lifetime
        lifetime.security = level
        lifetime.encryptionKeySize = outcome.keySize
        lifetime.lastPairing = outcome
        logger.notice("paired with \(record.peer): \(outcome.method), \(outcome.secureConnections ? "LE Secure Connections" : "LE legacy pairing"), \(outcome.bonded ? "bonded" : "not bonded")")
        guard let bond = Bond(outcome, peerAddress: record.peer) else {
            record.settleSecurity(.success(level))
            return
        }
        // The waiters learn of the pairing once its bond is kept: a caller that ends the
        // process right after finds it in the store.
        let bonds = configuration.bonds
        let peer = record.peer
        Task {
            // The engine refused a pairing weaker than the bond it was told of; this catches
            // the bond it could not know: the one of the identity the peer distributed (a peer
            // claiming a bonded device's identity from another address).
            if let kept = await self.storedBond(for: bond.peer), bond.strength.isWeaker(than: kept.strength) {
                self.logger.notice("paired with \(peer), and kept the bond with \(kept.peer) (\(kept.strength)): the new keys (\(bond.strength)) are weaker")
                self.links.record(lifetime)?.settleSecurity(.success(level))
                return
            }
            self.scanner.resolver.add(bond)
            do {
                try await bonds.save(bond)
            } catch {
                self.logger.warning("the bond with \(peer) could not be kept (\(error)): the next link will pair again")
            }
            self.links.record(lifetime)?.settleSecurity(.success(level))
        }
    }

    /// Central, not pairing: the peripheral asked for security. Encrypts with its bond or
    /// pairs, as ``Connection/secure(_:timeout:)`` does.
    private func securityRequested(_ requirements: SMPAuthenticationRequirements, on record: ConnectionRecord) {
        let level: LinkSecurity = requirements.contains(.mitm) ? .authenticated : .encrypted
        logger.debug("\(record.peer) asked for security (\(requirements.contains(.mitm) ? "authenticated" : "encrypted"))")
        let lifetime = record.lifetime
        let peer = record.peer
        Task {
            do {
                try await self.secure(lifetime, level: level, forcePairing: false, timeout: Self.securityRaiseTimeout)
            } catch {
                self.logger.notice("\(peer) asked for security: \(error)")
            }
        }
    }

    // MARK: Encryption

    /// Central: LE Enable Encryption with `key`. `bond`: the bond it is from (outside a
    /// pairing, bounded by the encryption timeout; its level and key size are the link's once
    /// encrypted); `nil` during a pairing, whose engine takes the Encryption Change (and whose
    /// 30 s timeout bounds it).
    private func encrypt(_ record: ConnectionRecord, with key: Bond.LongTermKey, bond: Bond?) {
        let lifetime = record.lifetime
        if let bond {
            record.bondEncryption = (bond.level, bond.keySize, encryptionTimer(for: lifetime))
            logger.debug("encrypting the link to \(record.peer) with its bond")
        }
        let command = HCICommand.leEnableEncryption(handle: lifetime.handle, random: key.random,
                                                    encryptedDiversifier: key.encryptedDiversifier, longTermKey: key.value)
        Task {
            if let error = await self.failure(starting: command) {
                self.encryptionCommandFailed(on: lifetime, error)
            }
        }
    }

    /// Runs a command answered with Command Status; its error, or `nil` once accepted.
    private func failure(starting command: HCICommand) async -> HostError? {
        do {
            try await start(command)
            return nil
        } catch {
            return error
        }
    }

    private func encryptionTimer(for lifetime: LinkLifetime) -> Task<Void, Never> {
        let timeout = configuration.encryptionTimeout
        return Task {
            do { try await self.clock.sleep(for: timeout) } catch { return }
            self.encryptionTimedOut(on: lifetime, after: timeout)
        }
    }

    private func encryptionTimedOut(on lifetime: LinkLifetime, after timeout: Duration) {
        guard let record = links.record(lifetime), record.bondEncryption != nil else { return }
        record.bondEncryption = nil
        logger.notice("no Encryption Change from the controller for \(record.peer) within \(formatSeconds(timeout.seconds)) s")
        record.settleSecurity(.failure(.securityTimedOut(record.peer, seconds: timeout.seconds)))
    }

    /// LE Enable Encryption was refused (or never answered): as an Encryption Change with that
    /// status, so a pairing or a waiter ends with it.
    private func encryptionCommandFailed(on lifetime: LinkLifetime, _ error: HostError) {
        guard let record = links.record(lifetime) else { return }
        let status: HCIStatus
        if case .commandFailed(_, let refused) = error { status = refused } else { status = .unspecifiedError }
        logger.notice("encrypting the link to \(record.peer): \(error)")
        encryptionChanged(handle: record.handle, status: status, enabled: false, keySize: nil)
    }

    /// The controller's Encryption Change or Encryption Key Refresh Complete.
    func encryptionChanged(handle: UInt16, status: HCIStatus, enabled: Bool, keySize: UInt8?) {
        guard let record = links[handle] else {
            logger.debug("encryption change for unknown handle 0x\(String(handle, radix: 16)): ignored")
            return
        }
        let lifetime = record.lifetime
        let pending = record.bondEncryption
        if let pending {
            pending.timer.cancel()
            record.bondEncryption = nil
        }
        let encrypted = status.isSuccess && enabled
        if status.isSuccess {
            // During a pairing the key's worth is known at its end; a bond's is kept with it;
            // a refresh keeps what the link had. The controller's key size, when it reports
            // one (Encryption Change v2), is the size in force.
            lifetime.security = enabled ? pending?.level ?? max(lifetime.security, .encrypted) : .none
            lifetime.encryptionKeySize = enabled ? keySize ?? pending?.keySize ?? lifetime.encryptionKeySize : nil
        }
        if record.pairing?.isPairing == true {
            let reported: UInt8 = encrypted ? 0 : (status.isSuccess ? HCIStatus.unspecifiedError.rawValue : status.rawValue)
            runPairing(on: record) { engine, now in engine.encryptionChanged(status: reported, now: now) }
            return
        }
        if encrypted {
            logger.debug("the link to \(record.peer) is \(HostError.name(lifetime.security))\(keySize.map { " (\($0)-octet key)" } ?? "")")
            record.settleSecurity(.success(lifetime.security))
        } else if pending != nil || !record.securityWaiters.isEmpty {
            record.settleSecurity(.failure(.encryptionFailed(record.peer, status.isSuccess ? .unspecifiedError : status)))
        } else if !status.isSuccess {
            logger.notice("encrypting the link to \(record.peer) failed: \(status)")
        }
    }

    /// Peripheral: the controller asks for the key a central encrypts with: the pairing's
    /// (STK or LE Secure Connections' LTK), else the bond's when its EDIV and Rand match, else
    /// a negative reply.
    func longTermKeyRequested(_ request: LEMetaEvent.LongTermKeyRequest) {
        let handle = request.connectionHandle
        guard let record = links[handle] else {
            logger.notice("Long Term Key Request for unknown handle 0x\(String(handle, radix: 16)): refused")
            replyToLongTermKeyRequest(handle: handle, key: nil)
            return
        }
        // A Pairing Request held while the bond is looked up: a pairing is starting, and no key
        // is given before it made one.
        if record.heldSecurityManagerPDUs != nil {
            logger.notice("\(record.peer) started encryption while its Pairing Request waited: refused")
            replyToLongTermKeyRequest(handle: handle, key: nil)
            return
        }
        var answer = SMPPairing<HostClock.Instant>.LongTermKeyAnswer.notPairing
        runPairing(on: record) { engine, now in
            answer = engine.longTermKeyRequested(encryptedDiversifier: request.encryptedDiversifier, random: request.random, now: now)
            if case .refuse(let actions) = answer { return actions }
            return []
        }
        switch answer {
        case .pairingKey(let key):
            replyToLongTermKeyRequest(handle: handle, key: key)
            return
        case .refuse:
            // During a pairing only its own key, once made: never a bond's, never a zero key.
            logger.notice("\(record.peer) started encryption out of order during a pairing: refused")
            replyToLongTermKeyRequest(handle: handle, key: nil)
            return
        case .notPairing:
            break
        }
        let lifetime = record.lifetime
        let peer = record.peer
        Task {
            let bond = await self.storedBond(for: peer)
            guard let record = self.links.record(lifetime) else { return }
            guard let bond, let key = bond.peripheralKey, key.encryptedDiversifier == request.encryptedDiversifier,
                  key.random == request.random else {
                self.logger.notice("\(peer) encrypts with a key this adapter has no bond for: refused (pair again)")
                self.replyToLongTermKeyRequest(handle: handle, key: nil)
                return
            }
            guard self.configuration.pairing?.accepts(keySize: bond.keySize) == true else {
                self.logger.notice("\(peer) encrypts with its bond's \(bond.keySize)-octet key, shorter than the pairing configuration accepts: refused (pair again)")
                self.replyToLongTermKeyRequest(handle: handle, key: nil)
                return
            }
            record.bondEncryption?.timer.cancel()
            record.bondEncryption = (bond.level, bond.keySize, self.encryptionTimer(for: lifetime))
            self.replyToLongTermKeyRequest(handle: handle, key: key.value)
        }
    }

    private func replyToLongTermKeyRequest(handle: UInt16, key: UInt128?) {
        let command: HCICommand = key.map { .leLongTermKeyRequestReply(handle: handle, longTermKey: $0) }
            ?? .leLongTermKeyRequestNegativeReply(handle: handle)
        Task {
            do {
                try await self.execute(command)
            } catch {
                self.logger.notice("\(command.opcode): \(error)")
            }
        }
    }
}

extension Bond {
    /// How secure a link encrypted with this bond's key is.
    var level: LinkSecurity { authenticated ? .authenticated : .encrypted }
}

// rawble's own privacy (Core Vol 3 Part C 10.7, Vol 6 Part B 1.3.2.2): with
// `OwnAddressChoice.resolvablePrivate`, the host makes a resolvable private address from its
// identity's IRK, uses it on air (scanning, connecting, advertising) and changes it every
// period. Peers it bonded with received the IRK and the identity address in the pairing's key
// distribution, so they resolve each new address to the same device; anyone else sees a new
// one each time.
//
// The controller refuses LE Set Random Address while legacy advertising, scanning or
// initiating are enabled (Command Disallowed, Vol 4 Part E 7.8.4). A change that comes due
// then waits, as the kernel's does: scanning and connection attempts take the new address when
// the next one starts; advertising, which may run for hours, is switched off, moved to the
// new address and switched on again.

import RawbleHostCore
import RawbleSMP
import RawbleWire

/// The state of the adapter's own resolvable private address.
struct OwnAddressRotation {
    /// The identity's IRK every address is made with.
    let irk: UInt128
    /// How long one address is used.
    let period: Duration
    /// The period ended and the address has not changed yet (scanning or a connection attempt
    /// was under way).
    var isDue = false
    /// How many times the address changed since the adapter opened.
    var changes = 0
    /// Tasks in ``Adapter/waitForOwnAddressChanges(_:)``: the count each waits for.
    var waiters: [UInt64: (count: Int, continuation: CheckedContinuation<Void, any Error>)] = [:]
}

extension Adapter {
    /// Changes of the own address so far (0 without a resolvable private address): for tests
    /// and diagnostics.
    public var ownAddressChanges: Int { ownAddressRotation?.changes ?? 0 }

    /// Returns once the own address has changed `count` times since the adapter opened (at once
    /// if it has): how a test learns the controller took the new address (the count moves when
    /// LE Set Random Address is done). Bound it with the caller's own timeout: it throws
    /// `CancellationError` when the task is cancelled, the adapter's error when it fails or
    /// closes first, and at once without a resolvable private address
    /// (``HostError/unsupported(_:)``).
    public func waitForOwnAddressChanges(_ count: Int) async throws {
        guard let rotation = ownAddressRotation else { throw HostError.unsupported("a changing own address (the adapter uses one address)") }
        if rotation.changes >= count { return }
        if let failure { throw failure }
        nextSessionID += 1
        let id = nextSessionID
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Looked at again here: a change (or the adapter's end) may have come before
                // this wait was filed, since every `await` may let the adapter run first.
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else if let failure {
                    continuation.resume(throwing: failure)
                } else if let rotation = ownAddressRotation, rotation.changes >= count {
                    continuation.resume()
                } else {
                    ownAddressRotation?.waiters[id] = (count, continuation)
                }
            }
        } onCancel: {
            Task { await self.endOwnAddressWait(id) }
        }
    }

    private func endOwnAddressWait(_ id: UInt64) {
        ownAddressRotation?.waiters.removeValue(forKey: id)?.continuation.resume(throwing: CancellationError())
    }

    /// Starts the timer that makes the own resolvable private address due for a change every
    /// period (when the configuration asks for one).
    func startOwnAddressRotation() {
        guard let period = ownAddressRotation?.period else { return }
        let clock = self.clock
        tasks.append(Task {
            var deadline = clock.now + period
            while true {
                do { try await clock.sleep(until: deadline) } catch { return }
                guard await self.ownAddressPeriodEnded() else { return }
                deadline = deadline + period
            }
        })
    }

    /// The period ended: the address changes now when the controller allows it, else when
    /// scanning or the connection attempt ends. `false` once the adapter has failed or closed.
    private func ownAddressPeriodEnded() async -> Bool {
        guard failure == nil, ownAddressRotation != nil else { return false }
        ownAddressRotation?.isDue = true
        await changeOwnAddressIfDue()
        return failure == nil
    }

    /// Moves to a new resolvable private address if one is due and the controller allows it
    /// now (no scan and no connection attempt under way). Running advertising is switched off,
    /// moved and switched on again. Called when the period ends and before every scan,
    /// connection attempt and advertisement starts.
    func changeOwnAddressIfDue() async {
        guard ownAddressRotation?.isDue == true, failure == nil else { return }
        // A scan being switched off is still on in the controller until its command is done.
        if let stop = scanStop { _ = await stop.value }
        guard let rotation = ownAddressRotation, rotation.isDue, failure == nil else { return }
        guard !scanner.isRunning, connecting == nil else {
            logger.trace("own address change waits for the scan or connection attempt under way")
            return
        }
        // Taken now: a second caller arriving while the commands below run finds nothing due.
        ownAddressRotation?.isDue = false
        let address = BluetoothAddress.resolvablePrivate(irk: rotation.irk)
        let running = advertiser.running
        let generation = advertiser.generation
        let pauses = running?.isOn == true
        do throws(HostError) {
            if let running, pauses { try await setAdvertising(running.set, enabled: false) }
            try await execute(.leSetRandomAddress(address))
            if let running, running.set.isExtended {
                try await execute(.leSetAdvertisingSetRandomAddress(handle: running.set.handle, address: address))
            }
        } catch {
            // The old address stays (and so does advertising, if switching it off failed);
            // the next period tries again.
            logger.notice("the own resolvable private address could not change: \(error)")
            if pauses { await resumeAdvertising(after: generation) }
            return
        }
        controller.ownAddress = DeviceAddress(address, type: .random)
        ownAddressRotation?.changes += 1
        if let rotation = ownAddressRotation {
            for (id, waiter) in rotation.waiters where rotation.changes >= waiter.count {
                ownAddressRotation?.waiters[id] = nil
                waiter.continuation.resume()
            }
        }
        logger.debug("own address now \(address) (resolvable private)")
        if pauses { await resumeAdvertising(after: generation) }
    }

    private func setAdvertising(_ set: AdvertisingSet, enabled: Bool) async throws(HostError) {
        if set.isExtended {
            try await execute(.leSetExtendedAdvertisingEnable(.one(.init(handle: set.handle), enable: enabled)))
        } else {
            try await execute(.leSetAdvertisingEnable(enabled))
        }
    }

    /// Switches advertising on again after an address change, unless it was stopped (or a
    /// central connected, which the restart rules handle) meanwhile.
    private func resumeAdvertising(after generation: UInt64) async {
        guard advertiser.generation == generation, let running = advertiser.running, running.isOn,
              failure == nil else { return }
        do {
            try await setAdvertising(running.set, enabled: true)
        } catch {
            logger.notice("advertising could not start again after the own address changed: \(error)")
            if advertiser.generation == generation, var now = advertiser.running {
                now.isOn = false
                advertiser.running = now
            }
        }
    }
}

import Foundation
import RawbleBearer
import RawbleHost
import RawbleHostCore
import RawbleSMP
import RawbleTestPeers
import RawbleTestSupport
import RawbleTransport
import RawbleWire
import Testing

// rawble's Security Manager against Bumble peers that perform the published attacks on a host
// (issue 38; docs: SECURITY.md), over H4 on 127.0.0.1: the strap attacks rawble's central, and
// Bumble's central attacks rawble's peripheral (bumble_fixture/pairing.py's ATTACKS, as the
// device's `--PREFIX-fault`). Each attacker logs every SMP command it received and each step of
// its attack, so a test sees how far rawble let it go, not only that the pairing ended. The
// reflection of rawble's own public key is performed here against rawble as initiator; as
// responder rawble makes a new key pair for every pairing, so a key seen in an earlier pairing
// cannot be reflected, and the check of the peer's X itself is proven on byte streams
// (RawbleSMPTests) with a key pair supplied twice.

/// The strap's address (random static) and identity.
private let strap = DeviceAddress(BluetoothAddress(0xC0_B1_E0_00_00_01), type: .random)
/// Bumble's central's address (random static; bumble_central.py's default `--central-address`).
private let bumbleCentral = DeviceAddress(BluetoothAddress(0xF0_CE_17_4A_00_01), type: .random)

/// SMP command codes the attackers log as received (Core Vol 3 Part H 3.3).
private enum SMPCode {
    static let pairingConfirm: UInt8 = 0x03
    static let pairingRandom: UInt8 = 0x04
    static let pairingFailed: UInt8 = 0x05
    static let dhKeyCheck: UInt8 = 0x0D
}

/// Types a fixed passkey; shows and confirms nothing.
private struct TypingAgent: PairingAgent {
    let passkey: UInt32
    func displayPasskey(_ passkey: UInt32, for peer: DeviceAddress) async {}
    func passkey(for peer: DeviceAddress) async -> UInt32? { passkey }
    func confirm(_ number: UInt32, for peer: DeviceAddress) async -> Bool { false }
}

private func configuration(_ io: SMPIOCapability, mitm: Bool = false) -> PairingConfiguration {
    var configuration = PairingConfiguration(ioCapability: io)
    configuration.mitm = mitm
    return configuration
}

/// The SMP reason of a pairing failure `error` (either side's), or `nil`.
private func reason(_ error: HostError?) -> SMPPairingFailureReason? {
    guard case .pairingFailed(_, let failure)? = error else { return nil }
    return failure.reason
}

/// A bond rawble holds before an attacker tries to replace it: authenticated, LE Secure
/// Connections, a 16-octet key.
private func strongBond(with peer: DeviceAddress) -> Bond {
    let key = Bond.LongTermKey(value: 0x0123_4567_89AB_CDEF_FEDC_BA98_7654_3210)
    return Bond(peer: peer, centralKey: key, peripheralKey: key, authenticated: true, secureConnections: true, keySize: 16)
}

extension BumblePeer.SecurityEvent {
    var receivedCode: UInt8? { if case .smpReceived(_, let code) = self { code } else { nil } }
    var attackStep: String? { if case .attack(_, let step) = self { step } else { nil } }
    var isEncryptionEnabled: Bool { if case .encryption(let change) = self { change.enabled } else { false } }
}

@Suite("Pairing attacks: Bumble peers that reflect, downgrade and skip steps, against rawble's central and peripheral",
       .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct PairingAttackBumbleTests {
    // MARK: rawble as initiator (central), the strap attacks

    /// Starts the strap with `options`, connects rawble's central configured `rawble`, pairs;
    /// returns the error pairing threw (nil: it paired), the connection's security, the strap's log.
    private func attackOnCentral(_ options: BumblePeer.PairingOptions, rawble: PairingConfiguration, agent: (any PairingAgent)? = nil,
                                 bonds: InMemoryBondStore = InMemoryBondStore())
        async throws -> (error: HostError?, security: LinkSecurity, log: [BumblePeer.SecurityEvent]) {
        let peer = try await BumblePeer.start(arguments: ["--strap-only"] + BumblePeer.StrapSecurity(pairing: options).arguments)
        defer { peer.stop() }
        let hostLog = RecordingLogHandler(level: .debug)
        let adapter = try await openAdapter(host: "127.0.0.1", port: try #require(peer.port), pairing: rawble, agent: agent, bonds: bonds,
                                            log: hostLog)
        let connection = try await adapter.connect(to: strap, timeout: .seconds(20))
        let error = await #expect(throws: HostError.self) { try await connection.pair(timeout: .seconds(40)) }
        // A pairing that ends by its bound, not by the peer's or rawble's refusal: what the host
        // and the strap saw (seen once under heavy load; the cause is not known yet).
        if case .securityTimedOut? = error {
            let strapLog = (try? peer.securityLog()).map { "\($0)" } ?? "(none)"
            Issue.record("the pairing did not end within its bound; the host's log:\n\(hostLog.lines.suffix(60).joined(separator: "\n"))\nthe strap's log: \(strapLog)")
        }
        let security = connection.security
        // What the strap received after rawble's failure (its Pairing Failed) is in its log once it arrived.
        _ = await eventually { ((try? peer.securityLog()) ?? []).contains { $0.receivedCode == SMPCode.pairingFailed } }
        let log = try peer.securityLog()
        await adapter.close()
        return (error, security, log)
    }

    @Test("CVE-2020-26558: the strap answers rawble's public key with (X, p - Y) to reflect the Passkey Entry rounds; rawble stops at the key: no Pairing Confirm or Random sent, no passkey bit learned, no bond")
    func reflectedPublicKey() async throws {
        let bonds = InMemoryBondStore()
        let passkey: UInt32 = 123_456
        let (error, security, log) = try await attackOnCentral(
            BumblePeer.PairingOptions(io: .display, mitm: true, passkey: passkey, fault: .reflectPublicKey),
            rawble: configuration(.keyboardOnly, mitm: true), agent: TypingAgent(passkey: passkey), bonds: bonds)
        #expect(log.contains { $0.attackStep == "reflected-public-key" }, "the strap did not reflect the key: \(log)")
        #expect(reason(error) == .dhKeyCheckFailed, "\(String(describing: error))")
        let received = log.compactMap { $0.receivedCode }
        #expect(!received.contains(SMPCode.pairingConfirm) && !received.contains(SMPCode.pairingRandom),
                "rawble went on with the rounds after the reflected key: \(received)")
        #expect(!log.contains { $0.attackStep == "passkey-bit" || $0.attackStep == "passkey-learned" }, "\(log)")
        #expect(security == .none)
        #expect(await bonds.bonds().isEmpty)
    }

    @Test("LE legacy, reflected confirm and random (Sconfirm = Mconfirm, Srand = Mrand): Confirm Value Failed, never encrypted, no bond")
    func reflectedLegacyConfirm() async throws {
        let bonds = InMemoryBondStore()
        var rawble = configuration(.noInputNoOutput)
        rawble.secureConnections = false
        let (error, security, log) = try await attackOnCentral(
            BumblePeer.PairingOptions(legacy: true, fault: .reflectConfirm), rawble: rawble, bonds: bonds)
        #expect(log.compactMap { $0.receivedCode }.contains(SMPCode.pairingConfirm), "rawble never sent its confirm: \(log)")
        #expect(reason(error) == .confirmValueFailed, "\(String(describing: error))")
        #expect(!log.contains { $0.isEncryptionEnabled }, "the link was encrypted with the reflected values' key: \(log)")
        #expect(security == .none)
        #expect(await bonds.bonds().isEmpty)
    }

    @Test("a Pairing Response offering key size 17 (SweynTooth CVE-2019-19196): Invalid Parameters, no bond", arguments: [true, false])
    func keySizeAboveSixteen(asCentral: Bool) async throws {
        let bonds = InMemoryBondStore()
        let error: HostError?
        if asCentral {
            error = try await attackOnCentral(BumblePeer.PairingOptions(fault: .keySize17), rawble: PairingConfiguration(), bonds: bonds).error
        } else {
            error = try await attackOnPeripheral(BumblePeer.PairingOptions(fault: .keySize17), bonds: bonds).failure
        }
        #expect(reason(error) == .invalidParameters, "\(String(describing: error))")
        #expect(await bonds.bonds().isEmpty)
    }

    @Test("a Pairing Response offering key size 7 (the specification's least, below rawble's default minimum of 16: KNOB for LE): Encryption Key Size, no bond")
    func keySizeBelowMinimum() async throws {
        let bonds = InMemoryBondStore()
        let (error, security, _) = try await attackOnCentral(BumblePeer.PairingOptions(fault: .keySize7), rawble: PairingConfiguration(), bonds: bonds)
        #expect(reason(error) == .encryptionKeySize, "\(String(describing: error))")
        #expect(security == .none)
        #expect(await bonds.bonds().isEmpty)
    }

    @Test("an identity address that is neither public nor static random: the pairing fails, no bond", arguments: [true, false])
    func invalidIdentityAddress(asCentral: Bool) async throws {
        let bonds = InMemoryBondStore()
        if asCentral {
            let (error, _, log) = try await attackOnCentral(BumblePeer.PairingOptions(fault: .badIdentityAddress),
                                                            rawble: PairingConfiguration(), bonds: bonds)
            #expect(log.contains { $0.attackStep == "bad-identity-address" }, "\(log)")
            #expect(error != nil)
        } else {
            let outcome = try await attackOnPeripheral(BumblePeer.PairingOptions(fault: .badIdentityAddress), bonds: bonds)
            #expect(outcome.log.contains { $0.attackStep == "bad-identity-address" }, "\(outcome.log)")
            // The central distributes its keys last, so its pairing is over when rawble refuses
            // the address: rawble's Pairing Failed is what it receives after.
            #expect(outcome.failure != nil || outcome.log.contains { $0.receivedCode == SMPCode.pairingFailed }, "\(outcome.log)")
        }
        #expect(await bonds.bonds().isEmpty)
    }

    @Test("re-pairing downgrade: a strap in the place of one rawble holds an authenticated bond with, pairing Just Works: refused (Authentication Requirements), the bond kept as it was")
    func downgradeAsCentral() async throws {
        let bonds = InMemoryBondStore()
        let bond = strongBond(with: strap)
        await bonds.save(bond)
        let peer = try await BumblePeer.start(arguments: ["--strap-only"] + BumblePeer.StrapSecurity().arguments)
        defer { peer.stop() }
        let adapter = try await openAdapter(host: "127.0.0.1", port: try #require(peer.port), pairing: PairingConfiguration(), bonds: bonds)
        // The strap has no bond: connecting may fail to encrypt with rawble's (a lost bond, said
        // so) or leave the link in clear; either way a pairing may not replace the bond.
        if let connection = try? await adapter.connect(to: strap, timeout: .seconds(20)) {
            let error = await #expect(throws: HostError.self) { try await connection.pair(timeout: .seconds(40)) }
            if let failure = reason(error) { #expect(failure == .authenticationRequirements, "\(String(describing: error))") }
            #expect(connection.security == .none)
        }
        #expect(await bonds.bonds() == [bond], "the authenticated bond was replaced")
        #expect(try peer.pairings().isEmpty, "the strap completed a pairing")
        await adapter.close()
    }

    // MARK: rawble as responder (peripheral), Bumble's central attacks

    /// rawble's peripheral advertising, Bumble's central pairing with `options` (an attack);
    /// returns rawble's pairing failure as the central logged it, the central's log and the
    /// security of the link as rawble saw it.
    private func attackOnPeripheral(_ options: BumblePeer.PairingOptions, rawble: PairingConfiguration = PairingConfiguration(),
                                    bonds: InMemoryBondStore)
        async throws -> (failure: HostError?, log: [BumblePeer.SecurityEvent], security: LinkSecurity?) {
        let name = "rawble-attacked"
        let central = try await BumbleCentral.start(target: name, arguments: ["--no-standard"], centrals: 1, timeout: 60,
                                                    pairing: BumbleCentral.Pairing(options: options, pair: true))
        defer { central.stop() }
        let served = try #require(central.peer.controllers.first)
        let adapter = try await openAdapter(host: try #require(served.host), port: try #require(served.port), pairing: rawble, bonds: bonds)
        _ = try await adapter.advertise(Advertisement(data: AdvertisingData(localName: name)))
        let serving = Task { () -> (HostError?, LinkSecurity)? in
            for await connection in adapter.incomingConnections {
                do {
                    for try await pdu in connection.att.pdus {
                        if let answer = AdapterAdvertisingBumbleTests.answer(pdu) { try await connection.att.send(answer) }
                    }
                } catch {}
                return (connection.lastSecurityFailure, connection.security)
            }
            return nil
        }
        defer { serving.cancel() }
        // Its run's end, or the link's: an attack that drops the link may leave its pairing
        // call waiting (Bumble's), so the run's `done` would come only at its own timeout.
        _ = try await central.event(within: 90) { $0.event == "done" || $0.event == "disconnected" }
        await central.stopAndWait()
        let seen = try await within(seconds: 30) { await serving.value }
        let log = central.securityEvents
        // rawble's own failure, else the reason the central logged for the pairing's end.
        let failure = seen?.0 ?? log.lazy.compactMap { event -> HostError? in
            if case .pairingFailed(_, let reason) = event {
                .pairingFailed(bumbleCentral, .peerFailed(SMPPairingFailureReason(reason)))
            } else { nil }
        }.first
        await adapter.close()
        return (failure, log, seen?.1)
    }

    @Test("SweynTooth CVE-2019-19194: the central starts encryption with an all-zero key right after the Pairing Response; rawble gives no key: never encrypted, no bond")
    func encryptionBeforeAnyKey() async throws {
        let bonds = InMemoryBondStore()
        // rawble refuses LE legacy pairing by default, before any key could be asked for: here
        // it allows it, so the pairing is under way when the central encrypts.
        let outcome = try await attackOnPeripheral(BumblePeer.PairingOptions(legacy: true, fault: .encryptEarly),
                                                   rawble: PairingConfiguration(allowsLegacyPairing: true), bonds: bonds)
        #expect(outcome.log.contains { $0.attackStep == "encrypt-early" }, "\(outcome.log)")
        #expect(outcome.log.contains { $0.attackStep == "refused" }, "the controller did not refuse the encryption: \(outcome.log)")
        #expect(!outcome.log.contains { $0.isEncryptionEnabled }, "the link was encrypted: \(outcome.log)")
        #expect(outcome.security == LinkSecurity.none)
        #expect(await bonds.bonds().isEmpty)
    }

    @Test("SweynTooth's DHCheck skip: the central encrypts with its LTK instead of sending its DHKey Check; rawble gives no key before the check: never encrypted, no bond")
    func encryptionInsteadOfDHKeyCheck() async throws {
        let bonds = InMemoryBondStore()
        let outcome = try await attackOnPeripheral(BumblePeer.PairingOptions(fault: .skipDHKeyCheck), bonds: bonds)
        #expect(outcome.log.contains { $0.attackStep == "skip-dhkey-check" }, "\(outcome.log)")
        #expect(outcome.log.contains { $0.attackStep == "refused" }, "the controller did not refuse the encryption: \(outcome.log)")
        // rawble, the responder, sends its DHKey Check only after checking the central's.
        #expect(!outcome.log.compactMap { $0.receivedCode }.contains(SMPCode.dhKeyCheck), "\(outcome.log)")
        #expect(!outcome.log.contains { $0.isEncryptionEnabled }, "the link was encrypted before the DHKey check: \(outcome.log)")
        #expect(outcome.security == LinkSecurity.none)
        #expect(await bonds.bonds().isEmpty)
    }

    @Test("re-pairing downgrade: a central with the address of one rawble holds an authenticated bond with pairs Just Works: refused (Authentication Requirements), the bond kept as it was")
    func downgradeAsPeripheral() async throws {
        let bonds = InMemoryBondStore()
        let bond = strongBond(with: bumbleCentral)
        await bonds.save(bond)
        let outcome = try await attackOnPeripheral(BumblePeer.PairingOptions(), bonds: bonds)
        #expect(reason(outcome.failure) == .authenticationRequirements, "\(String(describing: outcome.failure)) \(outcome.log)")
        #expect(!outcome.log.contains { $0.pairing != nil }, "the central completed a pairing: \(outcome.log)")
        #expect(await bonds.bonds() == [bond], "the authenticated bond was replaced")
    }
}

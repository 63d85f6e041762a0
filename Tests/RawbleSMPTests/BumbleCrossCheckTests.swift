import Foundation
import RawbleSMP
import RawbleWire
import Testing

/// Two of rawble's engines agreeing proves only that they agree. Here every value a pairing
/// put on the wire — public keys, confirm values, nonces, DHKey checks, the numeric comparison —
/// and the key it ends with are recomputed from the PDUs by Google Bumble's own SMP cryptography
/// (`Scripts/python/smp_reference.py`, `bumble.crypto`, run by `Scripts/venv-python`), with the
/// argument order Bumble's pairing uses with real devices: a swapped f6 argument, a wrong A1/A2
/// or a passkey bit taken from the wrong round shows here even when both engines make it.
@Suite("SMP pairing: each method's transcript recomputed by Bumble's cryptography",
       .enabled(if: ProcessInfo.processInfo.environment["RAWBLE_TESTS_WITHOUT_BUMBLE"] != "1",
                "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct BumbleCrossCheckTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The private keys of the specification's P-256 sample data (as SMPCryptoTests reads them).
    static func sampleKey(_ hex: String) throws -> PairingKeyPair {
        try PairingKeyPair(privateKey: try #require(P256Coordinate(bigEndianBytes: try Hex.decode(hex))))
    }

    /// 32 hex digits, most significant first.
    static func hex(_ value: UInt128) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 32 - digits.count) + digits
    }

    /// The transcript of `link` (run to completion) as smp_reference.py reads it.
    static func transcript(_ link: PairingLink, method: String, privateKeys: (String, String)?,
                           publicKeys: (PairingPublicKey, PairingPublicKey)?) throws -> [String: Any] {
        var request: [Int] = [], response: [Int] = []
        var confirms: [[Any]] = [], randoms: [[Any]] = [], checks: [[Any]] = []
        for (fromCentral, pdu) in link.sent {
            switch pdu {
            case .pairingRequest: request = pdu.encoded.dropFirst().map(Int.init)
            case .pairingResponse: response = pdu.encoded.dropFirst().map(Int.init)
            case .pairingConfirm(let value): confirms.append([fromCentral, hex(value)])
            case .pairingRandom(let value): randoms.append([fromCentral, hex(value)])
            case .pairingDHKeyCheck(let value): checks.append([fromCentral, hex(value)])
            default: break
            }
        }
        let outcome = try #require(link.centralOutcome, "\(String(describing: link.centralFailure))")
        func side(_ address: DeviceAddress, _ key: String?) -> [String: Any] {
            ["address": Hex.encode((0..<6).map { UInt8(truncatingIfNeeded: address.address.value >> (8 * (5 - $0))) }),
             "type": address.type.isPublic == false ? 1 : 0, "privateKey": key.map { $0.replacingOccurrences(of: " ", with: "") } as Any]
        }
        var result: [String: Any] = [
            "method": method, "initiator": side(PairingLink.centralAddress, privateKeys?.0),
            "responder": side(PairingLink.peripheralAddress, privateKeys?.1),
            "request": request, "response": response, "keySize": Int(outcome.keySize),
            "passkey": link.shown.first.map { Int($0) } as Any,
            "confirms": confirms, "randoms": randoms, "checks": checks,
            "linkKey": hex(outcome.linkKey), "comparison": link.compared.first.map { Int($0.value) } as Any,
        ]
        if let (a, b) = publicKeys {
            result["publicKeys"] = ["initiator": [a.x.description, a.y.description], "responder": [b.x.description, b.y.description]]
        }
        return result
    }

    @Test("LE Secure Connections (Just Works, Numeric Comparison, Passkey Entry both ways, a 10-octet key) and legacy pairing (Just Works, Passkey Entry): Bumble computes every value rawble sent")
    func transcriptsAgreeWithBumble() async throws {
        let privateA = "3f49f6d4 a3c55f38 74c9b3e3 d2103f50 4aff607b eb40b799 5899b8a6 cd3c1abd"
        let privateB = "55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd"
        let keyA = try Self.sampleKey(privateA), keyB = try Self.sampleKey(privateB)
        let cases: [(String, PairingConfiguration, PairingConfiguration, Bool)] = [
            ("justWorks", PairingConfiguration(), PairingConfiguration(), true),
            ("numericComparison", PairingConfiguration(ioCapability: .displayYesNo, mitm: true),
             PairingConfiguration(ioCapability: .keyboardDisplay, mitm: true), true),
            ("passkey", PairingConfiguration(ioCapability: .displayOnly, mitm: true),
             PairingConfiguration(ioCapability: .keyboardOnly, mitm: true), true),
            ("passkey", PairingConfiguration(ioCapability: .keyboardOnly, mitm: true),
             PairingConfiguration(ioCapability: .displayOnly, mitm: true), true),
            ("justWorks", PairingConfiguration(maximumKeySize: 10, minimumKeySize: 10), PairingConfiguration(minimumKeySize: 7), true),
            ("legacy", PairingConfiguration(secureConnections: false), PairingConfiguration(secureConnections: false), false),
            ("legacy", PairingConfiguration(ioCapability: .keyboardDisplay, mitm: true, secureConnections: false),
             PairingConfiguration(ioCapability: .displayOnly, mitm: true, secureConnections: false), false),
        ]
        var transcripts: [[String: Any]] = []
        for (index, (method, central, peripheral, secure)) in cases.enumerated() {
            var link = PairingLink(central: central, peripheral: peripheral, seed: UInt64(index + 1),
                                   centralKey: secure ? keyA : nil, peripheralKey: secure ? keyB : nil)
            link.run()
            transcripts.append(try Self.transcript(link, method: method, privateKeys: secure ? (privateA, privateB) : nil,
                                                   publicKeys: secure ? (keyA.publicKey, keyB.publicKey) : nil))
        }

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-smp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("transcripts.json")
        let output = folder.appendingPathComponent("out"), errors = folder.appendingPathComponent("err")
        try JSONSerialization.data(withJSONObject: transcripts).write(to: input)
        try Data().write(to: output)
        try Data().write(to: errors)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["-k", "5", "120", Self.root.appendingPathComponent("Scripts/venv-python").path,
                             Self.root.appendingPathComponent("Scripts/python/smp_reference.py").path, input.path]
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Waited for on a thread of its own, not on Swift's cooperative pool, whose two threads
        // (on 2 cores) every other test of the run needs meanwhile (RawbleTestSupport's
        // onOwnThread, which this target does not depend on).
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                process.waitUntilExit()
                done.resume()
            }
        }
        let stderr = try String(contentsOf: errors, encoding: .utf8)
        try #require(process.terminationStatus == 0, "smp_reference.py: status \(process.terminationStatus): \(stderr)")
        let lines = try String(contentsOf: output, encoding: .utf8).split(separator: "\n")
        try #require(lines.count == cases.count, "\(lines)")
        for (line, (method, _, _, _)) in zip(lines, cases) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let mismatches = object["mismatches"] as? [String] ?? ["no mismatches field"]
            #expect(mismatches.isEmpty, "\(method): \(mismatches)")
        }
    }
}


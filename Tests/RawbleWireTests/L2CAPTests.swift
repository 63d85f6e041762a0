import PropertyBased
import RawbleTestSupport
import RawbleWire
import Testing

private func signalingError(_ input: [UInt8]) -> WireError? {
    do {
        _ = try LESignalingCommand.decode(input)
        return nil
    } catch {
        return error
    }
}

private func smpError(_ input: [UInt8]) -> WireError? {
    do {
        _ = try SMPCommand.decode(input)
        return nil
    } catch {
        return error
    }
}

private func frameError(_ input: [UInt8]) -> WireError? {
    do {
        _ = try L2CAPFrame.decode(input)
        return nil
    } catch {
        return error
    }
}

// MARK: - Basic frames

@Suite("L2CAP basic frames")
struct L2CAPFrameTests {
    @Test func frameCarriesAnATTPayload() throws {
        let input = bytes("03 00 04 00 02 05 02")
        let frame = try L2CAPFrame.decode(input)
        #expect(frame.channelID == .att)
        #expect(frame.payload == [0x02, 0x05, 0x02])
        #expect(frame.payload.startIndex == 4)
        #expect(try ATTPDU.decode(frame.payload) == .exchangeMTURequest(clientMTU: 517))
        #expect(frame.encoded == input)
        #expect(L2CAPFrame(channelID: .leSignaling, payload: [0x13, 0x01, 0x02, 0x00, 0x00, 0x00]).encoded
            == (bytes("06 00 05 00 13 01 02 00 00 00")))
    }

    @Test func emptyPayloadIsAValidFrame() throws {
        #expect(try L2CAPFrame.decode(bytes("00 00 40 00")) == L2CAPFrame(channelID: L2CAPChannelID(0x40), payload: []))
    }

    @Test func lengthLongerThanThePayloadIsTruncated() throws {
        let error = try #require(frameError(bytes("04 00 04 00 02 05 02")))
        #expect(error.kind == .truncated(needed: 4, available: 3))
        #expect(error.context == "L2CAP basic frame")
    }

    @Test func lengthShorterThanThePayloadIsTrailingBytes() throws {
        let error = try #require(frameError(bytes("02 00 04 00 02 05 02")))
        #expect(error.kind == .trailingBytes(count: 1))
        #expect(error.offset == 6)
    }

    @Test func headerShorterThan4BytesIsTruncated() throws {
        #expect(frameError([]) != nil)
        #expect(frameError(bytes("00 00 04")) != nil)
    }

    @Test func headerPeekNeedsFourBytes() throws {
        #expect(L2CAPHeader(peeking: bytes("03 00 04")) == nil)
        #expect(L2CAPHeader(peeking: [UInt8]()) == nil)
        let header = try #require(L2CAPHeader(peeking: bytes("17 00 04 00 1B")))
        #expect(header.length == 23 && header.channelID == .att)
        #expect(header.frameLength == 27)
        let slice = bytes("FF FF 10 02 06 00")[2...]
        #expect(L2CAPHeader(peeking: slice) == L2CAPHeader(length: 0x0210, channelID: .securityManager))
        #expect(L2CAPHeader(peeking: bytes("FF FF FF FF"))?.frameLength == 4 + 0xFFFF)
    }

    @Test func channelIdentifiersHaveNames() {
        #expect(L2CAPChannelID.att.rawValue == 0x0004)
        #expect(L2CAPChannelID.leSignaling.rawValue == 0x0005)
        #expect(L2CAPChannelID.securityManager.rawValue == 0x0006)
        #expect(L2CAPChannelID.att.description == "ATT (0x0004)")
        #expect(L2CAPChannelID.leSignaling.name == "LE Signaling")
        #expect(L2CAPChannelID.securityManager.name == "SMP")
        #expect(L2CAPChannelID(0x0040).isLEDynamic && L2CAPChannelID(0x007F).isLEDynamic)
        #expect(!L2CAPChannelID(0x003F).isLEDynamic && !L2CAPChannelID(0x0080).isLEDynamic)
        #expect(L2CAPChannelID(0x0041).name == "Dynamic")
        #expect(L2CAPChannelID(0x0020).name == "Reserved")
    }

    @Test func framesRoundTrip() async {
        await propertyCheck(input: Gen.uint16(), Gen.uint8().array(of: 0...64)) { cid, payload in
            let frame = L2CAPFrame(channelID: L2CAPChannelID(cid), payload: payload)
            let encoded = frame.encoded
            #expect(encoded.count == 4 + payload.count)
            #expect(L2CAPHeader(peeking: encoded) == frame.header)
            #expect((try? L2CAPFrame.decode(encoded)) == frame)
        }
    }

    @Test func decodingRandomBytesNeverTraps() async {
        await propertyCheck(count: 2000, input: Gen.uint8().array(of: 0...24)) { input in
            let header = L2CAPHeader(peeking: input)
            #expect((header == nil) == (input.count < 4))
            if let frame = try? L2CAPFrame.decode(input) {
                #expect(header?.frameLength == input.count)
                #expect(frame.encoded == input)
            }
        }
    }
}

// MARK: - LE signaling

@Suite("LE signaling")
struct LESignalingTests {
    @Test func connectionParameterUpdateRequestFromAPeripheral() throws {
        // interval 7.5–15 ms, latency 0, timeout 4 s
        let input = bytes("12 01 08 00 06 00 0C 00 00 00 90 01")
        let command = try LESignalingCommand.decode(input)
        let parameters = LESignalingCommand.ConnectionParameters(
            minimumInterval: 6, maximumInterval: 12, peripheralLatency: 0, timeoutMultiplier: 400)
        #expect(command == LESignalingCommand(identifier: 1, .connectionParameterUpdateRequest(parameters)))
        #expect(command.code == .connectionParameterUpdateRequest)
        #expect(parameters.isValid)
        #expect(parameters.supervisionTimeoutMilliseconds == 4000)
        #expect(command.encoded == input)
    }

    @Test func connectionParameterUpdateResponses() throws {
        let accepted = LESignalingCommand(identifier: 1, .connectionParameterUpdateResponse(.accepted))
        #expect(accepted.encoded == (bytes("13 01 02 00 00 00")))
        let rejected = LESignalingCommand(identifier: 7, .connectionParameterUpdateResponse(.rejected))
        #expect(rejected.encoded == (bytes("13 07 02 00 01 00")))
        #expect(try LESignalingCommand.decode(bytes("13 07 02 00 01 00")) == rejected)
        #expect(LESignalingCommand.ConnectionParameterUpdateResult.rejected.name == "Connection Parameters rejected")
    }

    @Test func commandRejectReasons() throws {
        let notUnderstood = bytes("01 02 02 00 00 00")
        #expect(try LESignalingCommand.decode(notUnderstood) == LESignalingCommand(identifier: 2, .commandReject(.commandNotUnderstood)))
        #expect(LESignalingCommand(identifier: 2, .commandReject(.commandNotUnderstood)).encoded == notUnderstood)
        #expect(try LESignalingCommand.decode(bytes("01 03 04 00 01 00 17 00")) ==
            LESignalingCommand(identifier: 3, .commandReject(.signalingMTUExceeded(actualMTU: 23))))
        #expect(try LESignalingCommand.decode(bytes("01 04 06 00 02 00 40 00 41 00")) ==
            LESignalingCommand(identifier: 4, .commandReject(.invalidCIDInRequest(localCID: L2CAPChannelID(0x40), remoteCID: L2CAPChannelID(0x41)))))
        let other = bytes("01 05 05 00 09 00 AA BB CC")
        let decoded = try LESignalingCommand.decode(other)
        #expect(decoded == LESignalingCommand(identifier: 5, .commandReject(.other(reason: 9, data: [0xAA, 0xBB, 0xCC]))))
        #expect(decoded.encoded == other)
        // Reasons with a fixed data size reject other sizes.
        #expect(signalingError(bytes("01 02 03 00 00 00 00")) != nil)
        #expect(signalingError(bytes("01 03 03 00 01 00 17")) != nil)
    }

    @Test func disconnection() throws {
        let request = bytes("06 05 04 00 40 00 41 00")
        #expect(try LESignalingCommand.decode(request) ==
            LESignalingCommand(identifier: 5, .disconnectionRequest(destinationCID: L2CAPChannelID(0x40), sourceCID: L2CAPChannelID(0x41))))
        let response = bytes("07 05 04 00 40 00 41 00")
        #expect(try LESignalingCommand.decode(response) ==
            LESignalingCommand(identifier: 5, .disconnectionResponse(destinationCID: L2CAPChannelID(0x40), sourceCID: L2CAPChannelID(0x41))))
    }

    @Test func leCreditBasedConnection() throws {
        let request = bytes("14 01 0A 00 80 00 40 00 00 02 F7 00 0A 00")
        #expect(try LESignalingCommand.decode(request) == LESignalingCommand(identifier: 1, .leCreditBasedConnectionRequest(
            spsm: 0x80, sourceCID: L2CAPChannelID(0x40), mtu: 512, mps: 247, initialCredits: 10)))
        let response = bytes("15 01 0A 00 41 00 00 02 F7 00 0A 00 00 00")
        let decoded = try LESignalingCommand.decode(response)
        #expect(decoded == LESignalingCommand(identifier: 1, .leCreditBasedConnectionResponse(
            destinationCID: L2CAPChannelID(0x41), mtu: 512, mps: 247, initialCredits: 10, result: .successful)))
        #expect(decoded.encoded == response)
        #expect(LESignalingCommand.LECreditBasedConnectionResult.spsmNotSupported.name == "Connection refused - SPSM not supported")
        #expect(try LESignalingCommand.decode(bytes("16 02 04 00 40 00 05 00")) ==
            LESignalingCommand(identifier: 2, .flowControlCreditIndication(channelID: L2CAPChannelID(0x40), credits: 5)))
    }

    @Test func enhancedCreditBasedConnectionCarriesCIDLists() throws {
        let request = bytes("17 01 0C 00 80 00 00 02 F7 00 0A 00 40 00 41 00")
        #expect(try LESignalingCommand.decode(request) == LESignalingCommand(identifier: 1, .creditBasedConnectionRequest(
            spsm: 0x80, mtu: 512, mps: 247, initialCredits: 10, sourceCIDs: [L2CAPChannelID(0x40), L2CAPChannelID(0x41)])))
        let response = bytes("18 01 0C 00 00 02 F7 00 0A 00 04 00 50 00 00 00")
        let decoded = try LESignalingCommand.decode(response)
        #expect(decoded == LESignalingCommand(identifier: 1, .creditBasedConnectionResponse(
            mtu: 512, mps: 247, initialCredits: 10, result: .someInsufficientResources,
            destinationCIDs: [L2CAPChannelID(0x50), .null])))
        #expect(decoded.encoded == response)
        #expect(try LESignalingCommand.decode(bytes("19 03 08 00 00 02 F7 00 40 00 41 00")) ==
            LESignalingCommand(identifier: 3, .creditBasedReconfigureRequest(mtu: 512, mps: 247, destinationCIDs: [L2CAPChannelID(0x40), L2CAPChannelID(0x41)])))
        #expect(try LESignalingCommand.decode(bytes("1A 03 02 00 01 00")) ==
            LESignalingCommand(identifier: 3, .creditBasedReconfigureResponse(.mtuReductionNotAllowed)))
        // A CID list must hold whole CIDs.
        #expect(signalingError(bytes("17 01 0B 00 80 00 00 02 F7 00 0A 00 40 00 41")) != nil)
    }

    @Test func unknownCodesAreKeptForCommandReject() throws {
        // Information Request is BR/EDR-only; an LE host rejects it using the peer's identifier.
        let input = bytes("0A 09 02 00 02 00")
        let command = try LESignalingCommand.decode(input)
        #expect(command == LESignalingCommand(identifier: 9, .unknown(code: LESignalingCode(0x0A), data: [0x02, 0x00])))
        #expect(command.code.name == "Information Request")
        #expect(command.encoded == input)
        #expect(try LESignalingCommand.decode(bytes("FE 01 00 00")).code == LESignalingCode(0xFE))
    }

    @Test func headerPeekGivesTheIdentifierOfAnUndecodableCommand() throws {
        let malformed = bytes("12 0B 07 00 06 00 0C 00 00 00 90")
        #expect(signalingError(malformed) != nil)
        let header = try #require(LESignalingHeader(peeking: malformed))
        #expect(header.code == .connectionParameterUpdateRequest && header.identifier == 0x0B && header.length == 7)
        #expect(LESignalingHeader(peeking: bytes("12 0B 07")) == nil)
    }

    @Test func oneCommandPerFrame() throws {
        let twoCommands = bytes("13 01 02 00 00 00 13 02 02 00 00 00")
        let error = try #require(signalingError(twoCommands))
        #expect(error.kind == .trailingBytes(count: 6) && error.offset == 6)
        let short = try #require(signalingError(bytes("13 01 04 00 00 00")))
        #expect(short.kind == .truncated(needed: 4, available: 2))
        #expect(signalingError(bytes("13 01 02")) != nil)
        #expect(signalingError([]) != nil)
    }

    @Test func knownCommandsMustHaveTheirExactSize() throws {
        #expect(signalingError(bytes("12 01 07 00 06 00 0C 00 00 00 90")) != nil)
        let long = try #require(signalingError(bytes("12 01 09 00 06 00 0C 00 00 00 90 01 00")))
        #expect(long.kind == .trailingBytes(count: 1))
        #expect(long.context == "LE signaling Connection Parameter Update Request")
        #expect(signalingError(bytes("13 01 03 00 00 00 00")) != nil)
        #expect(signalingError(bytes("06 01 02 00 40 00")) != nil)
        #expect(signalingError(bytes("16 01 03 00 40 00 05")) != nil)
    }

    @Test func connectionParameterRangesAtTheirBoundaries() {
        func p(_ min: UInt16, _ max: UInt16, _ latency: UInt16, _ timeout: UInt16) -> Bool {
            LESignalingCommand.ConnectionParameters(
                minimumInterval: min, maximumInterval: max, peripheralLatency: latency, timeoutMultiplier: timeout).isValid
        }
        #expect(p(6, 6, 0, 10))
        #expect(!p(5, 6, 0, 10))
        #expect(!p(6, 3201, 0, 3200))
        #expect(p(3200, 3200, 0, 3200))
        #expect(!p(12, 6, 0, 400))
        #expect(p(6, 6, 499, 3200))
        #expect(!p(6, 6, 500, 3200))
        #expect(!p(6, 6, 0, 9))
        #expect(!p(6, 6, 0, 3201))
        // timeout must exceed (1 + latency) × max × 2.5 (in units of 10 ms):
        #expect(p(3200, 3200, 0, 801))
        #expect(!p(3200, 3200, 0, 800))    // 8 s = (1 + 0) × 4 s × 2: equal, not greater
        #expect(p(1600, 1600, 0, 401))
        #expect(!p(1600, 1600, 0, 400))    // 4 s = (1 + 0) × 2 s × 2
        #expect(p(6, 6, 499, 751))
        #expect(!p(6, 6, 499, 750))        // 7.5 s = 500 × 7.5 ms × 2: equal, not greater
    }

    @Test func connectionParameterValidityMatchesTheSpecFormula() async {
        await propertyCheck(count: 1000, input: Gen.uint16(in: 0...3300), Gen.uint16(in: 0...3300), Gen.uint16(in: 0...600), Gen.uint16(in: 0...3300)) { min, max, latency, timeout in
            let parameters = LESignalingCommand.ConnectionParameters(
                minimumInterval: min, maximumInterval: max, peripheralLatency: latency, timeoutMultiplier: timeout)
            // Reference: the spec's statement in milliseconds.
            let timeoutMs = Double(timeout) * 10
            let intervalMs = Double(max) * 1.25
            let expected = (6...3200).contains(min) && (6...3200).contains(max) && min <= max
                && latency <= 499 && (10...3200).contains(timeout)
                && timeoutMs > Double(1 + Int(latency)) * intervalMs * 2
            #expect(parameters.isValid == expected)
        }
    }

    @Test func commandsRoundTrip() async {
        let generator = Generator<LESignalingCommand, Shrink.None<LESignalingCommand>> { rng in
            randomSignalingCommand(&rng)
        }
        await propertyCheck(count: 500, input: generator) { command in
            #expect((try? LESignalingCommand.decode(command.encoded)) == command, "\(command)")
            #expect(LESignalingHeader(peeking: command.encoded)?.code == command.code)
        }
    }

    @Test func decodingRandomBytesNeverTraps() async {
        await propertyCheck(count: 2000, input: Gen.int(in: 0...0x1C), Gen.uint8().array(of: 0...24)) { code, rest in
            // A valid header over random data, and fully random bytes.
            let framed = [UInt8(code), 1] + [UInt8(rest.count), 0] + rest
            for input in [framed, rest] {
                if let command = try? LESignalingCommand.decode(input) {
                    #expect(command.encoded == input)
                }
            }
        }
    }
}

private func u16(_ rng: inout some RandomNumberGenerator) -> UInt16 { UInt16.random(in: 0...0xFFFF, using: &rng) }
private func cid(_ rng: inout some RandomNumberGenerator) -> L2CAPChannelID { L2CAPChannelID(u16(&rng)) }
private func cids(_ rng: inout some RandomNumberGenerator) -> [L2CAPChannelID] {
    (0..<Int.random(in: 0...5, using: &rng)).map { _ in cid(&rng) }
}

private func randomSignalingCommand(_ rng: inout some RandomNumberGenerator) -> LESignalingCommand {
    let payload: LESignalingCommand.Payload
    switch Int.random(in: 0...15, using: &rng) {
    case 0: payload = .commandReject(.commandNotUnderstood)
    case 1: payload = .commandReject(.signalingMTUExceeded(actualMTU: u16(&rng)))
    case 2: payload = .commandReject(.invalidCIDInRequest(localCID: cid(&rng), remoteCID: cid(&rng)))
    case 3:
        let data = (0..<Int.random(in: 0...8, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        payload = .commandReject(.other(reason: UInt16.random(in: 3...0xFFFF, using: &rng), data: data[...]))
    case 4: payload = .disconnectionRequest(destinationCID: cid(&rng), sourceCID: cid(&rng))
    case 5: payload = .disconnectionResponse(destinationCID: cid(&rng), sourceCID: cid(&rng))
    case 6: payload = .connectionParameterUpdateRequest(.init(
        minimumInterval: u16(&rng), maximumInterval: u16(&rng), peripheralLatency: u16(&rng), timeoutMultiplier: u16(&rng)))
    case 7: payload = .connectionParameterUpdateResponse(.init(u16(&rng)))
    case 8: payload = .leCreditBasedConnectionRequest(spsm: u16(&rng), sourceCID: cid(&rng), mtu: u16(&rng), mps: u16(&rng), initialCredits: u16(&rng))
    case 9: payload = .leCreditBasedConnectionResponse(destinationCID: cid(&rng), mtu: u16(&rng), mps: u16(&rng),
                                                       initialCredits: u16(&rng), result: .init(u16(&rng)))
    case 10: payload = .flowControlCreditIndication(channelID: cid(&rng), credits: u16(&rng))
    case 11: payload = .creditBasedConnectionRequest(spsm: u16(&rng), mtu: u16(&rng), mps: u16(&rng), initialCredits: u16(&rng), sourceCIDs: cids(&rng))
    case 12: payload = .creditBasedConnectionResponse(mtu: u16(&rng), mps: u16(&rng), initialCredits: u16(&rng),
                                                      result: .init(u16(&rng)), destinationCIDs: cids(&rng))
    case 13: payload = .creditBasedReconfigureRequest(mtu: u16(&rng), mps: u16(&rng), destinationCIDs: cids(&rng))
    case 14: payload = .creditBasedReconfigureResponse(.init(u16(&rng)))
    default:
        let typed: Set<UInt8> = [0x01, 0x06, 0x07, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A]
        var code = UInt8.random(in: 0...255, using: &rng)
        while typed.contains(code) { code &+= 1 }
        let data = (0..<Int.random(in: 0...8, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        payload = .unknown(code: LESignalingCode(code), data: data[...])
    }
    return LESignalingCommand(identifier: UInt8.random(in: 0...255, using: &rng), payload)
}

// MARK: - SMP

@Suite("SMP")
struct SMPTests {
    @Test func pairingFailedPairingNotSupported() throws {
        let command = try SMPCommand.decode(bytes("05 05"))
        #expect(command == .pairingFailed(.pairingNotSupported))
        #expect(command.code == .pairingFailed)
        #expect(SMPCommand.pairingFailed(.pairingNotSupported).encoded == [0x05, 0x05])
        #expect(SMPPairingFailureReason.pairingNotSupported.description == "Pairing Not Supported (0x05)")
    }

    @Test func everyPairingFailedReasonHasItsSpecName() throws {
        let names = [
            "Passkey Entry Failed", "OOB Not Available", "Authentication Requirements", "Confirm Value Failed",
            "Pairing Not Supported", "Encryption Key Size", "Command Not Supported", "Unspecified Reason",
            "Repeated Attempts", "Invalid Parameters", "DHKey Check Failed", "Numeric Comparison Failed",
            "BR/EDR Pairing In Progress", "Cross-transport Key Derivation/Generation Not Allowed", "Key Rejected",
        ]
        for (index, name) in names.enumerated() {
            #expect(SMPPairingFailureReason(UInt8(index + 1)).name == name)
        }
        #expect(SMPPairingFailureReason(0x00).name == "Reserved")
        #expect(SMPPairingFailureReason(0x42).name == "Reserved")
        #expect(try SMPCommand.decode([0x05, 0x42]) == .pairingFailed(SMPPairingFailureReason(0x42)))
    }

    @Test func pairingRequestFromAPhone() throws {
        // KeyboardDisplay, no OOB, bonding + MITM + SC + CT2, 16-byte keys, all keys both ways.
        let input = bytes("01 04 00 2D 10 0F 0F")
        let command = try SMPCommand.decode(input)
        let expected = SMPPairingParameters(
            ioCapability: .keyboardDisplay, oobDataFlag: 0,
            authenticationRequirements: [.bonding, .mitm, .secureConnections, .ct2], maximumEncryptionKeySize: 16,
            initiatorKeyDistribution: [.encryptionKey, .identityKey, .signingKey, .linkKey],
            responderKeyDistribution: [.encryptionKey, .identityKey, .signingKey, .linkKey])
        #expect(command == .pairingRequest(expected))
        #expect(!expected.isOOBDataPresent)
        #expect(command.encoded == input)
        #expect(try SMPCommand.decode(bytes("02 03 00 01 10 00 01")) == .pairingResponse(SMPPairingParameters(
            ioCapability: .noInputNoOutput, authenticationRequirements: .bonding,
            initiatorKeyDistribution: [], responderKeyDistribution: .encryptionKey)))
    }

    @Test func securityRequest() throws {
        #expect(try SMPCommand.decode(bytes("0B 05")) == .securityRequest([.bonding, .mitm]))
        #expect(SMPCommand.securityRequest(.bonding).encoded == [0x0B, 0x01])
    }

    @Test func otherCommandsAreKeptRaw() throws {
        let confirm = bytes("03 00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F")
        let command = try SMPCommand.decode(confirm)
        #expect(command == .other(code: .pairingConfirm, parameters: confirm[1...]))
        #expect(command.code.name == "Pairing Confirm")
        #expect(command.encoded == confirm)
        #expect(try SMPCommand.decode([0x7F]) == .other(code: SMPCode(0x7F), parameters: []))
    }

    @Test func typedCommandsMustHaveTheirExactSize() throws {
        #expect(smpError([]) != nil)
        #expect(smpError([0x05]) != nil)
        #expect(smpError([0x05, 0x05, 0x00])?.kind == .trailingBytes(count: 1))
        #expect(smpError(bytes("01 04 00 2D 10 0F")) != nil)
        #expect(smpError(bytes("01 04 00 2D 10 0F 0F 00")) != nil)
        #expect(smpError([0x0B]) != nil)
        #expect(smpError([0x0B, 0x01, 0x01])?.context == "SMP Security Request")
    }

    @Test func commandsRoundTrip() async {
        await propertyCheck(count: 300, input: Gen.uint8().array(of: 7)) { b in
            let parameters = SMPPairingParameters(
                ioCapability: SMPIOCapability(b[0]), oobDataFlag: b[1],
                authenticationRequirements: SMPAuthenticationRequirements(rawValue: b[2]), maximumEncryptionKeySize: b[3],
                initiatorKeyDistribution: SMPKeyDistribution(rawValue: b[4]), responderKeyDistribution: SMPKeyDistribution(rawValue: b[5]))
            let others = Set<UInt8>([0x01, 0x02, 0x05, 0x0B])
            let commands: [SMPCommand] = [
                .pairingRequest(parameters), .pairingResponse(parameters),
                .pairingFailed(SMPPairingFailureReason(b[6])), .securityRequest(SMPAuthenticationRequirements(rawValue: b[6])),
                .other(code: SMPCode(others.contains(b[6]) ? 0x03 : b[6]), parameters: b[1...]),
            ]
            for command in commands {
                #expect((try? SMPCommand.decode(command.encoded)) == command)
            }
        }
    }

    @Test func decodingRandomBytesNeverTraps() async {
        await propertyCheck(count: 2000, input: Gen.uint8().array(of: 0...12)) { input in
            if let command = try? SMPCommand.decode(input) {
                #expect(command.encoded == input)
            }
        }
    }
}

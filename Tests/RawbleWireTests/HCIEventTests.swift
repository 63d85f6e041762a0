import Testing
import RawbleTestSupport
import RawbleWire

private func decodeRoundTrip(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> HCIEvent {
    try HCIEventSamples.decodeRoundTrip(text, sourceLocation: sourceLocation)
}

private func decodeError(_ text: String) throws -> WireError? { try HCIEventSamples.decodeError(text) }

@Suite("HCI events")
struct HCIEventTests {
    @Test func commandCompleteForResetCarriesCreditsOpcodeAndStatus() throws {
        let event = try decodeRoundTrip("0E 04 01 03 0C 00")
        guard case .commandComplete(let cc) = event else { Issue.record("got \(event)"); return }
        #expect(cc.numHCICommandPackets == 1)
        #expect(cc.opcode == .reset)
        #expect(Array(cc.returnParameters) == [0x00])
        #expect(cc.status == .success)
        #expect(event.name == "Command Complete")
        #expect(event.code == 0x0E)
    }

    @Test func commandCompleteWithNoOpcodeOnlyGivesCredits() throws {
        let event = try decodeRoundTrip("0E 03 05 00 00")
        guard case .commandComplete(let cc) = event else { Issue.record("got \(event)"); return }
        #expect(cc.numHCICommandPackets == 5)
        #expect(cc.opcode.rawValue == 0)
        #expect(cc.returnParameters.isEmpty)
        #expect(cc.status == nil)
    }

    @Test func commandCompleteKeepsLongReturnParametersRaw() throws {
        // LE Read Buffer Size: status 0, LE ACL length 251 (0x00FB), 15 packets.
        let event = try decodeRoundTrip("0E 07 01 02 20 00 FB 00 0F")
        guard case .commandComplete(let cc) = event else { Issue.record("got \(event)"); return }
        #expect(cc.opcode == .leReadBufferSize)
        #expect(Array(cc.returnParameters) == [0x00, 0xFB, 0x00, 0x0F])
    }

    @Test func commandStatusForLECreateConnection() throws {
        let event = try decodeRoundTrip("0F 04 00 01 0D 20")
        #expect(event == .commandStatus(.init(status: .success, numHCICommandPackets: 1, opcode: .leCreateConnection)))
        let disallowed = try decodeRoundTrip("0F 04 0C 01 0C 20")
        guard case .commandStatus(let cs) = disallowed else { Issue.record("got \(disallowed)"); return }
        #expect(cs.status == .commandDisallowed)
        #expect(cs.opcode == .leSetScanEnable)
    }

    @Test func disconnectionCompleteWithRemoteUserTerminated() throws {
        let event = try decodeRoundTrip("05 04 00 40 00 13")
        #expect(event == .disconnectionComplete(.init(
            status: .success, connectionHandle: 0x0040, reason: .remoteUserTerminatedConnection)))
        #expect(event.name == "Disconnection Complete")
        #expect(event.description == "Disconnection Complete (0x05)")
    }

    @Test func numberOfCompletedPacketsSingleHandle() throws {
        let event = try decodeRoundTrip("13 05 01 40 00 01 00")
        #expect(event == .numberOfCompletedPackets([.init(connectionHandle: 0x0040, count: 1)]))
    }

    @Test func numberOfCompletedPacketsSeveralHandlesInterleaved() throws {
        // Handle and count alternate per entry (Core v5.4 layout, as controllers send it).
        let event = try decodeRoundTrip("13 09 02 40 00 03 00 41 00 02 01")
        #expect(event == .numberOfCompletedPackets([
            .init(connectionHandle: 0x0040, count: 3), .init(connectionHandle: 0x0041, count: 0x0102),
        ]))
    }

    @Test func numberOfCompletedPacketsCountMustMatchTheBytes() throws {
        // Count says 2, one entry present.
        let short = try #require(try decodeError("13 05 02 40 00 01 00"))
        #expect(short.kind == .truncated(needed: 8, available: 4))
        #expect(short.context == "HCI Number Of Completed Packets event")
        // Count says 1, two entries present.
        let long = try #require(try decodeError("13 09 01 40 00 01 00 41 00 01 00"))
        #expect(long.kind == .trailingBytes(count: 4))
        // Count 0 with a half entry.
        #expect(try decodeError("13 03 00 40 00") != nil)
        // Count 0 and nothing else is consistent.
        #expect(try decodeRoundTrip("13 01 00") == .numberOfCompletedPackets([]))
    }

    @Test func encryptionChangeV1AndV2() throws {
        let v1 = try decodeRoundTrip("08 04 00 40 00 01")
        #expect(v1 == .encryptionChange(.init(status: .success, connectionHandle: 0x40, encryptionEnabled: 1)))
        #expect(v1.name == "Encryption Change")
        let v2 = try decodeRoundTrip("59 05 00 40 00 01 10")
        guard case .encryptionChange(let e) = v2 else { Issue.record("got \(v2)"); return }
        #expect(e.keySize == 16)
        #expect(e.isEncrypted)
        #expect(v2.code == 0x59)
        #expect(v2.name == "Encryption Change v2")
        // A v1 event with a key size byte is overlong; a v2 event without one is truncated.
        #expect(try decodeError("08 05 00 40 00 01 10")?.kind == .trailingBytes(count: 1))
        #expect(try decodeError("59 04 00 40 00 01")?.kind == .truncated(needed: 1, available: 0))
    }

    @Test func encryptionKeyRefreshComplete() throws {
        #expect(try decodeRoundTrip("30 03 00 40 00") == .encryptionKeyRefreshComplete(status: .success, connectionHandle: 0x40))
        #expect(throws: WireError.self) { try HCIEvent.decode(bytes("30 02 00 40")) }
    }

    @Test func hardwareErrorAndDataBufferOverflow() throws {
        #expect(try decodeRoundTrip("10 01 05") == .hardwareError(code: 5))
        #expect(try decodeRoundTrip("1A 01 01") == .dataBufferOverflow(linkType: 1))
        #expect(try decodeError("10 00") != nil)
        #expect(try decodeError("1A 02 01 00") != nil)
    }

    @Test func unknownEventsKeepTheirParametersAndReencodeIdentically() throws {
        // Read Remote Version Information Complete (0x0C): not decoded, kept raw.
        let event = try decodeRoundTrip("0C 08 00 40 00 0C 0F 00 10 02")
        guard case .unknown(let code, let parameters) = event else { Issue.record("got \(event)"); return }
        #expect(code == 0x0C)
        #expect(Array(parameters) == [0x00, 0x40, 0x00, 0x0C, 0x0F, 0x00, 0x10, 0x02])
        #expect(event.name == "Read Remote Version Information Complete")
        // A code with no name at all, and an empty parameter list.
        let vendor = try decodeRoundTrip("F0 00")
        #expect(vendor == .unknown(code: 0xF0, parameters: []))
        #expect(vendor.name == "Unknown Event (0xF0)")
    }

    @Test func lengthByteMustMatchTheBytesPresent() throws {
        let short = try #require(try decodeError("05 04 00 40 00"))
        #expect(short.kind == .truncated(needed: 4, available: 3))
        #expect(short.offset == 2)
        let long = try #require(try decodeError("05 04 00 40 00 13 FF FF"))
        #expect(long.kind == .trailingBytes(count: 2))
        #expect(long.offset == 6)
        #expect(try decodeError("") != nil)
        #expect(try decodeError("05") != nil)
    }

    @Test func fixedLayoutEventsRejectMissingAndExtraParameters() throws {
        // Parameter length agrees with the bytes, but the event's own layout does not.
        let short = try #require(try decodeError("05 03 00 40 00"))
        #expect(short.context == "HCI Disconnection Complete event")
        #expect(short.offset == 5)
        let long = try #require(try decodeError("05 05 00 40 00 13 00"))
        #expect(long.kind == .trailingBytes(count: 1))
        #expect(long.offset == 6)
        #expect(try decodeError("0F 03 00 01 0D") != nil)
        #expect(try decodeError("0F 05 00 01 0D 20 00") != nil)
        #expect(try decodeError("0E 02 01 03") != nil)
    }

    @Test func errorOffsetsAreRelativeToTheBufferTheSliceCameFrom() throws {
        // The event after an H4 type byte: offsets count from the H4 byte.
        let h4 = bytes("04 05 04 00 40 00")
        #expect(throws: WireError(.truncated(needed: 1, available: 0), at: 6, in: "HCI Disconnection Complete event")) {
            _ = try HCIEvent.decode(code: 0x05, parameters: h4[3...])
        }
        #expect(try HCIEvent.decode(bytes("04 05 04 00 40 00 13")[1...])
            == .disconnectionComplete(.init(status: .success, connectionHandle: 0x40, reason: .remoteUserTerminatedConnection)))
    }

    @Test func connectionHandlesAboveTheValidRangeAreKeptAsReceived() throws {
        let event = try decodeRoundTrip("05 04 00 FF FF 16")
        guard case .disconnectionComplete(let d) = event else { Issue.record("got \(event)"); return }
        #expect(d.connectionHandle == 0xFFFF)
        #expect(!HCIEvent.validConnectionHandles.contains(d.connectionHandle))
        #expect(HCIEvent.validConnectionHandles.contains(0x0EFF))
    }

    @Test func encodingBuildsTheLengthByte() {
        let event = HCIEvent.commandComplete(.init(numHCICommandPackets: 1, opcode: .readBDADDR,
                                                    returnParameters: [0x00, 1, 2, 3, 4, 5, 6]))
        #expect(event.encoded == [0x0E, 0x0A, 0x01, 0x09, 0x10, 0x00, 1, 2, 3, 4, 5, 6])
        var writer = ByteWriter()
        event.encodeParameters(into: &writer)
        #expect(writer.bytes == [0x01, 0x09, 0x10, 0x00, 1, 2, 3, 4, 5, 6])
    }

    @Test func eventNamesComeFromTheCodeTable() {
        #expect(HCIEvent.name(ofCode: 0x13) == "Number Of Completed Packets")
        #expect(HCIEvent.name(ofCode: 0x3E) == "LE Meta")
        #expect(HCIEvent.name(ofCode: 0x1A) == "Data Buffer Overflow")
        #expect(HCIEvent.name(ofCode: 0x58) == "SAM Status Change")
        #expect(HCIEvent.name(ofCode: 0xFF) == "Vendor Specific")
        #expect(HCIEvent.name(ofCode: 0x00) == nil)
        #expect(HCIEvent.hardwareError(code: 1).name == "Hardware Error")
        #expect(HCIEvent.numberOfCompletedPackets([]).name == "Number Of Completed Packets")
    }
}

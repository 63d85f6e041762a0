import PropertyBased
import RawbleWire
import Testing

private let resetCommand = H4Packet(type: .command, bytes: [0x03, 0x0C, 0x00])
private let resetComplete = H4Packet(type: .event, bytes: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
private let aclNotification = H4Packet(
    type: .acl, bytes: [0x40, 0x20, 0x09, 0x00, 0x05, 0x00, 0x04, 0x00, 0x1B, 0x10, 0x00, 0x06, 0x48])

/// Reads `bytes` fed in chunks of the given sizes (cycled).
private func readAll(_ bytes: [UInt8], sizes: [Int] = [Int.max], maximum: Int = 65_540)
    -> (header: BtsnoopHeader?, records: [BtsnoopRecord], error: BtsnoopError?)
{
    var reader = BtsnoopReader(maximumIncludedLength: maximum)
    var records: [BtsnoopRecord] = []
    var start = 0
    var i = 0
    do {
        while start < bytes.count {
            let size = max(1, sizes[i % sizes.count])
            let end = size >= bytes.count - start ? bytes.count : start + size
            reader.append(bytes[start..<end])
            start = end
            i += 1
            while let record = try reader.nextRecord() { records.append(record) }
        }
        try reader.finish()
    } catch {
        return (reader.header, records, error)
    }
    return (reader.header, records, nil)
}

private func sampleFile() -> (bytes: [UInt8], records: [BtsnoopRecord]) {
    let records = [
        BtsnoopRecord(packet: resetCommand, direction: .sent, unixMicroseconds: 1_700_000_000_000_000),
        BtsnoopRecord(packet: resetComplete, direction: .received, unixMicroseconds: 1_700_000_000_001_000),
        BtsnoopRecord(packet: aclNotification, direction: .received, unixMicroseconds: 1_700_000_000_002_500),
    ]
    return (BtsnoopWriter.file(records: records), records)
}

@Suite("btsnoop")
struct BtsnoopTests {
    @Test func headerBytes() throws {
        let header = BtsnoopWriter.header(datalink: .hciUART)
        #expect(header == Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x03, 0xEA])
        let decoded = try BtsnoopHeader.decode(header)
        #expect(decoded.version == 1)
        #expect(decoded.datalink == .hciUART)
        #expect(BtsnoopWriter.header(datalink: .linuxMonitor).suffix(4) == [0, 0, 0x07, 0xD1])
    }

    @Test func datalinkValues() {
        #expect(BtsnoopDatalink.unencapsulatedHCI.rawValue == 1001)
        #expect(BtsnoopDatalink.hciUART.rawValue == 1002)
        #expect(BtsnoopDatalink.bcsp.rawValue == 1003)
        #expect(BtsnoopDatalink.threeWireUART.rawValue == 1004)
        #expect(BtsnoopDatalink.linuxMonitor.rawValue == 2001)
        #expect(BtsnoopDatalink(4242).name == nil)
        #expect(BtsnoopDatalink.hciUART.name == "HCI UART (H4)")
    }

    @Test func headerErrors() {
        var bad = BtsnoopWriter.header()
        bad[0] = UInt8(ascii: "B")
        #expect(throws: WireError.self) { try BtsnoopHeader.decode(bad) }
        var version2 = BtsnoopWriter.header()
        version2[11] = 2
        do {
            _ = try BtsnoopHeader.decode(version2)
            Issue.record("version 2 accepted")
        } catch {
            #expect(error.offset == 8)
            #expect(error.kind == .invalidValue("unsupported btsnoop version 2"))
        }
        #expect(throws: WireError.self) { try BtsnoopHeader.decode(Array(BtsnoopWriter.header().prefix(15))) }
        #expect(throws: WireError.self) { try BtsnoopHeader.decode(BtsnoopWriter.header() + [0]) }
    }

    @Test func unixEpochIsTheFormatsConstant() {
        let record = BtsnoopRecord(packet: resetCommand, direction: .sent, unixMicroseconds: 0)
        #expect(record.timestamp == 0x00DC_DDB3_0F2F_8000)
        #expect(record.unixMicroseconds == 0)
        var later = record
        later.unixMicroseconds = 1_700_000_000_123_456
        #expect(later.timestamp == 0x00DC_DDB3_0F2F_8000 + 1_700_000_000_123_456)
        #expect(later.unixMicroseconds == 1_700_000_000_123_456)
        // Before 1970 is negative, and garbage timestamps do not trap.
        #expect(BtsnoopRecord(flags: [], timestamp: 0, data: [UInt8]()).unixMicroseconds == -0x00DC_DDB3_0F2F_8000)
        #expect(BtsnoopRecord(flags: [], timestamp: .min, data: [UInt8]()).unixMicroseconds == .min &- 0x00DC_DDB3_0F2F_8000)
    }

    @Test func flagsPerPacketTypeAndDirection() {
        func flags(_ type: H4PacketType, _ direction: BtsnoopRecord.Direction) -> UInt32 {
            BtsnoopRecord(packet: H4Packet(type: type, bytes: [UInt8]()), direction: direction, unixMicroseconds: 0)
                .flags.rawValue
        }
        #expect(flags(.command, .sent) == 2)
        #expect(flags(.event, .received) == 3)
        #expect(flags(.acl, .sent) == 0)
        #expect(flags(.acl, .received) == 1)
        #expect(flags(.sco, .received) == 1)
        #expect(flags(.iso, .sent) == 0)
    }

    @Test func recordBytes() throws {
        let record = BtsnoopRecord(packet: resetCommand, direction: .sent, unixMicroseconds: 1_700_000_000_000_000)
        let expected: [UInt8] =
            [0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 0]
            + [0x00, 0xE2, 0xE7, 0xD7, 0x27, 0x4D, 0xC0, 0x00] + [0x01, 0x03, 0x0C, 0x00]
        #expect(BtsnoopWriter.record(record) == expected)
        let decoded = try BtsnoopRecord.decode(expected)
        #expect(decoded == record)
        #expect(decoded.includedLength == 4)
        #expect(decoded.originalLength == 4)
        #expect(decoded.direction == .sent)
        #expect(try decoded.h4Packet(datalink: .hciUART) == resetCommand)
    }

    @Test func recordDecodeErrors() {
        let good = BtsnoopWriter.record(
            BtsnoopRecord(packet: resetCommand, direction: .sent, unixMicroseconds: 0))
        #expect(throws: WireError.self) { try BtsnoopRecord.decode(Array(good.dropLast())) }
        #expect(throws: WireError.self) { try BtsnoopRecord.decode(good + [0]) }
        var lying = good
        lying[3] = 3  // original 3 < included 4
        #expect(throws: WireError.self) { try BtsnoopRecord.decode(lying) }
    }

    @Test func writeThenReadBack() throws {
        let (bytes, records) = sampleFile()
        let result = readAll(bytes)
        #expect(result.error == nil)
        #expect(result.header == BtsnoopHeader(datalink: .hciUART))
        #expect(result.records == records)
        #expect(try result.records.map { try $0.h4Packet(datalink: .hciUART) } == [resetCommand, resetComplete, aclNotification])
        #expect(result.records.map(\.direction) == [.sent, .received, .received])
        #expect(result.records.map(\.unixMicroseconds) == [1_700_000_000_000_000, 1_700_000_000_001_000, 1_700_000_000_002_500])
        #expect(BtsnoopReader.read(bytes).records == records)
    }

    @Test func anySplitReadsTheSameRecords() async {
        let (bytes, records) = sampleFile()
        for cut in 0...bytes.count {
            var reader = BtsnoopReader()
            var got: [BtsnoopRecord] = []
            reader.append(bytes[..<cut])
            while let r = try? reader.nextRecord() { got.append(r) }
            reader.append(bytes[cut...])
            while let r = try? reader.nextRecord() { got.append(r) }
            #expect(got == records, "split at \(cut)")
            #expect(throws: Never.self) { try reader.finish() }
        }
        await propertyCheck(input: Gen.int(in: 1...30).array(of: 1...6)) { sizes in
            let result = readAll(bytes, sizes: sizes)
            #expect(result.records == records)
            #expect(result.error == nil)
        }
    }

    @Test func randomRecordsRoundTrip() async {
        await propertyCheck(
            input: Gen.uint8().array(of: 0...40).array(of: 0...6), Gen.int64(in: -1_000_000...4_000_000_000_000_000),
            Gen.int(in: 1...50).array(of: 1...4)
        ) { payloads, time, sizes in
            let records = payloads.enumerated().map { i, data in
                BtsnoopRecord(
                    originalLength: UInt32(data.count + i), flags: .init(rawValue: UInt32(i % 4)),
                    cumulativeDrops: UInt32(i), timestamp: time + Int64(i), data: data)
            }
            let bytes = BtsnoopWriter.file(datalink: .unencapsulatedHCI, records: records)
            let result = readAll(bytes, sizes: sizes)
            #expect(result.error == nil)
            #expect(result.header?.datalink == .unencapsulatedHCI)
            #expect(result.records == records)
        }
    }

    @Test func truncatedLastRecordIsReportedAndEarlierRecordsKept() {
        let (bytes, records) = sampleFile()
        let last = BtsnoopRecord.headerByteCount + 14  // the ACL record: 24 + type byte + 13
        for cut in 1..<last {
            let result = readAll(Array(bytes.dropLast(cut)), sizes: [7])
            #expect(result.records == Array(records.prefix(2)))
            guard case .truncatedRecord(let needed, let available)? = result.error?.kind else {
                Issue.record("cut \(cut): \(String(describing: result.error))")
                continue
            }
            #expect(result.error?.recordIndex == 2)
            #expect(result.error?.offset == bytes.count - last)
            #expect(available == last - cut)
            #expect(needed == (available >= BtsnoopRecord.headerByteCount ? last : BtsnoopRecord.headerByteCount))
        }
    }

    @Test func truncatedOrWrongFileHeader() {
        #expect(readAll(Array(BtsnoopWriter.header().prefix(10))).error?.kind == .truncatedHeader(available: 10))
        #expect(readAll([]).error?.kind == .truncatedHeader(available: 0))
        let notSnoop = Array("PK\u{3}\u{4} this is a zip file".utf8)
        let result = readAll(notSnoop, sizes: [3])
        #expect(result.error == BtsnoopError(.badIdentification, at: 0))
        #expect(result.header == nil)
        var v2 = sampleFile().bytes
        v2[11] = 2
        #expect(readAll(v2).error == BtsnoopError(.unsupportedVersion(2), at: 8))
        #expect(readAll(v2).records.isEmpty)
    }

    @Test func includedLengthAboveOriginalIsAnError() {
        var (bytes, records) = sampleFile()
        // Second record: original length 7 -> 6.
        let second = BtsnoopHeader.byteCount + BtsnoopRecord.headerByteCount + 4
        bytes[second + 3] = 6
        let result = readAll(bytes, sizes: [5])
        #expect(result.records == [records[0]])
        #expect(result.error == BtsnoopError(.includedLengthExceedsOriginal(included: 7, original: 6), at: second, recordIndex: 1))
    }

    @Test func includedLengthAboveTheBoundIsAnError() {
        var bytes = BtsnoopWriter.header()
        // A corrupt record header announcing 16 MiB must not be buffered for.
        bytes += [0x01, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        let result = readAll(bytes)
        #expect(result.error?.kind == .includedLengthTooLarge(length: 0x0100_0000, maximum: 65_540))
        #expect(result.error?.offset == 16)
        // A smaller configured bound.
        let (file, _) = sampleFile()
        #expect(readAll(file, maximum: 8).error?.kind == .includedLengthTooLarge(length: 14, maximum: 8))
        #expect(readAll(file, maximum: 14).error == nil)
    }

    @Test func afterAFatalErrorTheReaderYieldsNothingInsteadOfSpinning() throws {
        var reader = BtsnoopReader()
        reader.append(Array("garbage garbage garbage".utf8))
        #expect(throws: BtsnoopError(.badIdentification, at: 0)) { try reader.nextRecord() }
        #expect(try reader.nextRecord() == nil)
        reader.append(sampleFile().bytes)
        #expect(try reader.nextRecord() == nil)
        #expect(throws: Never.self) { try reader.finish() }
        #expect(reader.failure == BtsnoopError(.badIdentification, at: 0))
    }

    @Test func linuxMonitorRecordsAreExposedRaw() throws {
        // btmon: flags = adapter index << 16 | opcode; data has no H4 type byte.
        let event = BtsnoopRecord(
            flags: .init(rawValue: 0x0001_0003), timestamp: 0, data: Array(resetComplete.bytes))
        let note = BtsnoopRecord(flags: .init(rawValue: 12), timestamp: 0, data: Array("hello\0".utf8))
        let bytes = BtsnoopWriter.file(datalink: .linuxMonitor, records: [event, note])
        let result = readAll(bytes, sizes: [9])
        #expect(result.header?.datalink == .linuxMonitor)
        #expect(result.records == [event, note])
        #expect(result.records[0].monitorOpcode == .eventPacket)
        #expect(result.records[0].monitorAdapterIndex == 1)
        #expect(result.records[0].direction(datalink: .linuxMonitor) == .received)
        #expect(try result.records[0].h4Packet(datalink: .linuxMonitor) == resetComplete)
        #expect(result.records[1].monitorOpcode == .systemNote)
        #expect(result.records[1].monitorOpcode.name == "system note")
        #expect(try result.records[1].h4Packet(datalink: .linuxMonitor) == nil)
        #expect(result.records[1].direction(datalink: .linuxMonitor) == nil)
        #expect(BtsnoopMonitorOpcode.aclSent.packetType == .acl)
        #expect(BtsnoopMonitorOpcode.commandPacket.direction == .sent)
    }

    @Test func unencapsulatedRecordsTakeTheirTypeFromTheFlags() throws {
        let command = BtsnoopRecord(flags: .commandOrEvent, timestamp: 0, data: Array(resetCommand.bytes))
        let event = BtsnoopRecord(flags: [.commandOrEvent, .received], timestamp: 0, data: Array(resetComplete.bytes))
        let acl = BtsnoopRecord(flags: .received, timestamp: 0, data: Array(aclNotification.bytes))
        #expect(try command.h4Packet(datalink: .unencapsulatedHCI) == resetCommand)
        #expect(try event.h4Packet(datalink: .unencapsulatedHCI) == resetComplete)
        #expect(try acl.h4Packet(datalink: .unencapsulatedHCI) == aclNotification)
        #expect(try acl.h4Packet(datalink: .bcsp) == nil)
    }

    @Test func aTruncatedCaptureIsFlaggedAndItsPacketDoesNotDecode() {
        let full = BtsnoopRecord(packet: aclNotification, direction: .received, unixMicroseconds: 0)
        var cut = full
        cut.data = full.data.prefix(8)
        #expect(cut.isTruncated)
        #expect(!full.isTruncated)
        #expect(throws: WireError.self) { try cut.h4Packet(datalink: .hciUART) }
        let back = readAll(BtsnoopWriter.file(records: [cut]))
        #expect(back.records == [cut])
        #expect(back.records.first?.originalLength == 14)
    }

    @Test func randomBytesNeverTrap() async {
        let header = BtsnoopWriter.header()
        await propertyCheck(count: 500, input: Gen.uint8().array(of: 0...120), Gen.int(in: 1...17).array(of: 1...3)) {
            tail, sizes in
            let bytes = header + tail
            let whole = readAll(bytes)
            let pieces = readAll(bytes, sizes: sizes)
            #expect(whole.records == pieces.records)
            #expect(whole.error == pieces.error)
        }
    }
}

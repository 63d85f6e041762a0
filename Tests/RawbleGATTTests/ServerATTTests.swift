// Byte-stream tests of the ATT server core, one suite per procedure, in the manner of BlueZ's
// unit/test-gatt.c: the exact request bytes a client sends, the exact bytes the server answers.
// The database is `sampleDatabase()` (handles listed in ServerSupport.swift).
import RawbleGATT
import RawbleGATTCore
import RawbleTestSupport
import RawbleWire
import Testing

@Suite("Server database")
struct ServerDatabaseTests {
    @Test("handles are assigned in order, GAP and GATT first; the same definitions give the same handles")
    func layout() throws {
        let database = try sampleDatabase()
        #expect(database == (try sampleDatabase()))
        #expect(database.lastHandle == 30)
        #expect(database.valueHandle(of: GATTServerDatabase.deviceNameCharacteristic) == 3)
        #expect(database.valueHandle(of: .serviceChanged) == GATTServerDatabase.serviceChangedHandle)
        #expect(database.configurationHandle(ofValueAt: 8) == 9)
        #expect(database.valueHandle(of: BluetoothUUID(0x2A37)) == 13)
        #expect(database.configurationHandle(ofValueAt: 13) == 14)
        #expect(database.valueHandle(of: BluetoothUUID(0x2A19), inService: BluetoothUUID(0x180F)) == 21)
        #expect(database.valueHandle(of: BluetoothUUID(0x2A19), inService: BluetoothUUID(0x180D)) == nil)
        #expect(database.valueHandle(of: customCharacteristic) == 27)
        #expect(database.configurationHandle(ofValueAt: 16) == nil)
        #expect(database.attribute(at: 0) == nil)
        #expect(database.attribute(at: 31) == nil)
        #expect(database.attribute(at: 10)?.groupEnd == 18)
    }

    @Test("definitions that make no database are typed errors")
    func definitionErrors() {
        #expect(throws: GATTDefinitionError.unknownIncludedService(BluetoothUUID(0x1234))) {
            try GATTServerDatabase(services: [.primary(BluetoothUUID(0x180D), includes: [BluetoothUUID(0x1234)], characteristics: [])])
        }
        #expect(throws: GATTDefinitionError.serviceIncludesItself(BluetoothUUID(0x180D))) {
            try GATTServerDatabase(services: [.primary(BluetoothUUID(0x180D), includes: [BluetoothUUID(0x180D)], characteristics: [])])
        }
        #expect(throws: GATTDefinitionError.valueTooLong(BluetoothUUID(0x2A38), length: 3)) {
            try GATTServerDatabase(services: [.primary(BluetoothUUID(0x180D), characteristics: [
                GATTCharacteristicDefinition(BluetoothUUID(0x2A38), properties: [.read], value: .fixed([1, 2, 3]), maximumLength: 2),
            ])])
        }
        #expect(throws: GATTDefinitionError.invalidMaximumLength(BluetoothUUID(0x2A38), 513)) {
            try GATTServerDatabase(services: [.primary(BluetoothUUID(0x180D), characteristics: [
                GATTCharacteristicDefinition(BluetoothUUID(0x2A38), properties: [.read], maximumLength: 513),
            ])])
        }
        let many = (0..<22_000).map { _ in GATTCharacteristicDefinition(BluetoothUUID(0x2A38), properties: [.read]) }
        #expect(throws: GATTDefinitionError.tooManyAttributes(88_010)) {
            try GATTServerDatabase(services: [.primary(BluetoothUUID(0x180D), characteristics: many + many)])
        }
    }

    @Test("a structural change names the handles from the first difference; a written value is no change")
    func changedHandles() throws {
        let old = try sampleDatabase()
        #expect(old.changedHandles(since: old) == nil)
        var written = old
        let stored = written.setValue([9, 9], at: 27)
        #expect(stored)
        #expect(written.changedHandles(since: old) == nil)
        let grown = try GATTServerDatabase(deviceName: "rawble", appearance: .heartRateBelt,
                                           services: old.services + [.primary(BluetoothUUID(0x1816), characteristics: [])])
        #expect(grown.changedHandles(since: old) == 31...0xFFFF)
        let other = try GATTServerDatabase(services: [.primary(BluetoothUUID(0x1816), characteristics: [])])
        #expect(other.changedHandles(since: old) == 10...0xFFFF)  // the appearance is a value, not structure
        let providedStored = written.setValue([0], at: 13)          // provided: nothing stored
        let tooLongStored = written.setValue(pattern(201), at: 27)  // longer than its maximum
        #expect(!providedStored && !tooLongStored)
    }
}

@Suite("Server: Exchange MTU")
struct ServerMTUTests {
    @Test("GATT/SR/GAC/BV-01-C: the smaller of the two MTUs, once; a second request is answered and changes nothing")
    func once() throws {
        var server = try ServerHarness()
        #expect(server.request("02 F7 00") == "03 05 02")
        #expect(server.events == [.mtuChanged(247)])
        #expect(server.core.mtu == 247)
        #expect(server.request("02 00 02") == "03 05 02")
        #expect(server.events == [])
        #expect(server.core.mtu == 247)
    }

    @Test("a client MTU under 23 leaves 23; the server's own receive MTU bounds it; malformed is Invalid PDU")
    func bounds() throws {
        var small = try ServerHarness()
        #expect(small.request("02 0A 00") == "03 05 02")
        #expect(small.core.mtu == 23 && small.events == [])
        var configuration = ATTServer.Configuration()
        configuration.receiveMTU = 100
        var bounded = try ServerHarness(configuration: configuration)
        #expect(bounded.request("02 05 02") == "03 64 00")
        #expect(bounded.core.mtu == 100)
        #expect(bounded.request("02 F7") == "01 02 00 00 04")
    }
}

@Suite("Server: discovery")
struct ServerDiscoveryTests {
    @Test("GATT/SR/GAD/BV-01-C: Read By Group Type: primary services, as many as fit, same value length; then Attribute Not Found")
    func primaryServices() throws {
        var server = try ServerHarness()
        #expect(server.request("10 01 00 FF FF 00 28") == "11 06 01 00 05 00 00 18 06 00 09 00 01 18 0A 00 12 00 0D 18")
        #expect(server.request("10 13 00 FF FF 00 28") == "11 14 19 00 1E 00 " + uuidHex(customService))
        #expect(server.request("10 1F 00 FF FF 00 28") == "01 10 1F 00 0A")
        #expect(server.request("10 01 00 FF FF 01 28") == "11 06 13 00 18 00 0F 18")
    }

    @Test("Read By Group Type: a 128-bit service after 16-bit ones waits for the next request (same length rule)")
    func sameLength() throws {
        var server = try ServerHarness()
        server.exchangeMTU(517)
        #expect(server.request("10 01 00 FF FF 00 28") == "11 06 01 00 05 00 00 18 06 00 09 00 01 18 0A 00 12 00 0D 18")
    }

    @Test("Read By Group Type: other types are Unsupported Group Type; handle 0 or start > end Invalid Handle")
    func groupErrors() throws {
        var server = try ServerHarness()
        #expect(server.request("10 01 00 FF FF 03 28") == "01 10 01 00 10")
        #expect(server.request("10 01 00 FF FF " + uuidHex(customService)) == "01 10 01 00 10")
        #expect(server.request("10 00 00 FF FF 00 28") == "01 10 00 00 01")
        #expect(server.request("10 05 00 04 00 00 28") == "01 10 05 00 01")
        #expect(server.request("10 01 00 FF FF 00") == "01 10 00 00 04")
    }

    @Test("GATT/SR/GAD/BV-02-C: Find By Type Value: a service by UUID with its group end; not found")
    func findByTypeValue() throws {
        var server = try ServerHarness()
        #expect(server.request("06 01 00 FF FF 00 28 0D 18") == "07 0A 00 12 00")
        #expect(server.request("06 01 00 FF FF 00 28 " + uuidHex(customService)) == "07 19 00 1E 00")
        #expect(server.request("06 01 00 FF FF 00 28 99 99") == "01 06 01 00 0A")
        #expect(server.request("06 0B 00 FF FF 00 28 0D 18") == "01 06 0B 00 0A")
        #expect(server.request("06 00 00 FF FF 00 28 0D 18") == "01 06 00 00 01")
        // A non-grouping attribute's group end is its own handle.
        #expect(server.request("06 01 00 FF FF 38 2A 01") == "07 10 00 10 00")
    }

    @Test("GATT/SR/GAD/BV-03-C, GATT/SR/GAD/BV-04-C: Read By Type: includes, then characteristic declarations as many as fit")
    func declarations() throws {
        var server = try ServerHarness()
        #expect(server.request("08 0A 00 12 00 02 28") == "09 08 0B 00 13 00 18 00 0F 18")
        #expect(server.request("08 0A 00 12 00 03 28")
                == "09 07 0C 00 12 0D 00 37 2A 0F 00 02 10 00 38 2A 11 00 08 12 00 39 2A")
        #expect(server.request("08 13 00 18 00 03 28") == "09 07 14 00 32 15 00 19 2A")
        #expect(server.request("08 19 00 1E 00 03 28") == "09 15 1A 00 1A 1B 00 " + uuidHex(customCharacteristic))
        #expect(server.request("08 1B 00 1E 00 03 28") == "09 07 1D 00 02 1E 00 3F 2A")
        #expect(server.request("08 1F 00 FF FF 03 28") == "01 08 1F 00 0A")
    }

    @Test("Read By Type: values of different lengths are not mixed (the 5-byte declaration waits)")
    func readByTypeSameLength() throws {
        var server = try ServerHarness()
        server.exchangeMTU(517)
        #expect(server.request("08 19 00 1E 00 03 28") == "09 15 1A 00 1A 1B 00 " + uuidHex(customCharacteristic))
        #expect(server.request("08 01 00 FF FF 02 29") == "09 04 09 00 00 00 0E 00 00 00 16 00 00 00 1C 00 00 00")
    }

    @Test("GATT/SR/GAR/BV-03-C, GATT/SR/GAR/BI-07-C, GATT/SR/GAR/BI-08-C: Read By Type of a value: read, cut to ATT_MTU − 4, or the first attribute's error")
    func readByTypeValues() throws {
        var server = try ServerHarness()
        #expect(server.request("08 01 00 FF FF 00 2A") == "09 08 03 00 72 61 77 62 6C 65")
        #expect(server.request("08 01 00 FF FF 38 2A") == "09 03 10 00 01")
        #expect(server.request("08 01 00 FF FF " + uuidHex(customCharacteristic)) == "09 15 1B 00 " + hexString(pattern(19)))
        #expect(server.request("08 01 00 FF FF 39 2A") == "01 08 12 00 02")
        #expect(server.request("08 01 00 FF FF 05 2A") == "01 08 08 00 02")
        #expect(server.request("08 01 00 FF FF 3F 2A") == "01 08 1E 00 05")
        #expect(server.request("08 01 00 FF FF 99 99") == "01 08 01 00 0A")
        #expect(server.request("08 02 00 01 00 00 2A") == "01 08 02 00 01")
        #expect(server.request("08 01 00 FF FF 00 2A 00") == "01 08 00 00 04")
    }

    @Test("Read By Type: values longer than 253 bytes are cut to 253 at a large MTU")
    func readByTypeCap() throws {
        var server = try ServerHarness()
        server.exchangeMTU(517)
        _ = server.request("16 1B 00 00 00 " + hexString(pattern(150)))
        _ = server.request("16 1B 00 96 00 " + hexString(pattern(50, from: 150)))
        #expect(server.request("18 01") == "19")
        let answer = server.request("08 1B 00 1B 00 " + uuidHex(customCharacteristic))
        #expect(answer == "09 CA 1B 00 " + hexString(pattern(200)))
        var large = try GATTServerDatabase(services: [.primary(BluetoothUUID(0x180D), characteristics: [
            GATTCharacteristicDefinition(BluetoothUUID(0x2A38), properties: [.read], value: .fixed(pattern(300)), maximumLength: 512),
        ])])
        var core = ATTServer()
        _ = core.receive(bytes("02 05 02"), database: &large)
        let output = core.receive(bytes("08 01 00 FF FF 38 2A"), database: &large)
        #expect(output.pdus.map(hexString) == ["09 FF 0C 00 " + hexString(pattern(253))])
    }

    @Test("GATT/SR/GAD/BV-06-C: Find Information: 16-bit types then 128-bit ones in separate responses; as many as fit")
    func findInformation() throws {
        var server = try ServerHarness()
        #expect(server.request("04 01 00 05 00") == "05 01 01 00 00 28 02 00 03 28 03 00 00 2A 04 00 03 28 05 00 01 2A")
        #expect(server.request("04 13 00 18 00") == "05 01 13 00 01 28 14 00 03 28 15 00 19 2A 16 00 02 29 17 00 01 29")
        #expect(server.request("04 18 00 18 00") == "05 01 18 00 04 29")
        #expect(server.request("04 19 00 1E 00") == "05 01 19 00 00 28 1A 00 03 28")
        #expect(server.request("04 1B 00 1E 00") == "05 02 1B 00 " + uuidHex(customCharacteristic))
        #expect(server.request("04 1F 00 FF FF") == "01 04 1F 00 0A")
        #expect(server.request("04 00 00 01 00") == "01 04 00 00 01")
        #expect(server.request("04 02 00 01 00") == "01 04 02 00 01")
        #expect(server.request("04 01 00") == "01 04 00 00 04")
    }
}

@Suite("Server: reads")
struct ServerReadTests {
    @Test("GATT/SR/GAR/BV-01-C, GATT/SR/GAR/BI-02-C: Read: the value cut to ATT_MTU − 1; Invalid Handle, Read Not Permitted, Insufficient Authentication")
    func read() throws {
        var server = try ServerHarness()
        #expect(server.request("0A 03 00") == "0B 72 61 77 62 6C 65")
        #expect(server.request("0A 05 00") == "0B 41 03")
        #expect(server.request("0A 18 00") == "0B 04 00 AD 27 01 00 00")
        #expect(server.request("0A 17 00") == "0B 42 61 74 74 65 72 79")
        #expect(server.request("0A 1B 00") == "0B " + hexString(pattern(22)))
        #expect(server.request("0A 00 00") == "01 0A 00 00 01")
        #expect(server.request("0A 1F 00") == "01 0A 1F 00 01")
        #expect(server.request("0A 08 00") == "01 0A 08 00 02")
        #expect(server.request("0A 12 00") == "01 0A 12 00 02")
        #expect(server.request("0A 1E 00") == "01 0A 1E 00 05")
        server.core.security = .encrypted
        #expect(server.request("0A 1E 00") == "01 0A 1E 00 05")
        server.core.security = .authenticated
        #expect(server.request("0A 1E 00") == "0B 01 02")
    }

    @Test("GATT/SR/GAR/BV-04-C: Read Blob: each part from its offset; the end is empty; past it Invalid Offset; declarations are not long")
    func readBlob() throws {
        var server = try ServerHarness()
        #expect(server.request("0C 1B 00 16 00") == "0D " + hexString(pattern(22, from: 22)))
        #expect(server.request("0C 1B 00 58 00") == "0D " + hexString(pattern(12, from: 88)))
        #expect(server.request("0C 1B 00 64 00") == "0D")
        #expect(server.request("0C 1B 00 65 00") == "01 0C 1B 00 07")
        #expect(server.request("0C 02 00 00 00") == "01 0C 02 00 0B")
        #expect(server.request("0C 0E 00 01 00") == "01 0C 0E 00 0B")
        #expect(server.request("0C 08 00 00 00") == "01 0C 08 00 02")
        #expect(server.request("0C 00 00 00 00") == "01 0C 00 00 01")
        #expect(server.request("0C 1B 00 00") == "01 0C 00 00 04")
    }

    @Test("GATT/SR/GAR/BV-05-C: Read Multiple: the values joined, cut to ATT_MTU − 1; the first failing handle's error")
    func readMultiple() throws {
        var server = try ServerHarness()
        #expect(server.request("0E 03 00 10 00") == "0F 72 61 77 62 6C 65 01")
        #expect(server.request("0E 10 00 1B 00") == "0F 01 " + hexString(pattern(21)))
        #expect(server.request("0E 03 00 08 00") == "01 0E 08 00 02")
        #expect(server.request("0E 03 00 40 00") == "01 0E 40 00 01")
        #expect(server.request("0E 03 00") == "01 0E 00 00 04")
    }

    @Test("Read Multiple Variable: length-prefixed values, the last cut by the ATT_MTU")
    func readMultipleVariable() throws {
        var server = try ServerHarness()
        #expect(server.request("20 03 00 10 00") == "21 06 00 72 61 77 62 6C 65 01 00 01")
        #expect(server.request("20 1B 00 03 00") == "21 64 00 " + hexString(pattern(20)))
        // 3 + 8 bytes of the first two tuples, then the third's length and 9 of its bytes: 22 in all.
        #expect(server.request("20 10 00 03 00 1B 00 1B 00") == "21 01 00 01 06 00 72 61 77 62 6C 65 64 00 00 01 02 03 04 05 06 07 08")
        // A length cut in half is sent as is (the client drops the lone byte).
        #expect(server.request("20" + String(repeating: " 10 00", count: 8)) == "21" + String(repeating: " 01 00 01", count: 7) + " 01")
        #expect(server.request("20 03 00 1E 00") == "01 20 1E 00 05")
        #expect(server.request("20 03") == "01 20 00 00 04")
    }

    @Test("provided values: the request waits for the embedder's value; its error code is the answer")
    func provided() throws {
        var server = try ServerHarness()
        #expect(server.send("0A 0D 00") == [])
        #expect(server.valuesNeeded == [13])
        #expect(server.core.hasPendingRequest)
        // A second request before the answer breaks the protocol: dropped, unanswered.
        #expect(server.send("0A 03 00") == [])
        #expect(server.events == [.dropped(.requestWhilePending(.readRequest))])
        #expect(server.supply([13: .value([0x00, 0x48])]) == ["0B 00 48"])
        #expect(!server.core.hasPendingRequest)

        #expect(server.send("0A 0D 00") == [])
        #expect(server.supply([13: .error(ATTErrorCode(0x80))]) == ["01 0A 0D 00 80"])
        // A needed value left out is Unlikely Error.
        #expect(server.send("0C 0D 00 01 00") == [])
        #expect(server.supply([:]) == ["01 0C 0D 00 0E"])
        // Read Multiple asks for every provided value it needs at once; Read By Type one at a time.
        #expect(server.send("0E 10 00 0D 00") == [])
        #expect(server.valuesNeeded == [13])
        #expect(server.supply([13: .value([7])]) == ["0F 01 07"])
        #expect(server.send("08 01 00 FF FF 37 2A") == [])
        #expect(server.supply([13: .value([0x00, 0x48])]) == ["09 04 0D 00 00 48"])
        // Read Blob cuts the provided value at the offset.
        #expect(server.send("0C 0D 00 01 00") == [])
        #expect(server.supply([13: .value([1, 2, 3])]) == ["0D 02 03"])
    }
}

@Suite("Server: writes")
struct ServerWriteTests {
    @Test("GATT/SR/GAW/BV-03-C, GATT/SR/GAW/BI-02-C, GATT/SR/GAW/BI-03-C: Write Request: stored and reported; permissions, handle and length checked")
    func writeRequest() throws {
        var server = try ServerHarness()
        #expect(server.request("12 1B 00 AA BB") == "13")
        #expect(server.events == [.wrote(handle: 27, value: [0xAA, 0xBB], kind: .request)])
        #expect(server.request("0A 1B 00") == "0B AA BB")
        #expect(server.request("12 12 00 AA") == "01 12 12 00 0F")
        server.core.security = .encrypted
        #expect(server.request("12 12 00 AA") == "13")
        #expect(server.request("12 12 00 AA BB CC") == "01 12 12 00 0D")
        #expect(server.request("12 10 00 05") == "01 12 10 00 03")
        #expect(server.request("12 02 00 05") == "01 12 02 00 03")
        #expect(server.request("12 00 00 01") == "01 12 00 00 01")
        #expect(server.request("12 40 00 01") == "01 12 40 00 01")
        #expect(server.request("12 1B") == "01 12 00 00 04")
        #expect(server.request("12 0D 00 01") == "01 12 0D 00 03")
    }

    @Test("GATT/SR/GAW/BV-08-C: CCCD: per connection, only the bits the characteristic allows (else 0xFD), 1 or 2 bytes")
    func configuration() throws {
        var server = try ServerHarness()
        #expect(server.request("12 0E 00 01 00") == "13")
        #expect(server.events == [.configurationChanged(valueHandle: 13, .notify)])
        #expect(server.request("0A 0E 00") == "0B 01 00")
        #expect(server.request("12 0E 00 01 00") == "13")
        #expect(server.events == [])
        #expect(server.request("12 0E 00 02 00") == "01 12 0E 00 FD")
        #expect(server.request("12 0E 00 03 00") == "01 12 0E 00 FD")
        #expect(server.request("12 0E 00 01 00 00") == "01 12 0E 00 0D")
        #expect(server.request("12 0E 00") == "01 12 0E 00 0D")
        #expect(server.request("12 16 00 03") == "13")
        #expect(server.events == [.configurationChanged(valueHandle: 21, [.notify, .indicate])])
        #expect(server.request("12 09 00 02 00") == "13")
        #expect(server.request("12 0E 00 00 00") == "13")
        #expect(server.events == [.configurationChanged(valueHandle: 13, [])])
        // Reserved bits are ignored.
        #expect(server.request("12 1C 00 05 80") == "13")
        #expect(server.request("0A 1C 00") == "0B 01 00")
        // Another connection's core sees its own values.
        var other = ATTServer()
        #expect(other.receive(bytes("0A 16 00"), database: &server.database).pdus.map(hexString) == ["0B 00 00"])
        #expect(server.core.configuration(ofValueAt: 21) == [.notify, .indicate])
    }

    @Test("Write Command: no response ever, even refused or malformed")
    func writeCommand() throws {
        var server = try ServerHarness()
        #expect(server.send("52 1B 00 01 02") == [])
        #expect(server.events == [.wrote(handle: 27, value: [1, 2], kind: .command)])
        #expect(server.send("52 12 00 AA") == [])
        #expect(server.events == [.dropped(.commandRefused(.writeCommand, .insufficientEncryption, handle: 18))])
        #expect(server.send("52 00 00 AA") == [])
        #expect(server.send("52 1B") == [])
        #expect(server.events == [.dropped(.malformedCommand(.writeCommand))])
        #expect(server.send("D2 1B 00 01 " + hexString(pattern(12))) == [])
        #expect(server.events == [.dropped(.signedWriteNotSupported)])
        #expect(server.send("D2 1B") == [])
        #expect(server.request("0A 1B 00") == "0B 01 02")
    }

    @Test("GATT/SR/GAW/BV-05-C: Prepare and Execute Write: a long value in parts, all or nothing")
    func longWrite() throws {
        var server = try ServerHarness()
        #expect(server.request("16 1B 00 00 00 01 02 03") == "17 1B 00 00 00 01 02 03")
        #expect(server.request("16 1B 00 03 00 04 05") == "17 1B 00 03 00 04 05")
        #expect(server.events == [])
        #expect(server.request("0A 1B 00") == "0B " + hexString(pattern(22)))
        #expect(server.request("18 01") == "19")
        #expect(server.events == [.wrote(handle: 27, value: [1, 2, 3, 4, 5], kind: .prepared)])
        #expect(server.request("0A 1B 00") == "0B 01 02 03 04 05")
        // A first part inside the current value patches it from there.
        #expect(server.request("16 1B 00 02 00 09") == "17 1B 00 02 00 09")
        #expect(server.request("18 01") == "19")
        #expect(server.request("0A 1B 00") == "0B 01 02 09")
        // Execute with an empty queue writes nothing.
        #expect(server.request("18 01") == "19")
        #expect(server.events == [])
    }

    @Test("Execute Write: Invalid Offset, Invalid Attribute Value Length, refused CCCD bits; nothing written")
    func executeErrors() throws {
        var server = try ServerHarness()
        _ = server.request("16 10 00 00 00 01")
        #expect(server.request("16 1B 00 00 00 01 02") == "17 1B 00 00 00 01 02")
        #expect(server.request("16 1B 00 05 00 01") == "17 1B 00 05 00 01")
        #expect(server.request("18 01") == "01 18 1B 00 07")
        #expect(server.events == [])
        #expect(server.request("0A 1B 00") == "0B " + hexString(pattern(22)))
        // The queue is gone after an error.
        #expect(server.request("18 01") == "19")
        for part in 0..<12 {
            let offset = UInt16(part * 18)
            _ = server.request("16 1B 00 \(hexString([UInt8(offset & 0xFF), UInt8(offset >> 8)])) " + hexString(pattern(18)))
        }
        #expect(server.request("18 01") == "01 18 1B 00 0D")
        #expect(server.request("16 0E 00 00 00 02 00") == "17 0E 00 00 00 02 00")
        #expect(server.request("18 01") == "01 18 0E 00 FD")
        #expect(server.request("16 0E 00 00 00 01 00") == "17 0E 00 00 00 01 00")
        #expect(server.request("18 01") == "19")
        #expect(server.events == [.configurationChanged(valueHandle: 13, .notify)])
    }

    @Test("GATT/SR/GAW/BV-07-C: Prepare Write: permissions at once; the queue is bounded; cancel; reserved flags are Invalid PDU")
    func prepareBounds() throws {
        var configuration = ATTServer.Configuration()
        configuration.prepareQueueLimit = 2
        configuration.prepareQueueByteLimit = 10
        var server = try ServerHarness(configuration: configuration)
        #expect(server.request("16 12 00 00 00 01") == "01 16 12 00 0F")
        #expect(server.request("16 10 00 00 00 01") == "01 16 10 00 03")
        #expect(server.request("16 00 00 00 00 01") == "01 16 00 00 01")
        #expect(server.request("16 1B 00 00") == "01 16 00 00 04")
        #expect(server.request("16 1B 00 00 00 " + hexString(pattern(11))) == "01 16 1B 00 09")
        #expect(server.request("16 1B 00 00 00 01") == "17 1B 00 00 00 01")
        #expect(server.request("16 1B 00 01 00 02") == "17 1B 00 01 00 02")
        #expect(server.request("16 1B 00 02 00 03") == "01 16 1B 00 09")
        #expect(server.request("18 02") == "01 18 00 00 04")
        #expect(server.request("18 00") == "19")
        #expect(server.events == [])
        #expect(server.request("18 01") == "19")
        #expect(server.request("0A 1B 00") == "0B " + hexString(pattern(22)))
        #expect(server.request("16 1B 00 00 00 01") == "17 1B 00 00 00 01")
    }
}

@Suite("Server: writes the embedder decides")
struct ServerWriteApprovalTests {
    /// 10 service, 11 declaration, 12 a provided control point (write, 1 byte).
    static func controlPointDatabase() throws -> GATTServerDatabase {
        try GATTServerDatabase(services: [.primary(BluetoothUUID(0x180D), characteristics: [
            GATTCharacteristicDefinition(BluetoothUUID(0x2A39), properties: [.write, .writeWithoutResponse], value: .provided, maximumLength: 1),
        ])])
    }

    @Test("a Write Request to a provided value waits for the verdict: refused with its code, or accepted and reported")
    func writeRequest() throws {
        var database = try Self.controlPointDatabase()
        var core = ATTServer()
        var output = core.receive(bytes("12 0C 00 02"), database: &database)
        #expect(output.pdus.isEmpty && output.events.isEmpty)
        #expect(output.approvalsNeeded == [ATTServerWriteApproval(handle: 12, value: [2], kind: .request)])
        output = core.approve([12: .reject(ATTErrorCode(0x80))], database: &database)
        #expect(output.pdus.map(hexString) == ["01 12 0C 00 80"] && output.events.isEmpty)
        output = core.receive(bytes("12 0C 00 01"), database: &database)
        output = core.approve([12: .accept], database: &database)
        #expect(output.pdus.map(hexString) == ["13"])
        #expect(output.events == [.wrote(handle: 12, value: [1], kind: .request)])
        // A verdict left out is Unlikely Error; checks the server makes itself come first.
        _ = core.receive(bytes("12 0C 00 01"), database: &database)
        #expect(core.approve([:], database: &database).pdus.map(hexString) == ["01 12 0C 00 0E"])
        #expect(core.receive(bytes("12 0C 00 01 02"), database: &database).pdus.map(hexString) == ["01 12 0C 00 0D"])
        // A Write Command is not asked about: it gets no answer either way.
        output = core.receive(bytes("52 0C 00 05"), database: &database)
        #expect(output.approvalsNeeded.isEmpty && output.events == [.wrote(handle: 12, value: [5], kind: .command)])
    }

    @Test("Execute Write asks for every provided value at once; a refusal writes nothing and ends the queue")
    func executeWrite() throws {
        var database = try Self.controlPointDatabase()
        var core = ATTServer()
        #expect(core.receive(bytes("16 0C 00 00 00 01"), database: &database).pdus.map(hexString) == ["17 0C 00 00 00 01"])
        var output = core.receive(bytes("18 01"), database: &database)
        #expect(output.approvalsNeeded == [ATTServerWriteApproval(handle: 12, value: [1], kind: .prepared)])
        output = core.approve([12: .reject(ATTErrorCode(0x80))], database: &database)
        #expect(output.pdus.map(hexString) == ["01 18 0C 00 80"] && output.events.isEmpty)
        #expect(core.receive(bytes("18 01"), database: &database).pdus.map(hexString) == ["19"])
        _ = core.receive(bytes("16 0C 00 00 00 01"), database: &database)
        _ = core.receive(bytes("18 01"), database: &database)
        output = core.approve([12: .accept], database: &database)
        #expect(output.pdus.map(hexString) == ["19"] && output.events == [.wrote(handle: 12, value: [1], kind: .prepared)])
    }
}

@Suite("Server: hostile and unknown PDUs")
struct ServerHostileTests {
    @Test("unknown requests get Request Not Supported; unknown commands and client-bound PDUs are ignored")
    func unknown() throws {
        var server = try ServerHarness()
        #expect(server.request("3F") == "01 3F 00 00 06")
        #expect(server.request("22 01 02") == "01 22 00 00 06")
        #expect(server.send("7F 01") == [])
        #expect(server.events == [.dropped(.unknownCommand(ATTOpcode(0x7F)))])
        #expect(server.send("") == [])
        #expect(server.events == [.dropped(.empty)])
        for pdu in ["0B 00", "01 0A 00 00 01", "1B 03 00 01", "1D 03 00 01", "13"] {
            #expect(server.send(pdu) == [])
            #expect(server.events == [.dropped(.notForServer(ATTOpcode(bytes(pdu)[0])))])
        }
        #expect(server.send("1E") == [])
        #expect(server.events == [.dropped(.unexpectedConfirmation)])
    }

    @Test("fuzz finding: a PDU longer than the ATT_MTU is Invalid PDU (a Prepare Write's echo would not fit); a command that long is ignored")
    func longerThanMTU() throws {
        var server = try ServerHarness()
        #expect(server.request("16 1B 00 00 00 " + hexString(pattern(19))) == "01 16 00 00 04")
        #expect(server.request("16 1B 00 00 00 " + hexString(pattern(18))) == "17 1B 00 00 00 " + hexString(pattern(18)))
        #expect(server.request("12 1B 00 " + hexString(pattern(21))) == "01 12 00 00 04")
        #expect(server.send("52 1B 00 " + hexString(pattern(21))) == [])
        #expect(server.events == [.dropped(.tooLong(.writeCommand, length: 24))])
        server.exchangeMTU(100)
        #expect(server.request("16 1B 00 00 00 " + hexString(pattern(95))) == "17 1B 00 00 00 " + hexString(pattern(95)))
        #expect(server.request("16 1B 00 00 00 " + hexString(pattern(96))) == "01 16 00 00 04")
    }

    @Test("random PDUs: every request is answered exactly once, never beyond the ATT_MTU; commands never")
    func random() throws {
        var rng = SplitMix64(state: 12)
        var server = try ServerHarness()
        for round in 0..<20_000 {
            if round == 10_000 { server.exchangeMTU(64) }
            let length = Int(rng.next() % 24)
            var pdu = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            // Mostly known opcodes, with small handles so they land on attributes.
            if !pdu.isEmpty, rng.next() % 4 != 0 {
                let opcodes: [UInt8] = [0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20, 0x52, 0xD2, 0x1E]
                pdu[0] = opcodes[Int(rng.next() % UInt64(opcodes.count))]
                if pdu.count > 2 { pdu[2] = 0 }
                if pdu.count > 1 { pdu[1] %= 34 }
            }
            let output = server.core.receive(pdu, database: &server.database)
            if !output.valuesNeeded.isEmpty {
                #expect(output.pdus.isEmpty)
                let supplied = server.core.supply(Dictionary(uniqueKeysWithValues: output.valuesNeeded.map { ($0, .value(pattern(Int(rng.next() % 600)))) }),
                                                  database: &server.database)
                #expect(supplied.pdus.count == 1 && supplied.valuesNeeded.isEmpty)
                continue
            }
            let opcode = pdu.first.map(ATTOpcode.init(rawValue:))
            let isRequest = opcode.map { $0.kind == .request || $0.kind == .unknown } ?? false
            #expect(output.pdus.count == (isRequest ? 1 : 0), "\(hexString(pdu)) → \(output.pdus.map(hexString))")
            for answer in output.pdus {
                #expect(answer.count <= Int(server.core.mtu))
                let decoded = try ATTPDU.decode(answer)
                if case .errorResponse(let failed, _, _) = decoded {
                    #expect(failed == opcode)
                } else {
                    #expect(decoded.opcode == opcode?.responseOpcode)
                }
            }
        }
    }
}

@Suite("Server: notifications and indications")
struct ServerPushTests {
    @Test("GATT/SR/GAN/BV-01-C: a notification only to a client that enabled it, cut to ATT_MTU − 3")
    func notification() throws {
        var server = try ServerHarness()
        #expect(server.core.notification([1, 2], handle: 27) == nil)
        _ = server.request("12 1C 00 01 00")
        #expect(server.core.notification([1, 2], handle: 27).map(hexString) == "1B 1B 00 01 02")
        #expect(server.core.notification(pattern(30), handle: 27).map(hexString) == "1B 1B 00 " + hexString(pattern(20)))
        #expect(server.core.notification([1], handle: 13) == nil)
    }

    @Test("GATT/SR/GAI/BV-01-C: one indication in flight; the next waits for the confirmation; a full queue refuses")
    func indications() throws {
        var configuration = ATTServer.Configuration()
        configuration.indicationQueueLimit = 1
        var server = try ServerHarness(configuration: configuration)
        #expect(throws: ATTIndicationRefusal.notSubscribed) { try server.core.indicate([0x64], handle: 21) }
        _ = server.request("12 16 00 02 00")
        let first = try server.core.indicate([0x64], handle: 21)
        #expect(first.output.pdus.map(hexString) == ["1D 15 00 64"])
        #expect(first.output.events == [.indicationSent(first.id, handle: 21)])
        let second = try server.core.indicate([0x63], handle: 21)
        #expect(second.output.pdus.isEmpty && second.output.events.isEmpty)
        #expect(throws: ATTIndicationRefusal.queueFull(limit: 1)) { try server.core.indicate([0x62], handle: 21) }
        #expect(server.send("1E") == ["1D 15 00 63"])
        #expect(server.events == [.indicationConfirmed(first.id, handle: 21), .indicationSent(second.id, handle: 21)])
        // A stale timer for the confirmed one changes nothing.
        #expect(server.take(server.core.indicationTimedOut(first.id)) == [])
        #expect(server.events == [])
        #expect(server.send("1E") == [])
        #expect(server.events == [.indicationConfirmed(second.id, handle: 21)])
        #expect(server.core.indicationInFlight == nil)
    }

    @Test("an indication the bearer did not take fails and the next queued one goes out")
    func notSent() throws {
        var server = try ServerHarness()
        _ = server.request("12 16 00 02 00")
        let first = try server.core.indicate([1], handle: 21)
        let second = try server.core.indicate([2], handle: 21)
        #expect(server.take(server.core.indicationNotSent(second.id)) == [])
        #expect(server.take(server.core.indicationNotSent(first.id)) == ["1D 15 00 02"])
        #expect(server.events == [.indicationFailed(first.id, handle: 21, .notSent), .indicationSent(second.id, handle: 21)])
        #expect(server.core.indicationInFlight == second.id && !server.core.isTimedOut)
    }

    @Test("an unconfirmed indication times out: it and the queued ones fail, then no more ATT on the bearer")
    func timeout() throws {
        var server = try ServerHarness()
        _ = server.request("12 16 00 02 00")
        _ = server.request("12 1C 00 01 00")
        let first = try server.core.indicate([1], handle: 21)
        let second = try server.core.indicate([2], handle: 21)
        #expect(server.take(server.core.indicationTimedOut(first.id)) == [])
        #expect(server.events == [.indicationFailed(first.id, handle: 21, .timedOut),
                                  .indicationFailed(second.id, handle: 21, .bearerTimedOut)])
        #expect(server.core.isTimedOut)
        #expect(server.send("0A 03 00") == [])
        #expect(server.events == [.dropped(.bearerTimedOut(.readRequest))])
        #expect(server.send("1E") == [])
        #expect(server.core.notification([1], handle: 27) == nil)
        #expect(throws: ATTIndicationRefusal.bearerTimedOut) { try server.core.indicate([3], handle: 21) }
    }

    @Test("a database change forgets the CCCDs and queued indications of the changed range")
    func databaseChange() throws {
        var server = try ServerHarness()
        _ = server.request("12 09 00 02 00")
        _ = server.request("12 16 00 02 00")
        let first = try server.core.indicate([1], handle: 21)
        let queued = try server.core.indicate([2], handle: 21)
        #expect(server.take(server.core.databaseChanged(20...0xFFFF)) == [])
        #expect(server.events == [.indicationFailed(queued.id, handle: 21, .databaseChanged)])
        #expect(server.core.configuration(ofValueAt: 21) == [])
        #expect(server.core.configuration(ofValueAt: 8) == .indicate)
        #expect(server.core.indicationInFlight == first.id)
    }
}

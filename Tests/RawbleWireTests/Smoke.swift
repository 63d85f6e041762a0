import Testing
@testable import RawbleWire
@Test func placeholder() { #expect(BluetoothUUID("180D") == BluetoothUUID(uuid32: 0x180D)) }

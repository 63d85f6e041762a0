import RawbleGATTCore
import RawbleWire
import Testing

// Who may subscribe (GATTCharacteristicDefinition.subscribe): the CCCD's write access. A value
// a link may not read must not reach it by notification either, so by default a subscription
// needs what a read of the value needs; `subscribe` sets it for notify-only values.

/// Handles: 1-7 GAP, 6-9 GATT (Service Changed at 8, its CCCD 9), then the service at 10:
/// 11 decl 12 "sealed" (read: encryption) 13 CCCD; 14 decl 15 notify-only, subscribe: authentication,
/// 16 CCCD; 17 decl 18 notify-only, open 19 CCCD.
private func database() throws -> GATTServerDatabase {
    try GATTServerDatabase(deviceName: "rawble", services: [
        .primary(BluetoothUUID(0x180D), characteristics: [
            GATTCharacteristicDefinition(BluetoothUUID(0x2A38), properties: [.read, .notify], value: .fixed(Array("sealed".utf8)),
                                         read: .encryptionRequired),
            GATTCharacteristicDefinition(BluetoothUUID(0x2A37), properties: [.notify], subscribe: .authenticationRequired),
            GATTCharacteristicDefinition(BluetoothUUID(0x2A39), properties: [.notify]),
        ]),
    ])
}

private func write(_ server: inout ATTServer, _ database: inout GATTServerDatabase, cccd handle: UInt16,
                   _ value: UInt8) -> [UInt8] {
    server.receive([0x12, UInt8(handle), 0x00, value, 0x00], database: &database).pdus.first ?? []
}

@Suite("GATT server: subscriptions need what the characteristic asks (the CCCD's write access)")
struct ServerSubscriptionAccessTests {
    @Test("by default a subscription needs the value's read access; `subscribe` sets it; notify-only values stay open by default")
    func subscriptionAccess() throws {
        var database = try database()
        #expect(database.configurationHandle(ofValueAt: 12) == 13)
        #expect(database.configurationHandle(ofValueAt: 15) == 16)
        #expect(database.configurationHandle(ofValueAt: 18) == 19)
        var server = ATTServer()
        #expect(write(&server, &database, cccd: 13, 0x01) == [0x01, 0x12, 13, 0x00, 0x0F], "Insufficient Encryption")
        #expect(write(&server, &database, cccd: 16, 0x01) == [0x01, 0x12, 16, 0x00, 0x05], "Insufficient Authentication")
        #expect(write(&server, &database, cccd: 19, 0x01) == [0x13], "open")
        #expect(server.notification([0x01], handle: 12) == nil, "nothing pushed to a link that could not subscribe")
        #expect(server.notification([0x01], handle: 18) == [0x1B, 18, 0x00, 0x01])

        server.security = .encrypted
        #expect(write(&server, &database, cccd: 13, 0x01) == [0x13])
        #expect(server.notification([0x01], handle: 12) == [0x1B, 12, 0x00, 0x01])
        #expect(write(&server, &database, cccd: 16, 0x01) == [0x01, 0x12, 16, 0x00, 0x05], "encrypted is not authenticated")
        server.security = .authenticated
        #expect(write(&server, &database, cccd: 16, 0x01) == [0x13])
    }

    @Test("subscribeAccess: explicit wins; else the read access when it asks for security; else open")
    func defaults() {
        let uuid = BluetoothUUID(0x2A37)
        #expect(GATTCharacteristicDefinition(uuid, properties: [.notify]).subscribeAccess == .open)
        #expect(GATTCharacteristicDefinition(uuid, properties: [.read, .notify]).subscribeAccess == .open)
        #expect(GATTCharacteristicDefinition(uuid, properties: [.read, .indicate], read: .authenticationRequired).subscribeAccess
                == .authenticationRequired)
        #expect(GATTCharacteristicDefinition(uuid, properties: [.notify], read: .notPermitted).subscribeAccess == .open)
        #expect(GATTCharacteristicDefinition(uuid, properties: [.read, .notify], read: .encryptionRequired, subscribe: .open)
                .subscribeAccess == .open)
    }
}

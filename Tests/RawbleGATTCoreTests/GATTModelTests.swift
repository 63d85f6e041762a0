import RawbleGATTCore
import RawbleWire
import Testing

@Suite("GATT model")
struct GATTModelTests {
    @Test("a characteristic's descriptors lie after its value handle up to its end; none when the value is last")
    func descriptorHandles() {
        let withDescriptors = GATTCharacteristic(uuid: .heartRateMeasurement, declarationHandle: 0x10, valueHandle: 0x11,
                                                 properties: [.notify], endHandle: 0x13)
        #expect(withDescriptors.descriptorHandles == 0x12...0x13)
        let without = GATTCharacteristic(uuid: .bodySensorLocation, declarationHandle: 0x14, valueHandle: 0x15,
                                         properties: [.read], endHandle: 0x15)
        #expect(without.descriptorHandles == nil)
    }
}

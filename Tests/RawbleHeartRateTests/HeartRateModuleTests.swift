import RawbleGATT
import RawbleGATTCore
import RawbleHeartRate
import RawbleWire
import Testing

@Suite("Heart Rate module")
struct HeartRateModuleTests {
    @Test("the profile module re-exports the GATT client and the shared decoder")
    func reexports() throws {
        #expect(try HeartRateMeasurement.decode([0x06, 0x5A]).bpm == 90)
        #expect(BluetoothUUID.heartRateService == BluetoothUUID(0x180D))
    }
}

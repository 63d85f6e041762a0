import RawbleWire
import Testing

/// The library example of the README and docs/library.md, kept compiling and true.
@Suite("README example")
struct ReadmeExampleTests {
    @Test func example() throws {
        let measurement = try HeartRateMeasurement.decode([0x10, 0x48, 0x00, 0x04])
        #expect(measurement.bpm == 72)
        #expect(measurement.rrIntervals.first?.seconds == 1.0)

        let pdu = try ATTPDU.decode(Hex.decode("1b0f00065a"))
        guard case let .handleValueNotification(handle, value) = pdu else {
            Issue.record("not a notification: \(pdu)")
            return
        }
        #expect(handle == 0x000F)
        #expect(Array(value) == [0x06, 0x5A])

        // An LE Advertising Report event arriving in two reads.
        let bytesFromTheController = try Hex.decode("043e1a02010001665544332211 0e 020106 03030d18 06095374726170 c4")
        var framer = H4Framer()
        var names: [String] = []
        for chunk in [bytesFromTheController[..<5], bytesFromTheController[5...]] {
            framer.append(chunk)
            while let packet = try framer.nextPacket() {
                if packet.type == .event, case .le(.advertisingReport(let reports)) = try HCIEvent.decode(packet.bytes) {
                    for report in reports { names.append(AdvertisingData(decoding: report.data).localName ?? "") }
                }
            }
        }
        #expect(names == ["Strap"])
    }
}

// Procedures at the top of the handle space: services and declarations at 0xFFFF, ranges that
// start there, ranges that end before they start. Handle arithmetic on a server's values must
// end in a result or a typed error, never in an overflow trap (issue 9).
import RawbleGATT
import Testing

@Suite("Procedure: handles at 0xFFFF")
struct ProcedureTopHandleTests {
    /// The last service of a database: it ends at the last handle.
    let topService = GATTService(uuid: .heartRateService, startHandle: 0xFFF0, endHandle: 0xFFFF)

    @Test("a characteristic declaration at 0xFFFF (no room for its value) is an invalid response, not a trap")
    func characteristicDeclarationAtLastHandle() {
        // The crash of issue 9: value handle 0x0000 after a declaration at 0xFFFF.
        expectInvalid(run(DiscoverCharacteristics(of: topService), [
            Exchange("08 F0 FF FF FF 03 28", "09 07 FF FF 10 00 00 37 2A"),
        ]), "characteristic declaration 0xFFFF")
        // The same with the value handle claimed at 0xFFFF, and after a valid declaration.
        expectInvalid(run(DiscoverCharacteristics(of: topService), [
            Exchange("08 F0 FF FF FF 03 28", "09 07 FF FF 10 FF FF 37 2A"),
        ]), "has its value at 0xFFFF")
        expectInvalid(run(DiscoverCharacteristics(of: topService), [
            Exchange("08 F0 FF FF FF 03 28", "09 07 F1 FF 02 F2 FF 38 2A FF FF 10 00 00 37 2A"),
        ]), "characteristic declaration 0xFFFF")
    }
}

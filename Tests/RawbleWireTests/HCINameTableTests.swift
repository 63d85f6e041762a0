@testable import RawbleWire
import Testing

/// The tables that name HCI commands, events and LE subevents (Core Vol 4 Part E 7): every group
/// is there, and no name is given twice. The names of the codes two real captures hold are checked
/// against tshark's in RawbleCLITests (`HCINameTests`).
@Suite("HCI name tables")
struct HCINameTableTests {
    @Test func everyCommandGroupIsNamed() {
        #expect(HCIOpcode(0x0000).name == "No Operation")
        #expect(HCIOpcode(0x0406).name == "Disconnect")
        #expect(HCIOpcode(0x080F).name == "Write Default Link Policy Settings")
        #expect(HCIOpcode(0x0C33).name == "Host Buffer Size")
        #expect(HCIOpcode(0x0C56).name == "Write Simple Pairing Mode")
        #expect(HCIOpcode(0x1004).name == "Read Local Extended Features")
        #expect(HCIOpcode(0x1408).name == "Read Encryption Key Size")
        #expect(HCIOpcode(0x1803).name == "Enable Implementation Under Test Mode")
        #expect(HCIOpcode(0x209D).name == "LE Frame Space Update")
        #expect(HCIOpcode(0xFD57).name == "Vendor Specific")
        #expect(HCIOpcode(0x0C33).description == "Host Buffer Size (0x0C33)")
        #expect(HCIOpcode(0x0C00).name == nil)
        #expect(HCIOpcode(0x1C01).name == nil)  // OGF 0x07 is not assigned
    }

    /// Every opcode the Supported Commands table knows, and every one HCICommand models, is named.
    @Test func everyOpcodeTheStackKnowsIsNamed() {
        for opcode in SupportedCommands.table.keys.sorted() + HCICommandSamples.modelledOpcodes.sorted() {
            #expect(HCIOpcode(opcode).name != nil, "\(HCIOpcode(opcode))")
        }
    }

    /// A line copied twice by mistake would name two codes alike.
    @Test func noTwoCodesShareAName() {
        func expectDistinct<Code: BinaryInteger>(_ table: [Code: String], _ what: String) {
            var seen: [String: Code] = [:]
            for (code, name) in table.sorted(by: { $0.key < $1.key }) {
                #expect(!name.isEmpty, "\(what) 0x\(String(code, radix: 16)) has an empty name")
                if let other = seen.updateValue(code, forKey: name) {
                    Issue.record("\(what)s 0x\(String(other, radix: 16)) and 0x\(String(code, radix: 16)) are both \(name)")
                }
            }
        }
        expectDistinct(HCIOpcode.names, "command")
        expectDistinct(HCIEvent.codeNames, "event")
        expectDistinct(LEMetaEvent.subeventNames, "subevent")
    }

    @Test func tablesCoverTheSpecification() {
        // Core 6.0: 366 commands with the withdrawn ones and No Operation, 79 events (LE Meta
        // and vendor-specific included), 53 LE subevents (0x01-0x35).
        #expect(HCIOpcode.names.count == 366)
        #expect(HCIEvent.codeNames.count == 79)
        #expect(LEMetaEvent.subeventNames.count == 0x35)
        #expect(Set(LEMetaEvent.subeventNames.keys) == Set<UInt8>(1...0x35))
    }
}

// Fuzz target: the bond file, RawbleSMP's `BondFile` (one identity's bonds as text, read from a
// disk anything may have written): decoding never traps and fails only with a `BondFileError`
// whose description is one line; what decodes encodes, and decodes again to the same value and
// the same bytes. Compiled with the wire sources and Sources/RawbleSMP/Bonds/Bond.swift and
// BondFile.swift by Scripts/fuzz.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBondFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let file: BondFile
    do throws(BondFileError) {
        file = try BondFile(decoding: bytes)
    } catch {
        let description = error.description
        precondition(!description.contains("\n") && !description.contains("\r"), "two lines: \(description)")
        if let line = error.line {
            let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).count
            precondition(line >= 1 && line <= lines, "line \(line) of \(lines): \(description)")
        }
        return 0
    }
    precondition(file.bonds.count <= BondFile.maximumBondCount)
    do throws(BondFileError) {
        let encoded = try file.encoded()
        let again = try BondFile(decoding: encoded)
        precondition(again == file, "bond file round trip: \(file) became \(again)")
        let reencoded = try again.encoded()
        precondition(reencoded == encoded, "bond file encoding differs on the second round")
    } catch {
        preconditionFailure("a decoded bond file does not encode and decode again: \(error)")
    }
    return 0
}

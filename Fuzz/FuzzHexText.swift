// Fuzz target: hex text parsing (CLI input). Compiled with the wire sources by Scripts/fuzz.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHex(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    if let decoded = try? Hex.decode(text) {
        // Round trip: what we print must parse back to the same bytes.
        precondition((try? Hex.decode(Hex.encode(decoded))) == decoded)
    }
    return 0
}

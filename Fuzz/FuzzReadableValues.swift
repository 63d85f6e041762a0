// Fuzz target: the readable-values registry. The first byte picks a registered UUID (or a
// --as type, or a Presentation Format built from the next 7 bytes); the rest is the value.
// Describing never traps; what decodes has text and fields, what does not keeps its bytes and
// an error inside them; the value types that re-encode give back the bytes they decoded.
private let fuzzRegisteredUUIDs: [UInt16] = [
    0x2A00, 0x2A01, 0x2A05, 0x2A08, 0x2A19, 0x2A1C, 0x2A23, 0x2A24, 0x2A25, 0x2A26, 0x2A27, 0x2A28, 0x2A29, 0x2A37, 0x2A38,
    0x2A50, 0x2A53, 0x2A5B, 0x2900, 0x2901, 0x2902, 0x2904,
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReadableValues(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = input.first else { return 0 }
    let bytes = Array(input.dropFirst())
    let value: ReadableValue
    let formats = ValueFormat.allCases
    let uuidCount = fuzzRegisteredUUIDs.count
    switch Int(selector) {
    case 0..<uuidCount:
        value = ReadableValues.describe(bytes, of: BluetoothUUID(fuzzRegisteredUUIDs[Int(selector)]))
        precondition(value.isKnownFormat)
    case uuidCount..<(uuidCount + formats.count):
        let format = formats[Int(selector) - uuidCount]
        value = ReadableValues.describe(bytes, as: format)
        // A format's own text re-encodes to the bytes for every fixed-width integer type.
        if case .decoded(let text, _) = value.outcome, format.width != nil,
           format.rawValue.first == "u" || format.rawValue.first == "s" {
            precondition(format.encode(text) == bytes)
        }
    default:
        guard let presentation = try? PresentationFormat.decode(bytes.prefix(7)) else { return 0 }
        precondition(presentation.encoded == Array(bytes.prefix(7)))
        _ = presentation.description
        value = ReadableValues.describe(Array(bytes.dropFirst(7)), presentedAs: presentation)
    }
    precondition(value.bytes.count <= bytes.count)
    switch value.outcome {
    case .decoded(_, let fields): precondition(!fields.isEmpty)
    case .malformed(let error): precondition(error.offset >= 0 && error.offset <= bytes.count)
    case .unknown: break
    }
    _ = value.text
    if let v = try? TemperatureMeasurement.decode(bytes) { precondition(v.encoded == bytes) }
    if let v = try? CSCMeasurement.decode(bytes) { precondition(v.encoded == bytes) }
    if let v = try? RSCMeasurement.decode(bytes) { precondition(v.encoded == bytes) }
    if let v = try? PnPID.decode(bytes) { precondition(v.encoded == bytes) }
    if let v = try? SystemID.decode(bytes) { precondition(v.encoded == bytes) }
    if bytes.count >= 4 {
        let bits = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
        let float = MedicalFloat(float32Bits: bits)
        precondition(float.float32Bits == bits)
        let short = MedicalFloat(sfloatBits: UInt16(truncatingIfNeeded: bits))
        precondition(short.sfloatBits == UInt16(truncatingIfNeeded: bits))
        _ = MedicalFloat(decimal: float.description)
    }
    if let text = String(validating: bytes, as: UTF8.self) { _ = MedicalFloat(decimal: text) }
    return 0
}

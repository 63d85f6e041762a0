import RawbleWire

/// JSON building blocks shared by every decoder's description.
extension JSON {
    /// Bytes as lower-case hex, the CLI's convention for values.
    static func hex(_ bytes: some Sequence<UInt8>) -> JSON { .string(Hex.encode(bytes)) }

    /// A handle as `0x001D`, as people and the CLI's targets write it.
    static func handle(_ handle: UInt16) -> JSON { .string(handleText(handle)) }

    static func uuid(_ uuid: BluetoothUUID) -> JSON { .string(uuid.description) }
}

func handleText(_ handle: UInt16) -> String {
    let s = String(handle, radix: 16, uppercase: true)
    return "0x" + String(repeating: "0", count: max(0, 4 - s.count)) + s
}

func hexByte(_ value: UInt8) -> String {
    let s = String(value, radix: 16, uppercase: true)
    return "0x" + (s.count == 1 ? "0" + s : s)
}

func hexWord(_ value: UInt16) -> String { handleText(value) }

// Fuzz target: Advertising Data decoding (every scanned report's payload). Compiled with the wire
// sources by Scripts/fuzz. Decode tolerantly, re-encode the valid structures, decode again:
// the structures must survive unchanged, and each one must round-trip on its own.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAdvertisingData(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // Decode from an offset too, so slice indices that do not start at 0 are exercised.
    for input in [bytes[...], bytes.dropFirst(min(3, bytes.count))] {
        let ad = AdvertisingData(decoding: input)
        precondition(Array(input.prefix(ad.bytes.count)) == Array(ad.bytes), "kept bytes are not a prefix")
        if ad.error == nil {
            precondition(input.dropFirst(ad.bytes.count).allSatisfy { $0 == 0 }, "non-zero bytes dropped silently")
        } else if let error = ad.error {
            precondition(error.offset >= input.startIndex && error.offset < input.endIndex, "error offset outside input")
        }
        let structures = ad.structures
        let rebuilt = AdvertisingData(structures)
        precondition(rebuilt.encoded == Array(ad.bytes), "re-encoding changed the bytes")
        let again = AdvertisingData(decoding: rebuilt.encoded)
        precondition(again.structures == structures, "structures changed after a round trip")
        for s in structures {
            if let single = try? ADStructure.decode(s.encoded) { precondition(single == s, "structure round trip") }
        }
        if let strict = try? AdvertisingData.decode(input) { precondition(strict == ad, "strict and tolerant disagree") }
        _ = (ad.localName, ad.serviceUUIDs, ad.manufacturerData, ad.serviceData, ad.uri?.string, ad.flags,
             ad.txPowerLevel, ad.appearance?.description, ad.description)
    }
    return 0
}

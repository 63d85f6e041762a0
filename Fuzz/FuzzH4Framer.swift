// Fuzz target: the H4 stream framer. The input is split into chunks whose sizes come from the
// data itself; framing them must give exactly what one single append of the same bytes gives,
// and every packet must re-encode to the bytes it was cut from.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzH4Framer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    // The first byte picks the ACL limit (so lying lengths are exercised) and the chunk sizes.
    let maximumACL = first & 0x80 != 0 ? Int(first & 0x7F) : 65_535
    let stream = bytes.dropFirst()

    func run(_ chunks: [ArraySlice<UInt8>]) -> [Result<H4Packet, H4FramerError>] {
        var framer = H4Framer(maximumACLPayloadLength: maximumACL)
        var out: [Result<H4Packet, H4FramerError>] = []
        for chunk in chunks {
            framer.append(chunk)
            out += framer.drain()
            precondition(framer.bufferedByteCount <= 1 + 4 + 65_535 + chunk.count)
        }
        do { try framer.finish() } catch { out.append(.failure(error)) }
        precondition(framer.bufferedByteCount == 0)
        precondition(framer.streamOffset == stream.count)
        return out
    }

    var chunks: [ArraySlice<UInt8>] = []
    var start = stream.startIndex
    var i = stream.startIndex
    while start < stream.endIndex {
        let n = 1 + Int(stream[i] % 17)
        let end = min(stream.endIndex, start + n)
        chunks.append(stream[start..<end])
        start = end
        i = i + 1 < stream.endIndex ? i + 1 : stream.startIndex
    }
    let whole = run([stream])
    let pieces = run(chunks)
    precondition(whole == pieces)
    var framed = 0
    for result in whole {
        if case .success(let packet) = result {
            let decoded = try? H4Packet.decode(packet.encoded)
            precondition(decoded == packet)
            framed += packet.encoded.count
        }
    }
    precondition(framed <= stream.count)
    return 0
}

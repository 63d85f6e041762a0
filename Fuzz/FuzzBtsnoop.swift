// Fuzz target: the btsnoop reader. Reads the input as a file (whole, and in chunks sized from
// the data); both must agree, and every record must re-encode and read back equal.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBtsnoop(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    // An input that starts like a btsnoop file is read as it is; any other gets a valid
    // header (datalink chosen by its first byte) so the record parser is reached.
    let isFile = input.starts(with: BtsnoopHeader.identification.prefix(7))
    let bytes = isFile || input.isEmpty
        ? input
        : BtsnoopWriter.header(datalink: BtsnoopDatalink([1001, 1002, 1004, 2001][Int(input[0] % 4)])) + input.dropFirst()

    let whole = BtsnoopReader.read(bytes)
    var reader = BtsnoopReader()
    var records: [BtsnoopRecord] = []
    var failure: BtsnoopError? = nil
    var start = 0
    var step = 0
    do {
        while start < bytes.count {
            let n = 1 + Int(bytes[step % bytes.count] % 29)
            let end = min(bytes.count, start + n)
            reader.append(bytes[start..<end])
            start = end
            step += 1
            while let record = try reader.nextRecord() { records.append(record) }
        }
        try reader.finish()
    } catch {
        failure = error
    }
    precondition(records == whole.records)
    precondition(failure == whole.error)
    precondition(reader.header == whole.header)

    if let header = whole.header {
        let rewritten = BtsnoopWriter.file(datalink: header.datalink, records: whole.records)
        let again = BtsnoopReader.read(rewritten)
        precondition(again.error == nil)
        precondition(again.records == whole.records)
        for record in whole.records {
            precondition((try? BtsnoopRecord.decode(record.encoded)) == record)
            if let packet = try? record.h4Packet(datalink: header.datalink) {
                precondition((try? H4Packet.decode(packet.encoded)) == packet)
            }
        }
    }
    return 0
}

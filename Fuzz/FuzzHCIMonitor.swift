// Fuzz target: the HCI monitor channel's records (RawbleKernel's HCIMonitorRecord.swift, compiled
// with the wire sources by Scripts/fuzz). The first byte picks the adapter; the rest is split into
// datagrams, each behind a length byte, and fed to one adapter's decoder: it never traps, every
// record lands in exactly one count, and each packet handed out re-encodes to its datagram.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHCIMonitor(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = input.first else { return 0 }
    var decoder = HCIMonitorDecoder(adapterIndex: UInt16(first % 3))
    var datagrams = 0
    var start = 1
    while start < input.count {
        let from = start + 1
        let end = min(input.count, from + Int(input[start]))
        let datagram = input[from..<end]
        start = end
        datagrams += 1
        let record = try? HCIMonitorRecord.decode(datagram)
        if let record {
            precondition(record.encoded[...] == datagram, "re-encoding differs")
            precondition((try? HCIMonitorRecord.decode(record.encoded[...])) == record, "round trip differs")
        }
        let packet: HCIMonitorPacket?
        do {
            packet = try decoder.packet(in: datagram)
        } catch {
            precondition(record == nil || record?.opcode.packetType != nil, "only a packet record can fail past its header")
            continue
        }
        if let packet, let record {
            precondition(record.adapterIndex == decoder.adapterIndex)
            precondition(packet.packet.bytes == record.payload)
            precondition(record.opcode.packetType == packet.packet.type && record.opcode.direction == packet.direction)
            precondition((try? H4Packet.decode(packet.packet.encoded[...])) == packet.packet, "not one whole packet")
        } else {
            precondition(packet == nil)
        }
    }
    let c = decoder.counts
    precondition(c.packets + c.otherAdapters + c.otherRecords + c.unknownOpcodes + c.malformed == datagrams, "a record not counted once")
    return 0
}

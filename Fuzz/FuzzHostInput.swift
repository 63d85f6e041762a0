// Fuzz target: the host engines' input from a controller. The bytes are an H4 stream: events go
// to the command flow engine (with commands pending), ACL packets to the L2CAP reassembler.
// Invariants: nothing traps, credits stay within a byte, reassembled frames respect the bound,
// and every pending command still ends exactly once when the transport closes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHostInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let start = ContinuousClock.now
    var flow = CommandFlow<ContinuousClock.Instant>(capacity: 8)
    var tokens: Set<CommandToken> = []
    for command in [HCICommand.reset, .leReadBufferSize, .readBDADDR] {
        if let token = try? flow.submit(command, timeout: .seconds(1), now: start) { tokens.insert(token) }
    }
    _ = flow.nextCommandsToSend(now: start)
    var reassembler = ACLReassembler(maximumFrameLength: 600)
    var ended: [CommandToken: Int] = [:]
    func record(_ outcomes: [CommandOutcome]) {
        // Every outcome that names a token ends that command (a successful Command Status
        // included: it leaves the engine to wait for its own event).
        for outcome in outcomes {
            if let token = outcome.token { ended[token, default: 0] += 1 }
        }
    }
    var framer = H4Framer(maximumACLPayloadLength: 1024)
    framer.append(bytes)
    while true {
        let packet: H4Packet?
        do { packet = try framer.nextPacket() } catch { continue }
        guard let packet else { break }
        switch packet.type {
        case .event:
            if let event = try? HCIEvent.decode(packet.bytes) {
                record(flow.receive(event, now: start))
                precondition(flow.credits <= 255)
                _ = flow.nextCommandsToSend(now: start)
            }
        case .acl:
            if let acl = try? ACLPacket.decode(packet.bytes) {
                let output = reassembler.receive(acl)
                if let frame = output.frame { precondition(frame.payload.count + 4 <= 600) }
            }
        default:
            break
        }
    }
    record(flow.transportClosed())
    for token in tokens { precondition(ended[token] == 1, "token \(token) ended \(ended[token] ?? 0) times") }
    return 0
}

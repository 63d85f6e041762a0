import RawbleHostCore
import RawbleTestSupport
import RawbleWire
import Testing

@Suite("HCI command flow properties")
struct CommandFlowPropertyTests {
    static let commands: [HCICommand] = [.reset, .readBDADDR, .readBufferSize, .leReadBufferSize, .leCreateConnectionCancel]

    /// Random interleavings of submissions, sends, answers (right, stray, NOP, Status success or
    /// failure), timeouts, resets and closes: every accepted token ends in exactly one terminal
    /// outcome, no outcome names an unknown token, and the engine never sends beyond its credits.
    @Test(arguments: 0..<400)
    func everyTokenEndsExactlyOnce(seed: Int) throws {
        var rng = SplitMix64(state: UInt64(seed))
        var flow = CommandFlow<FakeInstant>(capacity: Int.random(in: 1...8, using: &rng))
        var now = FakeInstant.zero
        var submitted: Set<CommandToken> = []
        var ended: [CommandToken: Int] = [:]
        var sentNotAnswered: [HCIOpcode] = []  // what the simulated controller has seen

        func record(_ outcomes: [CommandOutcome]) {
            for outcome in outcomes {
                if let token = outcome.token {
                    #expect(submitted.contains(token), "seed \(seed): outcome for unknown \(token)")
                    ended[token, default: 0] += 1
                }
            }
        }

        for _ in 0..<Int.random(in: 1...120, using: &rng) {
            switch Int.random(in: 0...99, using: &rng) {
            case 0..<30:
                let command = Self.commands.randomElement(using: &rng) ?? .reset
                let full = flow.queuedCount + flow.awaitingCount >= flow.capacity
                do {
                    let token = try flow.submit(command, timeout: .milliseconds(Int64.random(in: 1...500, using: &rng)), now: now)
                    #expect(!full)
                    #expect(submitted.insert(token).inserted, "seed \(seed): token \(token) reused")
                } catch {
                    #expect(full && error == .queueFull(capacity: flow.capacity))
                }
            case 30..<50:
                let credits = flow.credits
                let out = flow.nextCommandsToSend(now: now)
                #expect(out.count <= credits, "seed \(seed): sent beyond credits")
                sentNotAnswered += out.map(\.command.opcode)
            case 50..<70 where !sentNotAnswered.isEmpty:
                let index = Int.random(in: 0..<sentNotAnswered.count, using: &rng)
                let opcode = sentNotAnswered.remove(at: index)
                let credits = UInt8.random(in: 0...3, using: &rng)
                switch Int.random(in: 0...2, using: &rng) {
                case 0: record(flow.receive(complete(opcode, credits: credits), now: now))
                case 1: record(flow.receive(status(opcode, .success, credits: credits), now: now))
                default: record(flow.receive(status(opcode, .commandDisallowed, credits: credits), now: now))
                }
            case 70..<78:
                record(flow.receive(complete(HCIOpcode(0), credits: UInt8.random(in: 0...3, using: &rng), []), now: now))
            case 78..<83:
                let opcode = (Self.commands.randomElement(using: &rng) ?? .reset).opcode
                record(flow.receive(complete(opcode, credits: UInt8.random(in: 0...3, using: &rng)), now: now))
            case 83..<95:
                now = now.advanced(by: .milliseconds(Int64.random(in: 0...200, using: &rng)))
                let before = flow.awaitingCount
                let outcomes = flow.expire(now: now)
                #expect(flow.awaitingCount == before - outcomes.count)
                if let deadline = flow.nextDeadline { #expect(deadline > now) }
                record(outcomes)
            case 95..<97:
                record(flow.reset())
                sentNotAnswered.removeAll()
            case 97..<99:
                record(flow.transportClosed())
                sentNotAnswered.removeAll()
            default:
                break
            }
        }

        // Drain: grant credits, send everything, answer nothing more, let every deadline pass.
        while flow.queuedCount > 0 {
            record(flow.receive(complete(HCIOpcode(0), credits: 255, []), now: now))
            _ = flow.nextCommandsToSend(now: now)
        }
        record(flow.expire(now: now.advanced(by: .seconds(10))))

        #expect(flow.queuedCount == 0 && flow.awaitingCount == 0, "seed \(seed)")
        #expect(Set(ended.keys) == submitted, "seed \(seed): lost tokens \(submitted.subtracting(ended.keys))")
        #expect(ended.values.allSatisfy { $0 == 1 }, "seed \(seed): duplicated outcomes \(ended.filter { $0.value > 1 })")
    }
}

// Seeded random servers: every procedure, fed well-formed response PDUs of any case (half of
// them plausible answers to the request just sent, half anything at all), finishes or throws
// within a bounded number of steps. A failure names its seed, so it replays.
import RawbleGATTCore
import RawbleTestSupport
import RawbleWire
import Testing

/// A random server answering requests with random but well-formed PDUs.
struct RandomServer {
    var rng: SplitMix64
    /// How often (percent) an answer is anything at all rather than a plausible one; errors
    /// and corrupted entries come at a fifth and a tenth of that.
    var hostility: UInt64 = 50

    mutating func chance(_ percent: UInt64) -> Bool { rng.next() % 100 < percent }
    mutating func handle() -> UInt16 { UInt16.random(in: 0...UInt16.max, using: &rng) }
    mutating func bytes(_ count: Int) -> ArraySlice<UInt8> { (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }[...] }
    mutating func uuid() -> BluetoothUUID {
        chance(70) ? BluetoothUUID(UInt16.random(in: 0...UInt16.max, using: &rng)) : BluetoothUUID(high: rng.next(), low: rng.next())
    }

    /// Handles ascending from `start`, mostly within `end`, sometimes anywhere; when the
    /// steps run past `end`, often one more at `end` itself (0xFFFF for the last service).
    mutating func ascending(from start: UInt16, to end: UInt16, count: Int) -> [UInt16] {
        var handles: [UInt16] = []
        var h = start
        for _ in 0..<count {
            if chance(hostility / 10) { h = handle() }
            handles.append(h)
            let step = UInt16.random(in: 1...12, using: &rng)
            guard h <= end &- step else {
                if h < end, chance(50) { handles.append(end) }
                break
            }
            h &+= step
        }
        return handles
    }

    /// The service and characteristic a seed's procedures run on. Two in five seeds take the
    /// last service of a database (it ends at 0xFFFF), one in five a one-handle service at
    /// 0xFFFF; their characteristic's value or descriptors reach 0xFFFF.
    mutating func layout() -> (service: GATTService, characteristic: GATTCharacteristic) {
        switch rng.next() % 5 {
        case 0, 1:
            let start = UInt16.random(in: 0xFF00...0xFFFC, using: &rng)
            let valueHandle = chance(50) ? 0xFFFF : start + 2
            return (GATTService(uuid: .heartRateService, startHandle: start, endHandle: 0xFFFF),
                    GATTCharacteristic(uuid: .heartRateMeasurement, declarationHandle: valueHandle - 1, valueHandle: valueHandle,
                                       properties: [.notify], endHandle: 0xFFFF))
        case 2:
            return (GATTService(uuid: .heartRateService, startHandle: 0xFFFF, endHandle: 0xFFFF),
                    GATTCharacteristic(uuid: .heartRateMeasurement, declarationHandle: 0xFFFD, valueHandle: 0xFFFE,
                                       properties: [.notify], endHandle: 0xFFFF))
        default:
            return (GATTService(uuid: .heartRateService, startHandle: 0x0001, endHandle: 0x0400),
                    GATTCharacteristic(uuid: .heartRateMeasurement, declarationHandle: 2, valueHandle: 3,
                                       properties: [.notify], endHandle: 0x0300))
        }
    }

    /// Groups (start, end) ascending from `start` without overlap, mostly within `end`.
    mutating func groups(from start: UInt16, to end: UInt16, count: Int) -> [(UInt16, UInt16)] {
        var groups: [(UInt16, UInt16)] = []
        var h = start
        for _ in 0..<count {
            if chance(hostility / 10) { h = handle() }
            let size = UInt16.random(in: 0...10, using: &rng)
            let groupEnd = chance(hostility / 10) ? handle() : (h <= UInt16.max - size ? h + size : UInt16.max)
            groups.append((h, groupEnd))
            guard groupEnd < end else { break }
            h = groupEnd + 1
        }
        return groups
    }

    /// A plausible answer to `request`, or (half the time) any well-formed PDU.
    mutating func answer(_ request: ATTPDU) -> ATTPDU {
        if chance(hostility / 5) {
            let code = chance(60) ? ATTErrorCode.attributeNotFound : ATTErrorCode(UInt8.random(in: 0...255, using: &rng))
            return .errorResponse(requestOpcode: chance(90) ? request.opcode : ATTOpcode(UInt8.random(in: 0...255, using: &rng)),
                                  handle: handle(), errorCode: code)
        }
        if chance(hostility) { return anything() }
        let count = chance(hostility / 10) ? 0 : Int.random(in: 1...6, using: &rng)
        switch request {
        case let .readByGroupTypeRequest(start, end, _):
            let width = chance(80) ? 2 : 16
            return .readByGroupTypeResponse(groups(from: start, to: end, count: count).map {
                .init(handle: $0.0, endGroupHandle: $0.1, value: bytes(width))
            })
        case let .findByTypeValueRequest(start, end, _, _):
            return .findByTypeValueResponse(groups(from: start, to: end, count: count).map {
                .init(foundHandle: $0.0, groupEndHandle: $0.1)
            })
        case let .readByTypeRequest(start, end, type):
            let handles = ascending(from: start, to: end, count: count)
            if type == .characteristic {
                let long = chance(20)
                return .readByTypeResponse(handles.map { h in
                    var value: [UInt8] = [UInt8.random(in: 0...255, using: &rng)]
                    let valueHandle = chance(90) ? h &+ 1 : handle()
                    value += [UInt8(valueHandle & 0xFF), UInt8(valueHandle >> 8)]
                    value += Array(bytes(long ? 16 : 2))
                    return .init(handle: h, value: value[...])
                })
            }
            if type == .include {
                let long = chance(30)
                return .readByTypeResponse(handles.map { h in
                    let s = handle(), e = chance(80) ? s &+ 3 : handle()
                    let value = [UInt8(s & 0xFF), UInt8(s >> 8), UInt8(e & 0xFF), UInt8(e >> 8)] + (long ? [] : Array(bytes(2)))
                    return .init(handle: h, value: value[...])
                })
            }
            let length = Int.random(in: 0...20, using: &rng)
            return .readByTypeResponse(handles.map { .init(handle: $0, value: bytes(length)) })
        case let .findInformationRequest(start, end):
            let long = chance(20)
            return .findInformationResponse(ascending(from: start, to: end, count: count).map {
                .init(handle: $0, uuid: long ? BluetoothUUID(high: rng.next(), low: rng.next()) : BluetoothUUID(UInt16.random(in: 0...UInt16.max, using: &rng)))
            })
        case .readRequest:
            return .readResponse(value: bytes(chance(50) ? 22 : Int.random(in: 0...30, using: &rng)))
        case .readBlobRequest:
            return .readBlobResponse(value: bytes(chance(70) ? 22 : Int.random(in: 0...30, using: &rng)))
        case .readMultipleRequest:
            return .readMultipleResponse(values: bytes(Int.random(in: 0...30, using: &rng)))
        case .readMultipleVariableRequest:
            return .readMultipleVariableResponse((0..<Int.random(in: 0...4, using: &rng)).map { _ in .init(value: bytes(3)) })
        case .writeRequest:
            return .writeResponse
        case let .prepareWriteRequest(h, offset, value):
            return chance(90) ? .prepareWriteResponse(handle: h, offset: offset, value: value)
                : .prepareWriteResponse(handle: handle(), offset: offset, value: bytes(value.count))
        case .executeWriteRequest:
            return .executeWriteResponse
        default:
            return anything()
        }
    }

    /// Any well-formed PDU, of any case.
    mutating func anything() -> ATTPDU {
        switch UInt8.random(in: 0...14, using: &rng) {
        case 0: .readByGroupTypeResponse([.init(handle: handle(), endGroupHandle: handle(), value: bytes(2))])
        case 1: .findByTypeValueResponse([.init(foundHandle: handle(), groupEndHandle: handle())])
        case 2: .readByTypeResponse([.init(handle: handle(), value: bytes(Int.random(in: 0...19, using: &rng)))])
        case 3: .findInformationResponse([.init(handle: handle(), uuid: uuid())])
        case 4: .readResponse(value: bytes(Int.random(in: 0...600, using: &rng)))
        case 5: .readBlobResponse(value: bytes(Int.random(in: 0...600, using: &rng)))
        case 6: .readMultipleResponse(values: bytes(4))
        case 7: .readMultipleVariableResponse([.init(length: UInt16.random(in: 0...600, using: &rng), value: bytes(2))])
        case 8: .writeResponse
        case 9: .prepareWriteResponse(handle: handle(), offset: handle(), value: bytes(4))
        case 10: .executeWriteResponse
        case 11: .handleValueNotification(handle: handle(), value: bytes(3))
        case 12: .exchangeMTUResponse(serverMTU: handle())
        case 13: .unknown(opcode: ATTOpcode(0x3F), parameters: bytes(2))
        default: .readRequest(handle: handle())
        }
    }
}

/// Runs `procedure` against `server` for at most `bound` responses; returns how it ended.
enum RandomOutcome { case finished(Int), failed(Int), ranOut }

func drive<P: GATTProcedure>(_ procedure: P, _ server: inout RandomServer, bound: Int,
                             count: (P.Output) -> Int = { _ in 0 }) -> RandomOutcome {
    var procedure = procedure
    var step = procedure.start()
    for steps in 0...bound {
        switch step {
        case .finished(let output):
            #expect(count(output) <= 0xFFFF)
            return .finished(steps)
        case .send(let request):
            guard steps < bound else { return .ranOut }
            do {
                step = try procedure.receive(server.answer(request))
            } catch {
                return .failed(steps + 1)
            }
        }
    }
    return .ranOut
}

@Suite("Procedure: random servers")
struct SplitMix64Tests {
    /// More than one response per handle would mean a discovery did not advance.
    static let bound = 0x10010

    @Test("every procedure finishes or fails within the bound against 300 seeded random servers", arguments: 0..<300)
    func terminates(seed: UInt64) throws {
        var server = RandomServer(rng: SplitMix64(state: seed), hostility: [5, 10, 20, 50][Int(seed % 4)])
        let (service, characteristic) = server.layout()
        var outcomes: [RandomOutcome] = [
            drive(DiscoverPrimaryServices(), &server, bound: Self.bound, count: { $0.count }),
            drive(DiscoverPrimaryServicesByUUID(.heartRateService), &server, bound: Self.bound, count: { $0.count }),
            drive(FindIncludedServices(of: service), &server, bound: Self.bound, count: { $0.count }),
            drive(DiscoverCharacteristics(of: service), &server, bound: Self.bound, count: { $0.count }),
            drive(DiscoverCharacteristics(of: service, uuid: .bodySensorLocation), &server, bound: Self.bound),
            drive(DiscoverDescriptors(of: characteristic), &server, bound: Self.bound, count: { $0.count }),
            drive(ReadValue(handle: 3), &server, bound: 2),
            drive(ReadLongValue(handle: 3, mtu: 23), &server, bound: 26),
            drive(ReadMultipleValues(handles: [3, 5]), &server, bound: 2),
            drive(ReadMultipleVariableValues(handles: [3, 5]), &server, bound: 2),
            drive(ReadUsingCharacteristicUUID(BluetoothUUID(0x2A19)), &server, bound: Self.bound, count: { $0.count }),
            drive(WriteCCCD(handle: 4, value: .notify), &server, bound: 2),
        ]
        outcomes.append(drive(try LongWrite(handle: 3, value: pattern(100), mtu: 23), &server, bound: 9))
        outcomes.append(drive(try ReliableWrite([GATTHandleValue(handle: 3, value: pattern(30)),
                                                 GATTHandleValue(handle: 5, value: [1])], mtu: 23), &server, bound: 5))
        for (index, outcome) in outcomes.enumerated() {
            if case .ranOut = outcome { Issue.record("procedure \(index) did not end within its bound (seed \(seed))") }
        }
    }

    @Test("the random servers reach the top of the handle space: services ending at 0xFFFF, declarations at 0xFFFF")
    func randomServersReachLastHandle() {
        var topServices = 0, declarationsAtTop = 0
        for seed in UInt64(0)..<300 {
            var server = RandomServer(rng: SplitMix64(state: seed), hostility: [5, 10, 20, 50][Int(seed % 4)])
            let (service, _) = server.layout()
            guard service.endHandle == 0xFFFF else { continue }
            topServices += 1
            let walkToTheEnd = ATTPDU.readByTypeRequest(startHandle: max(service.startHandle, 0xFFF8), endHandle: 0xFFFF,
                                                        attributeType: .characteristic)
            if case .readByTypeResponse(let entries) = server.answer(walkToTheEnd), entries.contains(where: { $0.handle == 0xFFFF }) {
                declarationsAtTop += 1
            }
        }
        #expect(topServices >= 120) // three in five expected
        #expect(declarationsAtTop >= 30)
    }

    @Test("a long write answered only with the right echoes takes exactly one request per part plus Execute Write")
    func longWriteSteps() throws {
        // 100 bytes at ATT_MTU 23: 6 parts of up to 18 bytes.
        var procedure = try LongWrite(handle: 3, value: pattern(100), mtu: 23)
        var step = procedure.start()
        var requests = 0
        while case .send(let request) = step, requests < 20 {
            requests += 1
            let response: ATTPDU = switch request {
            case let .prepareWriteRequest(h, o, v): .prepareWriteResponse(handle: h, offset: o, value: v)
            default: .executeWriteResponse
            }
            step = try procedure.receive(response)
        }
        #expect(requests == 7)
    }

    @Test("the random servers are not trivial: some discoveries run many requests and finish, others fail")
    func randomServersExercise() {
        var longest = 0, finished = 0, failed = 0
        for seed in UInt64(1000)..<1200 {
            var server = RandomServer(rng: SplitMix64(state: seed), hostility: 5)
            switch drive(DiscoverPrimaryServices(), &server, bound: Self.bound) {
            case .finished(let steps): finished += 1; longest = max(longest, steps)
            case .failed(let steps): failed += 1; longest = max(longest, steps)
            case .ranOut: Issue.record("seed \(seed) ran out")
            }
        }
        #expect(longest >= 20)
        #expect(finished > 0)
        #expect(failed > 0)
    }

    @Test("a random server that only answers plausibly is walked to the end of the handle range")
    func wellBehavedServerFinishes() {
        var server = RandomServer(rng: SplitMix64(state: 7), hostility: 0)
        var procedure = DiscoverPrimaryServices()
        var step = procedure.start()
        var requests = 0
        do {
            while case .send(let request) = step, requests < Self.bound {
                requests += 1
                step = try procedure.receive(server.answer(request))
            }
        } catch {
            Issue.record("a plausible server failed discovery: \(error)")
        }
        guard case .finished(let services) = step else {
            Issue.record("discovery did not finish in \(requests) requests")
            return
        }
        #expect(services.last?.endHandle == 0xFFFF)
        #expect(requests > 100)
    }
}

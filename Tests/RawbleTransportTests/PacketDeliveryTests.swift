import Glibc
import NIOCore
import RawbleHCITransport
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

@testable import RawbleTransport

/// An ``HCIPacketReceiver`` that records what it is given, in how many calls, and whether each
/// call came on the transport's event loop.
final class RecordingReceiver: HCIPacketReceiver {
    struct Record {
        var packets: [H4Packet] = []
        var calls = 0
        var callsOffTheLoop = 0
        var ends: [TransportError] = []
        var packetsAfterTheEnd = 0
    }
    let record = Mutex(Record())
    let loop: any EventLoop

    init(loop: any EventLoop) { self.loop = loop }

    func receive(_ packets: [H4Packet]) {
        let onLoop = loop.inEventLoop
        record.withLock { record in
            record.packets += packets
            record.calls += 1
            if !onLoop { record.callsOffTheLoop += 1 }
            if !record.ends.isEmpty { record.packetsAfterTheEnd += packets.count }
        }
    }

    func transportEnded(_ error: TransportError) {
        let onLoop = loop.inEventLoop
        record.withLock { record in
            record.ends.append(error)
            if !onLoop { record.callsOffTheLoop += 1 }
        }
    }

    var snapshot: Record { record.withLock { $0 } }
}

@Suite struct PacketDeliveryTests {
    @Test func aReceiverGetsEveryPacketInOrderOnTheLoopThenTheEndOnceAndThePacketsStreamIsEmpty() async throws {
        let (_, transport, connection) = try await connectedPair()
        let loop = transport.eventLoop
        // Some packets before the receiver is chosen (read and held, or still in the socket),
        // some after, in writes of one and of many packets.
        for i in 0..<100 { connection.write(numberedPacket(i)) }
        let receiver = RecordingReceiver(loop: loop)
        #expect(transport.deliverPackets(to: receiver))
        connection.write((100..<300).flatMap(numberedPacket))
        #expect(await eventually(seconds: 10) { receiver.snapshot.packets.count == 300 })
        connection.close()
        #expect(await eventually(seconds: 10) { !receiver.snapshot.ends.isEmpty })
        let record = receiver.snapshot
        #expect(record.packets.map(\.encoded) == (0..<300).map(numberedPacket))
        #expect(record.callsOffTheLoop == 0)
        #expect(record.ends == [.closedByPeer])
        #expect(record.packetsAfterTheEnd == 0)
        #expect(try await ending(of: transport) == nil, "packets has nothing once a receiver reads")
        await transport.close()
        #expect(receiver.snapshot.ends == [.closedByPeer], "the end comes once")
    }

    @Test func closingGivesTheReceiverClosed() async throws {
        let (_, transport, connection) = try await connectedPair()
        let receiver = RecordingReceiver(loop: transport.eventLoop)
        #expect(transport.deliverPackets(to: receiver))
        connection.write(emptyEvent.encoded)
        #expect(await eventually(seconds: 10) { receiver.snapshot.packets == [emptyEvent] })
        try await within { await transport.close() }  // the hang guard: under a loaded full run (the VM tests take a core) 5 s was once too short
        #expect(await eventually(seconds: 10) { receiver.snapshot.ends == [.closed] })
        await #expect(throws: TransportError.closed) { try await transport.send(reset) }
    }

    @Test func aTransportWhosePacketsAreBeingReadRefusesAReceiver() async throws {
        let (_, transport, connection) = try await connectedPair()
        connection.write(emptyEvent.encoded)
        #expect(try await receive(1, from: transport) == [emptyEvent])
        let receiver = RecordingReceiver(loop: transport.eventLoop)
        #expect(!transport.deliverPackets(to: receiver))
        connection.write(commandComplete.encoded)
        #expect(try await receive(1, from: transport) == [commandComplete])
        #expect(receiver.snapshot.calls == 0)
        await transport.close()
    }

    @Test func aSecondReceiverIsRefused() async throws {
        let (_, transport, _) = try await connectedPair()
        let loop = transport.eventLoop
        #expect(transport.deliverPackets(to: RecordingReceiver(loop: loop)))
        #expect(!transport.deliverPackets(to: RecordingReceiver(loop: loop)))
        await transport.close()
    }
}

import Foundation
import RawbleHost
import RawbleHostCore
import RawbleKernel
import RawbleKernelHost
import RawbleStack
import RawbleTestPeers
import RawbleTestSupport
import RawbleTransport
import RawbleWire
import Synchronization
import Testing

/// ``TransportAddress/openCentral(configuration:observing:)`` end to end: Bumble's virtual
/// controller over TCP (Scripts/bumble-peer), and the typed errors of what cannot be opened.
@Suite("openCentral: a transport string to a central", .serialized)
struct OpenCentralTests {
    /// Counts the packets a tap sees.
    final class PacketCounter: HCIPacketTap {
        let count = Mutex(0)
        func observe(_ packet: H4Packet, direction: BtsnoopRecord.Direction) { count.withLock { $0 += 1 } }
    }

    @Test("tcp: the peer's string opens rawble's host, which scans and finds the strap; taps see its packets",
          .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
    func tcpFindsTheStrap() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let address = try TransportAddress(peer.transport)
        guard case .tcp = address else {
            Issue.record("the peer serves \(peer.transport), not tcp:")
            return
        }
        var configuration = Adapter.Configuration()
        configuration.logger.logLevel = .warning
        // Generous: the suites run in parallel on two cores; nothing here is about timing.
        configuration.commandTimeout = .seconds(10)
        configuration.resetTimeout = .seconds(10)
        let counter = PacketCounter()
        let central = try await address.openCentral(configuration: configuration, observing: [counter])
        #expect(central is Adapter)
        let heartRate = BluetoothUUID.heartRateService
        let strap = try #require(peer.devices.first { $0.services.contains("180D") })
        let devices = try await central.scan(ScanOptions(filter: ScanFilter(services: [heartRate])))
        let finder = Task { () async throws -> DiscoveredDevice? in
            for try await device in devices where device.advertisingData.serviceUUIDs.contains(heartRate) {
                return device
            }
            return nil
        }
        let watchdog = Task {
            try await Task.sleep(for: .seconds(15))
            finder.cancel()
        }
        let found = try await finder.value
        watchdog.cancel()
        #expect(found?.address.address == BluetoothAddress(strap.address))
        #expect(counter.count.withLock { $0 } > 0)
        await central.close()
    }

    @Test("on hciN the central's link opener carries the adapter it chose (KernelCentral.adapter reads it)")
    func kernelOpenerKnowsItsAdapter() {
        let adapter = KernelAdapterInfo(index: 1, name: "hci1", address: BluetoothAddress(0xC0B1_E000_0001),
                                        isUp: true, supportsLE: true, bus: .usb)
        let opener = KernelL2CAPOpener(adapter: adapter)
        #expect(opener.adapter == adapter)
        #expect(opener.local == adapter.address)
        #expect(KernelL2CAPOpener(local: adapter.address).adapter == nil)
    }

    @Test("tcp with nothing listening: a transport error, one line saying nothing listens")
    func nothingListens() async throws {
        let address = TransportAddress.tcp(host: "127.0.0.1", port: try LocalPort.unused())
        let error = try await #require(throws: TransportAddress.OpeningError.self) { _ = try await address.openCentral() }
        guard case .transport(.connectionRefused) = error.reason else {
            Issue.record("expected connection refused, got \(error.reason)")
            return
        }
        #expect(error.transport == address)
        #expect(error.description.hasPrefix("nothing listens at \(address):"))
    }

    @Test("unix and serial paths that do not exist: transport errors that name the path")
    func missingPaths() async throws {
        let missing = "/tmp/rawble-stack-tests-\(UUID().uuidString)"
        let unix = try await #require(throws: TransportAddress.OpeningError.self) {
            _ = try await TransportAddress.unix(path: missing).openCentral()
        }
        guard case .transport = unix.reason else { Issue.record("\(unix.reason)"); return }
        #expect(unix.description.contains("nothing listens at unix:\(missing)"))
        let serial = try await #require(throws: TransportAddress.OpeningError.self) {
            _ = try await TransportAddress.serial(path: missing, baudRate: nil).openCentral()
        }
        #expect(serial.description.contains(missing))
    }

    @Test("hciN on a kernel without Bluetooth: the kernel's typed error, with its fix",
          .enabled(if: !TestRequirements.kernelHasBluetooth, "this kernel has Bluetooth: the VM tests cover the kernel path"))
    func kernelWithoutBluetooth() async throws {
        for address in [TransportAddress.kernel(adapter: 0), .kernel(adapter: nil), .userChannel(adapter: 0)] {
            let error = try await #require(throws: TransportAddress.OpeningError.self) { _ = try await address.openCentral() }
            #expect(error.reason.kernelError == .noBluetoothInKernel, "\(address): \(error)")
            #expect(error.description.contains("modprobe bluetooth"))
        }
    }
}

extension TransportAddress.OpeningError.Reason {
    /// The kernel's error, when that step failed.
    var kernelError: KernelError? {
        if case .kernel(let error) = self { return error }
        return nil
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import RawbleTestPeers
import RawbleTestSupport

/// Whether this machine's kernel has Bluetooth sockets: these build machines have none, so the
/// kernel path is tested in the VM (Scripts/vm-test).
enum KernelSupport {
    static let hasBluetooth = TestRequirements.kernelHasBluetooth
}

/// Lets a bounded number of VM boots run at a time across every suite of this test process that
/// boots one (they run in parallel otherwise): callers wait their turn in order, without blocking
/// a thread. RAWBLE_VM_GUESTS sets how many (default 1: Scripts/test runs one test process per
/// pinned kernel, at once, so two guests share the machine's two cores).
actor VMQueue {
    static let shared = VMQueue(
        capacity: ProcessInfo.processInfo.environment["RAWBLE_VM_GUESTS"].flatMap { Int($0) }.map { min(max($0, 1), 4) } ?? 1)

    private let capacity: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Returns once the caller holds one of the VM's places; ``leave()`` hands it on.
    func enter() async {
        guard running >= capacity else {
            running += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Gives the caller's place to the next caller waiting, if any.
    func leave() {
        if waiting.isEmpty {
            running -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}

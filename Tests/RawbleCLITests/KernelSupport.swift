#if canImport(Glibc)
import Glibc
#endif
import RawbleTestSupport

/// Whether this machine's kernel has Bluetooth sockets: these build machines have none, so the
/// kernel path is tested in the VM (Scripts/vm-test).
enum KernelSupport {
    static let hasBluetooth = TestRequirements.kernelHasBluetooth
}

/// Lets one VM boot at a time across every suite of this test process that boots one (they run
/// in parallel otherwise): callers wait their turn in order, without blocking a thread.
actor VMQueue {
    static let shared = VMQueue()

    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Returns once the caller holds the VM; ``leave()`` hands it on.
    func enter() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Gives the VM to the next caller waiting, if any.
    func leave() {
        if waiting.isEmpty {
            busy = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}

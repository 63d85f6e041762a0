@testable import rawble
import RawbleHost
import RawbleHostCore
import RawbleKernel
import RawbleWire
import Testing

/// A controller the kernel owns that stops answering (the kernel logs "command tx timeout" or
/// "Unable to disable scanning: -16") is one line: the adapter, what went unanswered, and the
/// fix, power-cycling it. The VM test freezes a controller to see it end to end.
@Suite("A kernel's controller that stops answering: one line naming the fix")
struct ControllerNotAnsweringTests {
    static let adapter = KernelAdapterInfo(index: 1, name: "hci1", address: BluetoothAddress(0x00_1B_DC_0F_00_01),
                                           isUp: true, supportsLE: true, bus: .init(rawValue: 0))

    @Test("each way of going unanswered names the adapter and both ways to power-cycle it; status 75",
          arguments: [HostError.controllerNotAnswering("the kernel did not answer when asked to scan on hci1"),
                      .commandTimedOut(.leSetScanParameters, seconds: 10), .commandQueueFull])
    func powerCycleLine(error: HostError) throws {
        let line = try #require(HostSession.notAnsweringError(error, adapter: Self.adapter))
        #expect(line.status == .timeout)
        #expect(line.description.hasPrefix("hci1: the controller has stopped answering ("), "\(line)")
        if case .controllerNotAnswering(let what) = error {
            #expect(line.description.contains("(\(what))"), "\(line)")
        } else {
            #expect(line.description.contains("(\(error))"), "\(line)")
        }
        #expect(line.description.contains("bluetoothctl power off; bluetoothctl power on"), "\(line)")
        #expect(line.description.contains("sudo btmgmt --index 1 power off; sudo btmgmt --index 1 power on"), "\(line)")
        #expect(!line.description.contains("\n"))
    }

    @Test("other errors are not taken for a silent controller")
    func otherErrors() {
        #expect(HostSession.notAnsweringError(.busy("a scan is already running"), adapter: Self.adapter) == nil)
        #expect(HostSession.notAnsweringError(.connectionTimedOut(DeviceAddress(BluetoothAddress(1), type: .random), seconds: 3),
                                              adapter: Self.adapter) == nil)
    }
}

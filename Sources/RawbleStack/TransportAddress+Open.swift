#if canImport(Glibc)
import Glibc
import RawbleHCITransport
import RawbleWire
#elseif canImport(Musl)
import Musl
#endif
import RawbleHost
import RawbleKernel
import RawbleKernelHost
import RawbleTransport

extension TransportAddress {
    /// Opens the controller at this address and the central on it, ready to scan and connect:
    /// the composition `rawble` itself uses, so an embedder's program accepts the same
    /// transport strings and gets the same host.
    ///
    /// - `hciN`: the kernel's central (`KernelCentral`): rawble's host reads scans on the
    ///   adapter's raw HCI channel (a down adapter is powered on when this process may; scans
    ///   are asked of the kernel), the kernel makes the links through its L2CAP sockets. Needs
    ///   CAP_NET_RAW and CAP_NET_ADMIN. `KernelCentral.adapter` says which adapter
    ///   `.kernel(adapter: nil)` chose.
    /// - `user:hciN`, `tcp:`, `unix:`, `serial:`: rawble's own host (`Adapter`) on the HCI
    ///   user channel or an H4 byte stream; it resets and configures the controller.
    ///
    /// Close the central (`Central.close()`) when done: it stops scanning, disconnects and
    /// closes the transport.
    ///
    /// - Parameters:
    ///   - configuration: the host's settings (logger, timeouts, own address, ...). On `hciN`
    ///     the controller is the kernel's (`ControllerOwner.kernel` is set) and, unless the
    ///     configuration brings its own `ScanControl`, scans are asked of the kernel.
    ///   - taps: each sees every HCI packet this central's transport sends and receives, in
    ///     order (e.g. a `BtsnoopCaptureFile`); on `hciN` that is the raw channel's packets,
    ///     not the kernel's own traffic on the adapter.
    /// - Returns: the central: a `KernelCentral` on `hciN`, an `Adapter` otherwise.
    /// - Throws: ``OpeningError``, which says which step failed, with the typed error from
    ///   the kernel, the transport or the controller, and reads as one line with its fix.
    public func openCentral(configuration: Adapter.Configuration = Adapter.Configuration(),
                            observing taps: [any HCIPacketTap] = []) async throws(OpeningError) -> any Central {
        func tapped(_ transport: some HCITransport) -> any HCITransport {
            taps.isEmpty ? transport : CapturingTransport(transport, taps: taps)
        }
        func failure(_ error: TransportError) -> OpeningError {
            OpeningError(transport: self, reason: .transport(error))
        }
        let transport: any HCITransport
        switch self {
        case .kernel(let number):
            let opened: (transport: any HCITransport, adapter: KernelAdapterInfo)
            do {
                // Blocking (a down adapter's power-on): on a thread for it, not the cooperative pool.
                opened = try await onBlockingThread("opening \(self)") { () throws(KernelError) in
                    try KernelCentral<KernelL2CAPOpener>.openRawChannel(adapter: number.map { "hci\($0)" })
                }
            } catch {
                throw OpeningError(transport: self, reason: .kernel(error))
            }
            do {
                return try await KernelCentral<KernelL2CAPOpener>.open(rawChannel: tapped(opened.transport), adapter: opened.adapter,
                                                                       configuration: configuration)
            } catch {
                throw OpeningError(transport: self, kernelAdapter: opened.adapter, reason: .controller(error))
            }
        case .userChannel(let number):
            do {
                // The bind returns once the kernel opened the controller (its driver's set-up).
                transport = try await onBlockingThread("opening \(self)") { () throws(KernelError) in
                    try HCISocketTransport.open(adapter: number, channel: .user)
                }
            } catch {
                throw OpeningError(transport: self, reason: .kernel(error))
            }
        case let .tcp(host, port):
            do {
                transport = try await H4StreamTransport.connect(tcp: host, port: port)
            } catch {
                throw failure(error)
            }
        case .unix(let path):
            do {
                transport = try await H4StreamTransport.connect(unix: path)
            } catch {
                throw failure(error)
            }
        case let .serial(path, baudRate):
            do {
                transport = try H4StreamTransport.openSerial(path: path, baudRate: baudRate ?? Self.defaultBaudRate)
            } catch {
                throw failure(error)
            }
        }
        do {
            return try await Adapter.open(tapped(transport), configuration: configuration)
        } catch {
            throw OpeningError(transport: self, reason: .controller(error))
        }
    }

    /// Why ``openCentral(configuration:observing:)`` failed: the address, the step that failed
    /// and that step's typed error. Its description is one line with what to do.
    public struct OpeningError: Error, Sendable, CustomStringConvertible {
        /// The address that was being opened, as given (`hci (first adapter up)` stays so; the
        /// adapter chosen is `kernelAdapter`).
        public var transport: TransportAddress
        /// On `hciN`, once its adapter was chosen and opened: that adapter.
        public var kernelAdapter: KernelAdapterInfo?
        /// The step that failed, with its error.
        public var reason: Reason

        /// The step that failed.
        public enum Reason: Sendable {
            /// The kernel's sockets (`hciN`, `user:hciN`): no Bluetooth in the kernel, no such
            /// adapter, a missing capability (the group to ask for), a busy user channel (how to
            /// free it), rfkill, ...: the `KernelError` says which and what to do.
            case kernel(KernelError)
            /// The H4 byte stream (`tcp:`, `unix:`, `serial:`) did not open: nothing listens,
            /// no such device, no permission, ...
            case transport(TransportError)
            /// The transport opened but the controller failed the host's start-up: it did not
            /// answer HCI Reset (not an H4 controller, or another host drives it), refused a
            /// command, or the transport closed meanwhile.
            case controller(HostError)
        }

        /// - Parameters:
        ///   - transport: the address being opened.
        ///   - kernelAdapter: on `hciN`, the adapter once chosen.
        ///   - reason: the step that failed, with its error.
        public init(transport: TransportAddress, kernelAdapter: KernelAdapterInfo? = nil, reason: Reason) {
            self.transport = transport
            self.kernelAdapter = kernelAdapter
            self.reason = reason
        }

        /// One line with what to do: the kernel's own (e.g. the group to ask for), "nothing listens
        /// at …" for a transport nobody serves, the transport's or the controller's otherwise.
        public var description: String {
            switch reason {
            case .kernel(let error):
                return error.description
            case .transport(let error):
                switch error {
                case .connectionRefused, .ioError(ENOENT, _), .ioError(ECONNREFUSED, _):
                    return "nothing listens at \(transport): start the controller (or the program that serves it) first"
                case .notFound, .permissionDenied, .busy, .notATerminal, .unsupportedBaudRate:
                    return error.description
                default:
                    return "cannot open \(transport): \(error)"
                }
            case .controller(let error):
                if case .commandTimedOut(let opcode, _) = error, opcode == .reset {
                    return "the controller at \(transport) did not answer HCI Reset: check it is an HCI controller speaking H4 and that no other host drives it"
                }
                return "\(kernelAdapter?.name ?? transport.description): \(error)"
            }
        }
    }
}

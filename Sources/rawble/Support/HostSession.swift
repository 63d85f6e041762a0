#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@preconcurrency import Dispatch
import FoundationEssentials
import Logging
import RawbleKernel
import RawbleKernelHost
import RawbleHost
import RawbleTransport

/// What a command opened: the transport (flag or `RAWBLE_TRANSPORT`), the btsnoop capture
/// around it, and the central on top: rawble's own host on H4 and the user channel, the
/// kernel's on `hciN` (scanning on its raw channel, links through its L2CAP sockets). Every
/// failure to open is one actionable `CLIError`. Commands use only `central`, so they run on
/// any host.
struct HostSession {
    let central: any Central
    let transport: TransportSpec
    let capture: BtsnoopCaptureFile?

    static func open(_ connection: ConnectionOptions, output: OutputOptions) async throws -> HostSession {
        Logs.setUp(output)
        let spec = try connection.resolvedTransport(environment: environment())
        var kernelAdapter: KernelAdapterInfo?
        var transport: any HCITransport
        if case .kernel(let index) = spec {
            do {
                let opened = try KernelCentral<KernelL2CAPOpener>.openRawChannel(adapter: index.map { "hci\($0)" })
                transport = opened.transport
                kernelAdapter = opened.adapter
            } catch {
                throw CLIError(kernel: error)
            }
        } else {
            transport = try await openTransport(spec)
        }
        var capture: BtsnoopCaptureFile?
        if let path = connection.btsnoop {
            do {
                let file = try BtsnoopCaptureFile(path: path)
                capture = file
                transport = CapturingTransport(transport, capture: file)
            } catch {
                await transport.close()
                throw CLIError(.cannotOpen, "cannot write the btsnoop file \(path): \(error)",
                               fix: "check the directory exists and is writable")
            }
        }
        var configuration = Adapter.Configuration()
        configuration.logger = Logger(label: "rawble.host")
        do {
            if let kernelAdapter {
                if capture != nil {
                    Logger(label: "rawble.host").notice("the btsnoop capture holds what rawble sent and received on \(kernelAdapter.name)'s raw channel, not the kernel's own traffic (its L2CAP connections)")
                }
                let central = try await KernelCentral.open(
                    rawChannel: transport, opener: KernelL2CAPOpener(local: kernelAdapter.address), configuration: configuration)
                return HostSession(central: central, transport: spec, capture: capture)
            }
            let adapter = try await Adapter.open(transport, configuration: configuration)
            return HostSession(central: adapter, transport: spec, capture: capture)
        } catch {
            _ = capture?.close()
            throw cliError(error, transport: spec)
        }
    }

    /// Stops scanning, disconnects, closes the transport, then the capture (every record is
    /// already on disk; a write that failed along the way is reported here).
    func close() async {
        await central.close()
        if let failure = capture?.close() {
            Output.error("rawble: the btsnoop capture is incomplete: \(failure)")
        }
    }

    func cliError(_ error: HostError) -> CLIError {
        Self.cliError(error, transport: transport)
    }

    static func openTransport(_ spec: TransportSpec) async throws -> any HCITransport {
        do {
            switch spec {
            case .kernel:
                throw CLIError(.internalError, "the kernel's raw channel is opened by HostSession.open")
            case .userChannel(let index):
                do {
                    return try HCISocketTransport.open(adapter: UInt16(clamping: index), channel: .user)
                } catch {
                    throw CLIError(kernel: error)
                }
            case let .tcp(host, port):
                return try await H4StreamTransport.connect(tcp: host, port: port)
            case .unix(let path):
                return try await H4StreamTransport.connect(unix: path)
            case let .serial(path, baud):
                return try H4StreamTransport.openSerial(path: path, baudRate: baud ?? 115_200)
            }
        } catch let error as TransportError {
            throw cliError(error, transport: spec)
        }
    }

    static func cliError(_ error: TransportError, transport spec: TransportSpec) -> CLIError {
        switch error {
        case .connectionRefused, .ioError(ENOENT, _), .ioError(ECONNREFUSED, _):
            CLIError(.transport, "nothing listens at \(spec)",
                     fix: "start the controller first (for a simulated one: Scripts/bumble-peer)")
        case .permissionDenied:
            CLIError(.permission, error.description)
        case .notFound:
            CLIError(.cannotOpen, error.description)
        case .timedOut:
            CLIError(.timeout, "cannot open \(spec): \(error)")
        default:
            CLIError(.transport, "cannot open \(spec): \(error)")
        }
    }

    static func cliError(_ error: HostError, transport spec: TransportSpec) -> CLIError {
        switch error {
        case .commandTimedOut(let opcode, _) where opcode == .reset:
            CLIError(.timeout, "the controller at \(spec) did not answer HCI Reset",
                     fix: "check it is an HCI controller speaking H4 and that no other host drives it")
        case .commandTimedOut, .connectionTimedOut:
            CLIError(.timeout, error.description)
        case .transport(let transportError):
            CLIError(.transport, "\(spec): \(transportError)")
        case .connectionFailed, .disconnected:
            CLIError(.peerError, error.description)
        case .unsupported:
            CLIError(.unavailable, error.description)
        case .cancelled:
            CLIError(.interrupted, "interrupted")
        default:
            CLIError(.transport, error.description)
        }
    }
}

/// Runs `body` once when SIGINT or SIGTERM arrives (Ctrl-C): commands stop their work cleanly.
final class InterruptWatcher {
    private let sources: [any DispatchSourceSignal]

    init(_ body: @escaping @Sendable () -> Void) {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: body)
            source.resume()
            return source
        }
    }

    deinit {
        for source in sources { source.cancel() }
    }
}

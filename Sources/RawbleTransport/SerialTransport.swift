#if canImport(Glibc)
import Glibc
import RawbleHCITransport
#elseif canImport(Musl)
import Musl
#endif
import RawbleWire
import SystemPackage

/// H4 over a serial line (a UART controller: `/dev/ttyUSB0`, `/dev/ttyACM0`, `/dev/ttyS0`).
extension H4StreamTransport {
    /// The termios speed constant for each standard rate from 1200 to 4 000 000 bits per second.
    static let terminalSpeeds: [Int: speed_t] = [
        1200: speed_t(B1200), 1800: speed_t(B1800), 2400: speed_t(B2400), 4800: speed_t(B4800),
        9600: speed_t(B9600), 19_200: speed_t(B19200), 38_400: speed_t(B38400), 57_600: speed_t(B57600),
        115_200: speed_t(B115200), 230_400: speed_t(B230400), 460_800: speed_t(B460800),
        500_000: speed_t(B500000), 576_000: speed_t(B576000), 921_600: speed_t(B921600),
        1_000_000: speed_t(B1000000), 1_152_000: speed_t(B1152000), 1_500_000: speed_t(B1500000),
        2_000_000: speed_t(B2000000), 2_500_000: speed_t(B2500000), 3_000_000: speed_t(B3000000),
        3_500_000: speed_t(B3500000), 4_000_000: speed_t(B4000000),
    ]

    /// The baud rates ``openSerial(path:baudRate:hardwareFlowControl:writeStallTimeout:onFramingError:)``
    /// accepts, in increasing order.
    public static var supportedBaudRates: [Int] { terminalSpeeds.keys.sorted() }

    /// Opens the serial device at `path` for H4: exclusive (TIOCEXCL), raw 8N1, receiver on,
    /// modem lines ignored (CLOCAL), RTS/CTS flow control when `hardwareFlowControl`, pending
    /// bytes discarded. A send that makes no progress for `writeStallTimeout` (e.g. CTS held
    /// low by an unpowered controller) fails with `TransportError.timedOut(operation:)`.
    ///
    /// Throws `TransportError.unsupportedBaudRate(_:)`, `TransportError.notFound(path:)`,
    /// `TransportError.permissionDenied(path:)`, `TransportError.busy(path:)` or
    /// `TransportError.notATerminal(path:)` with a line saying what to do.
    public static func openSerial(
        path: String,
        baudRate: Int = 115_200,
        hardwareFlowControl: Bool = true,
        writeStallTimeout: Duration = .seconds(5),
        onFramingError: FramingErrorHandler? = nil
    ) throws(TransportError) -> H4StreamTransport {
        guard let speed = terminalSpeeds[baudRate] else { throw .unsupportedBaudRate(baudRate) }
        // Non-blocking: the open does not wait for carrier, and NIO drives the descriptor.
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(
                FilePath(path), .readWrite, options: [.init(rawValue: O_NOCTTY), .closeOnExec, .nonBlocking])
        } catch let error as Errno {
            throw openError(errno: error.rawValue, path: path)
        } catch {
            throw .ioError(errno: EIO, operation: "open \(path): \(error)")
        }
        do throws(TransportError) {
            try configure(
                fd: descriptor.rawValue, path: path, baudRate: baudRate, speed: speed,
                hardwareFlowControl: hardwareFlowControl)
        } catch {
            try? descriptor.close()
            throw error
        }
        return adoptTerminal(descriptor.rawValue, writeStall: writeStallTimeout, onFramingError: onFramingError)
    }

    /// The typed error for a failed `open(2)` of a serial device.
    private static func openError(errno code: Int32, path: String) -> TransportError {
        switch code {
        case ENOENT, ENODEV, ENXIO: .notFound(path: path)
        case EACCES, EPERM: .permissionDenied(path: path)
        case EBUSY: .busy(path: path)
        default: .ioError(errno: code, operation: "open \(path)")
        }
    }

    /// Puts the terminal in exclusive raw 8N1 mode at `speed` and discards pending bytes.
    private static func configure(
        fd: Int32, path: String, baudRate: Int, speed: speed_t, hardwareFlowControl: Bool
    ) throws(TransportError) {
        guard isatty(fd) == 1 else { throw .notATerminal(path: path) }
        if ioctl(fd, UInt(TIOCEXCL)) != 0 {
            throw errno == EBUSY ? .busy(path: path) : .ioError(errno: errno, operation: "TIOCEXCL on \(path)")
        }
        var settings = termios()
        guard tcgetattr(fd, &settings) == 0 else { throw .ioError(errno: errno, operation: "tcgetattr on \(path)") }
        cfmakeraw(&settings)
        settings.c_cflag &= ~(tcflag_t(CSIZE | PARENB | CSTOPB) | tcflag_t(CRTSCTS))
        settings.c_cflag |= tcflag_t(CS8 | CLOCAL | CREAD)
        if hardwareFlowControl { settings.c_cflag |= tcflag_t(CRTSCTS) }
        settings.c_iflag &= ~tcflag_t(IXON | IXOFF | IXANY)
        withUnsafeMutableBytes(of: &settings.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard cfsetispeed(&settings, speed) == 0, cfsetospeed(&settings, speed) == 0 else {
            throw .unsupportedBaudRate(baudRate)
        }
        guard tcsetattr(fd, TCSANOW, &settings) == 0 else {
            throw errno == EINVAL ? .unsupportedBaudRate(baudRate) : .ioError(errno: errno, operation: "tcsetattr on \(path)")
        }
        guard tcflush(fd, TCIOFLUSH) == 0 else { throw .ioError(errno: errno, operation: "tcflush on \(path)") }
    }
}

import RawbleWire

/// Where the stack reaches a controller, as a person writes it on a command line or in a
/// configuration file: `hci0`, `user:hci0`, `tcp:HOST:PORT`, `unix:PATH`, `serial:PATH[:BAUD]`
/// (the strings `rawble --transport` and `RAWBLE_TRANSPORT` take).
///
/// Parse one with ``init(_:)`` and open the central it leads to with
/// ``openCentral(configuration:observing:)``:
///
/// ```swift
/// let central = try await TransportAddress("tcp:127.0.0.1:9000").openCentral()
/// ```
///
/// A value type, so a program can also build one in code (`.kernel(adapter: 0)`) and keep it.
public enum TransportAddress: Hashable, Sendable, CustomStringConvertible {
    /// `hciN`: the Linux kernel's adapter N, which the kernel keeps managing: rawble's host scans
    /// on its raw HCI channel and the kernel makes the links (its L2CAP sockets), so bluetoothd
    /// and other programs go on using the adapter. `nil`: the first adapter that is up, else the
    /// first (``description`` then reads `hci (first adapter up)`, which is not parsed back).
    case kernel(adapter: UInt16?)
    /// `user:hciN`: the kernel's HCI user channel of adapter N: the whole controller for
    /// rawble's own host, which nothing else may use meanwhile (the adapter must be down).
    case userChannel(adapter: UInt16)
    /// `tcp:HOST:PORT`: H4 over TCP, e.g. a virtual controller (Bumble's) or a controller a
    /// bridge serves. An IPv6 host is written in brackets: `tcp:[::1]:9000`.
    case tcp(host: String, port: UInt16)
    /// `unix:PATH`: H4 over a unix stream socket.
    case unix(path: String)
    /// `serial:PATH[:BAUD]`: H4 over a serial line (a UART controller, a USB dongle running
    /// an HCI UART firmware); `nil` baud rate: ``defaultBaudRate``.
    case serial(path: String, baudRate: Int?)

    /// The accepted forms, for messages that say what to write instead.
    public static let accepted = "hciN, user:hciN, tcp:HOST:PORT, unix:PATH or serial:PATH[:BAUD]"

    /// The serial line's speed when `serial:PATH` names none (bits per second).
    public static let defaultBaudRate = 115_200

    /// Adapter numbers accepted in `hciN` (the kernel numbers its adapters from 0).
    public static let adapterNumbers: ClosedRange<UInt16> = 0...1023

    /// Parses `text` (`hci0`, `user:hci1`, `tcp:127.0.0.1:9000`, `tcp:[::1]:9000`,
    /// `unix:/tmp/controller.sock`, `serial:/dev/ttyUSB0:1000000`).
    /// - Throws: ``ParseError``, whose ``ParseError/problem`` says what was wrong and whose
    ///   description says what is accepted instead.
    public init(_ text: String) throws(ParseError) {
        func fail(_ problem: ParseError.Problem) -> ParseError { ParseError(text: text, problem: problem) }
        guard !text.isEmpty else { throw fail(.empty) }
        if text.hasPrefix("hci") {
            guard let number = Self.adapterNumber(text[...]) else { throw fail(.invalidAdapter(text)) }
            self = .kernel(adapter: number)
            return
        }
        guard let colon = text.firstIndex(of: ":") else { throw fail(.unknownKind(text)) }
        let kind = text[..<colon]
        let rest = text[text.index(after: colon)...]
        switch kind {
        case "user":
            guard let number = Self.adapterNumber(rest) else { throw fail(.invalidAdapter(String(rest))) }
            self = .userChannel(adapter: number)
        case "tcp":
            guard let portColon = rest.lastIndex(of: ":") else { throw fail(.missingPort) }
            var host = rest[..<portColon]
            if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            guard !host.isEmpty else { throw fail(.missingHost) }
            let portText = rest[rest.index(after: portColon)...]
            guard !portText.isEmpty else { throw fail(.missingPort) }
            guard let port = UInt16(portText), port > 0 else { throw fail(.invalidPort(String(portText))) }
            self = .tcp(host: String(host), port: port)
        case "unix":
            guard !rest.isEmpty else { throw fail(.missingPath) }
            self = .unix(path: String(rest))
        case "serial":
            guard !rest.isEmpty else { throw fail(.missingPath) }
            // A last field of digits (or a sign and digits) is the rate; anything else is the path's.
            if let colon = rest.lastIndex(of: ":"), let baudRate = Int(rest[rest.index(after: colon)...]) {
                let path = rest[..<colon]
                guard !path.isEmpty else { throw fail(.missingPath) }
                guard baudRate > 0 else { throw fail(.invalidBaudRate(String(rest[rest.index(after: colon)...]))) }
                self = .serial(path: String(path), baudRate: baudRate)
            } else {
                self = .serial(path: String(rest), baudRate: nil)
            }
        default:
            throw fail(.unknownKind(String(kind)))
        }
    }

    /// The number N of `hciN`, or `nil` when `text` is not that (or N is out of range).
    private static func adapterNumber(_ text: Substring) -> UInt16? {
        guard text.hasPrefix("hci"), let number = UInt16(text.dropFirst(3)), adapterNumbers.contains(number) else {
            return nil
        }
        return number
    }

    /// The address as written, which ``init(_:)`` parses back (except the default adapter,
    /// `kernel(adapter:)` with `nil`: `hci (first adapter up)`).
    public var description: String {
        switch self {
        case .kernel(nil): "hci (first adapter up)"
        case .kernel(let number?): "hci\(number)"
        case .userChannel(let number): "user:hci\(number)"
        case let .tcp(host, port): host.contains(":") ? "tcp:[\(host)]:\(port)" : "tcp:\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        case let .serial(path, baudRate): baudRate.map { "serial:\(path):\($0)" } ?? "serial:\(path)"
        }
    }

    /// Why a string is not a ``TransportAddress``: the string and what was wrong with it. Its
    /// description is one line that names the problem and the form to write instead.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The string that was parsed.
        public var text: String
        /// What was wrong with it.
        public var problem: Problem

        /// What was wrong with a transport string.
        public enum Problem: Hashable, Sendable {
            /// Nothing was given.
            case empty
            /// Not a kind of transport there is (the part before the first `:`, or the whole
            /// string without one): neither `hciN` nor `user:`, `tcp:`, `unix:`, `serial:`.
            case unknownKind(String)
            /// Where an adapter was expected (`hciN`, `user:hciN`), this is not one, or its
            /// number is out of ``TransportAddress/adapterNumbers``.
            case invalidAdapter(String)
            /// `tcp:` without a host before the port.
            case missingHost
            /// `tcp:` without a port.
            case missingPort
            /// `tcp:`'s port is not a number from 1 to 65535.
            case invalidPort(String)
            /// `unix:` or `serial:` without a path.
            case missingPath
            /// `serial:`'s baud rate is zero or negative.
            case invalidBaudRate(String)
        }

        /// - Parameters:
        ///   - text: the string that was parsed.
        ///   - problem: what was wrong with it.
        public init(text: String, problem: Problem) {
            self.text = text
            self.problem = problem
        }

        /// One line: the problem, then the form to write instead (`tcp:localhost has no port:
        /// write tcp:HOST:PORT, e.g. tcp:127.0.0.1:9000 …`).
        public var description: String {
            switch problem {
            case .empty:
                "no transport given: write \(TransportAddress.accepted)"
            case .unknownKind(let kind):
                "\(kind) is not a kind of transport: write \(TransportAddress.accepted)"
            case .invalidAdapter(let adapter):
                "\(adapter) is not an adapter: name one as hciN, N from \(TransportAddress.adapterNumbers.lowerBound) to \(TransportAddress.adapterNumbers.upperBound) (hci0 is the first)"
            case .missingHost:
                "\(text) has no host: write tcp:HOST:PORT, e.g. tcp:127.0.0.1:9000 (an IPv6 host in brackets: tcp:[::1]:9000)"
            case .missingPort:
                "\(text) has no port: write tcp:HOST:PORT, e.g. tcp:127.0.0.1:9000 (an IPv6 host in brackets: tcp:[::1]:9000)"
            case .invalidPort(let port):
                "\(port) is not a TCP port: a port is 1 to 65535, e.g. tcp:127.0.0.1:9000"
            case .missingPath:
                "\(text) has no path: write unix:PATH or serial:PATH[:BAUD], e.g. serial:/dev/ttyUSB0:1000000"
            case .invalidBaudRate(let rate):
                "\(rate) is not a baud rate: give bits per second, e.g. serial:/dev/ttyUSB0:1000000 (default \(TransportAddress.defaultBaudRate))"
            }
        }
    }
}

import ArgumentParser
import RawbleAnalysis
import RawbleLiveDisplay
import Synchronization

/// `--serve [HOST:]PORT` (`hr`): a live display of the straps in the browser.
struct ServeOptions: ParsableArguments {
    @Option(name: .customLong("serve"), help: ArgumentHelp(
        "Serve a live display of the straps to a browser at [HOST:]PORT: loopback unless a host is named (0.0.0.0: every interface); port 0 takes a free one. The URL is printed on stderr.",
        valueName: "[host:]port"))
    var address: String?

    func validate() throws {
        if let address, ServeAddress(address) == nil {
            throw ValidationError("--serve takes [HOST:]PORT with a port from 0 to 65535 (8080, 0.0.0.0:8080, [::1]:8080), not “\(address)”")
        }
    }

    /// Starts the server when `--serve` was given, and says on stderr where it is (and, for a
    /// host other than loopback, that other machines can see it).
    func start(zones: HeartRateZones?) async throws -> LiveDisplay? {
        guard let address, let parsed = ServeAddress(address) else { return nil }
        let server: LiveDisplayServer
        do {
            server = try await LiveDisplayServer.start(.init(host: parsed.host, port: parsed.port))
        } catch {
            throw CLIError(.unavailable, "cannot serve the live display at \(address) (\(error))",
                           fix: "is the port taken or the address not this machine's? Name another (--serve 0 takes any free port)")
        }
        if !server.configuration.isLoopback {
            Output.error("rawble: the live display listens on \(parsed.host) port \(server.port): other machines that reach it see the heart rates (--serve names that host)")
        }
        Output.error("rawble: serving the live display at \(server.url)")
        return LiveDisplay(server: server, zones: zones)
    }
}

/// `--serve`'s address: `PORT` (on 127.0.0.1), `HOST:PORT`, or `[IPv6]:PORT`.
struct ServeAddress: Equatable {
    var host: String
    var port: Int

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    init?(_ text: String) {
        var host = "127.0.0.1"
        var portText = Substring(text)
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = String(text[text.index(after: text.startIndex)..<close])
            portText = text[text.index(close, offsetBy: 2)...]
        } else if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            // An IPv6 address goes in brackets: its colons are not the port's.
            guard !host.contains(":") else { return nil }
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, portText.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(portText), (0...65_535).contains(port) else { return nil }
        self.host = host
        self.port = port
    }
}

/// The running live display of one `hr` run: a ``LiveDisplayFeed`` per strap.
struct LiveDisplay: Sendable {
    let server: LiveDisplayServer
    let zones: HeartRateZones?

    /// A strap's feed (its tile appears once it connects).
    func feed() -> LiveDisplayFeed { LiveDisplayFeed(server: server, zones: zones) }

    func close() async { await server.close() }
}

/// One strap's tile: what its ``HeartRateSession`` tells the live display. Keyed by the
/// strap's address, known once it connects; before that the calls are dropped.
final class LiveDisplayFeed: Sendable {
    private let server: LiveDisplayServer
    private let zones: HeartRateZones?
    /// The strap's address and link state once it connected.
    private let strap = Mutex<(id: String, link: LinkState)?>(nil)

    init(server: LiveDisplayServer, zones: HeartRateZones?) {
        self.server = server
        self.zones = zones
    }

    /// The link is up: the tile shows the strap's name and battery.
    func connected(_ address: String, name: String?, battery: Int?) {
        strap.withLock { $0 = (address, .connected) }
        server.publish(StrapUpdate(id: address, name: name, battery: battery, link: .connected))
    }

    /// A measurement at `time` (Unix microseconds, the session's clock): its bpm, and its zone
    /// when zones were asked for (`--max-hr`, `--age`).
    func measured(bpm: UInt16, at time: Int64) {
        guard let id = strap.withLock({ $0?.id }) else { return }
        server.publish(StrapUpdate(id: id, bpm: Int(bpm), time: Double(time) / 1e6, zone: zones?.zone(for: Double(bpm))))
    }

    /// The link dropped: `reconnecting` when the strap is looked for again, else `lost`.
    func linkDropped(reconnecting: Bool) {
        set(reconnecting ? .reconnecting : .lost)
    }

    /// The strap's run is over: a tile still connected says `ended` (a dropped one keeps its state).
    func ended() {
        guard strap.withLock({ $0?.link }) == .connected else { return }
        set(.ended)
    }

    private func set(_ link: LinkState) {
        guard let id = strap.withLock({ strap -> String? in
            strap?.link = link
            return strap?.id
        }) else { return }
        server.publish(StrapUpdate(id: id, link: link))
    }
}

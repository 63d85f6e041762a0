import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// The live display's HTTP server: `GET /` is the page (``LiveDisplayPage``), `GET /events` a
/// stream of Server-Sent Events (a snapshot of every strap on connect, then one event per
/// ``StrapUpdate``); anything else is an HTTP error and the connection closed.
///
/// Bounded with any client: at most ``Configuration/maxClients`` event streams (the next gets
/// 503) and ``Configuration/maxConnections`` connections; a request larger than
/// ``Configuration/requestLimit`` gets 431, one that does not arrive within
/// ``Configuration/requestTimeout`` gets 408; an event stream whose client does not read (more
/// than ``Configuration/clientBufferLimit`` unsent) is closed, and its page reconnects to a fresh
/// snapshot. ``publish(_:)`` never waits for a client.
public final class LiveDisplayServer: Sendable {
    /// Where the server listens and the bounds it keeps.
    public struct Configuration: Sendable {
        /// The address to listen on: loopback by default; `0.0.0.0` for every interface.
        public var host: String
        /// The port to listen on; 0 takes any free port (see ``LiveDisplayServer/port``).
        public var port: Int
        /// The most event streams at once; the next `GET /events` gets 503.
        public var maxClients: Int
        /// The most connections at once (streams and requests still arriving); the next gets 503.
        public var maxConnections: Int
        /// The most bytes a connection may send (its request line and headers): beyond, 431.
        public var requestLimit: Int
        /// How long a connection may take to send its request: beyond, 408 and closed.
        public var requestTimeout: TimeAmount
        /// The most bytes waiting to be sent to one event stream, in rawble and in the kernel's
        /// socket buffer each; a client that falls further behind is closed (its page
        /// reconnects and gets a fresh snapshot).
        public var clientBufferLimit: Int
        /// How often an idle event stream gets a comment line, so a gone client is noticed.
        public var keepAliveInterval: TimeAmount

        /// The bounds above, listening on `host`:`port` (loopback, any free port by default).
        public init(host: String = "127.0.0.1", port: Int = 0, maxClients: Int = 64, maxConnections: Int = 128,
                    requestLimit: Int = 16 * 1024, requestTimeout: TimeAmount = .seconds(10),
                    clientBufferLimit: Int = 64 * 1024, keepAliveInterval: TimeAmount = .seconds(15)) {
            self.host = host
            self.port = port
            self.maxClients = maxClients
            self.maxConnections = maxConnections
            self.requestLimit = requestLimit
            self.requestTimeout = requestTimeout
            self.clientBufferLimit = clientBufferLimit
            self.keepAliveInterval = keepAliveInterval
        }

        /// Whether ``host`` is a loopback address (only pages on this machine can connect).
        public var isLoopback: Bool {
            host == "localhost" || host == "::1" || host.hasPrefix("127.")
        }
    }

    private let channel: any Channel
    let hub: LiveDisplayHub
    private let keepAlive: RepeatedTask
    /// The address the server listens on.
    public let localAddress: SocketAddress
    /// The configuration it was started with.
    public let configuration: Configuration

    private init(channel: any Channel, hub: LiveDisplayHub, keepAlive: RepeatedTask, configuration: Configuration) {
        self.channel = channel
        self.hub = hub
        self.keepAlive = keepAlive
        self.configuration = configuration
        localAddress = channel.localAddress!
    }

    /// The port it listens on (the one taken when the configuration asked for 0).
    public var port: Int { localAddress.port ?? 0 }

    /// The page's address, as a person opens it: `http://HOST:PORT/` (the listening address;
    /// for `0.0.0.0`, this machine's loopback address).
    public var url: String {
        var host = configuration.host
        if host == "0.0.0.0" { host = "127.0.0.1" }
        if host == "::" { host = "::1" }
        if host.contains(":") { host = "[\(host)]" }
        return "http://\(host):\(port)/"
    }

    /// Starts listening. Throws NIO's error when the address cannot be bound (a port in use,
    /// an address not on this machine).
    public static func start(_ configuration: Configuration = Configuration(),
                             group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> LiveDisplayServer {
        let hub = LiveDisplayHub(configuration: configuration)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // The kernel's buffer for a client is bounded as well (not grown to megabytes by
            // autotuning): what a client that does not read holds is twice the limit at most.
            .childChannelOption(.socketOption(.so_sndbuf), value: SocketOptionValue(configuration.clientBufferLimit))
            .childChannelOption(.writeBufferWaterMark,
                                value: .init(low: configuration.clientBufferLimit / 2, high: configuration.clientBufferLimit))
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handlers: [any ChannelHandler] = [
                        RequestLimitHandler(limit: configuration.requestLimit),
                        ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)),
                        HTTPResponseEncoder(),
                        IdleStateHandler(readTimeout: configuration.requestTimeout),
                        LiveDisplayHTTPHandler(hub: hub),
                    ]
                    try channel.pipeline.syncOperations.addHandlers(handlers)
                }
            }
            .bind(host: configuration.host, port: configuration.port).get()
        hub.listening(on: channel.localAddress?.port ?? configuration.port)
        let keepAlive = channel.eventLoop.scheduleRepeatedTask(initialDelay: configuration.keepAliveInterval,
                                                               delay: configuration.keepAliveInterval) { _ in
            hub.broadcast(": keep-alive\n\n")
        }
        return LiveDisplayServer(channel: channel, hub: hub, keepAlive: keepAlive, configuration: configuration)
    }

    /// Merges `update` into its strap's tile and sends it to every page; returns at once.
    public func publish(_ update: StrapUpdate) {
        hub.publish(update)
    }

    /// How many event streams (pages) are connected now.
    public var clientCount: Int { hub.clientCount }

    /// Stops listening and closes every connection.
    public func close() async {
        keepAlive.cancel()
        try? await channel.close()
        await hub.closeAll()
    }
}

/// The state every connection shares: the model, and the event streams it fans out to. Each
/// stream's writes are handed to its event loop in the order the hub made them (under its
/// lock), so a page sees its snapshot, then every update after it, in order.
final class LiveDisplayHub: Sendable {
    private struct State {
        var model = LiveDisplayModel()
        var clients: [ObjectIdentifier: any Channel] = [:]
        var connections = 0
        /// The `Host` headers a loopback server answers (`nil`: any; set once listening).
        var allowedHosts: Set<String>?
    }

    private let state = Mutex(State())
    let configuration: LiveDisplayServer.Configuration

    init(configuration: LiveDisplayServer.Configuration) {
        self.configuration = configuration
    }

    func listening(on port: Int) {
        guard configuration.isLoopback else { return }
        let hosts = ["127.0.0.1", "localhost", "[::1]", configuration.host].map { "\($0):\(port)" }
        state.withLock { $0.allowedHosts = Set(hosts) }
    }

    /// Whether a request naming `host` (its `Host` header) is answered: on a loopback server
    /// only this machine's names for it (a page of another site, rebound by DNS to 127.0.0.1,
    /// names its own host and is refused).
    func accepts(host: String?) -> Bool {
        guard let allowed = state.withLock({ $0.allowedHosts }) else { return true }
        guard let host else { return false }
        return allowed.contains(host.lowercased())
    }

    var clientCount: Int { state.withLock { $0.clients.count } }

    /// A connection opened: `false` when there are ``LiveDisplayServer/Configuration/maxConnections`` already.
    func open() -> Bool {
        state.withLock { state in
            guard state.connections < configuration.maxConnections else { return false }
            state.connections += 1
            return true
        }
    }

    func closed(_ channel: any Channel, counted: Bool) {
        state.withLock { state in
            if counted { state.connections -= 1 }
            state.clients[ObjectIdentifier(channel)] = nil
        }
    }

    /// Adds `channel` as an event stream and sends it the snapshot: `false` when there are
    /// ``LiveDisplayServer/Configuration/maxClients`` already.
    func subscribe(_ channel: any Channel) -> Bool {
        state.withLock { state in
            guard state.clients.count < configuration.maxClients else { return false }
            state.clients[ObjectIdentifier(channel)] = channel
            send("retry: 1000\n\n" + state.model.snapshot(), to: channel)
            return true
        }
    }

    func publish(_ update: StrapUpdate) {
        state.withLock { state in
            guard let event = state.model.apply(update) else { return }
            for channel in state.clients.values { send(event, to: channel) }
        }
    }

    func broadcast(_ text: String) {
        state.withLock { state in
            for channel in state.clients.values { send(text, to: channel) }
        }
    }

    /// Hands `text` to `channel`'s event loop (called under the lock: the order is the hub's);
    /// there, a client that has ``LiveDisplayServer/Configuration/clientBufferLimit`` unsent is
    /// closed instead.
    private func send(_ text: String, to channel: any Channel) {
        channel.eventLoop.execute { [self] in
            guard channel.isActive else { return }
            guard channel.isWritable else {
                drop(channel)
                return
            }
            let buffer = channel.allocator.buffer(string: text)
            channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
        }
    }

    /// A client that does not keep up: out of the fan-out at once, then closed.
    private func drop(_ channel: any Channel) {
        state.withLock { _ = $0.clients.removeValue(forKey: ObjectIdentifier(channel)) }
        channel.close(promise: nil)
    }

    /// Waits until every write handed to a client's event loop so far has been made (each loop
    /// runs its tasks in order): a test's deterministic point to look at the clients.
    func settle() async {
        let loops = state.withLock { state in state.clients.values.map(\.eventLoop) }
        for loop in loops { try? await loop.submit {}.get() }
    }

    func closeAll() async {
        let channels = state.withLock { state in
            let all = Array(state.clients.values)
            state.clients = [:]
            return all
        }
        for channel in channels { try? await channel.close() }
    }
}

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
/// ``Configuration/requestTimeout`` gets 408; an event stream whose client does not keep up
/// (more than ``Configuration/clientBufferLimit`` unsent) skips updates until it has caught up,
/// then gets a fresh snapshot, and is closed if it stays behind (its page reconnects).
/// ``publish(_:)`` never waits for a client.
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
        /// socket buffer each; a client further behind skips the updates until it has caught
        /// up, then gets a fresh snapshot (one still behind after two keep-alive intervals is
        /// closed: its page reconnects).
        public var clientBufferLimit: Int
        /// How often each event stream gets a comment line, so a gone client is noticed; a
        /// client behind for two of these is closed.
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
            hub.keepAliveTick()
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
///
/// A stream whose client does not keep up (its channel not writable: more than
/// ``LiveDisplayServer/Configuration/clientBufferLimit`` unsent) skips the updates until it has
/// caught up, then gets a fresh snapshot; one still behind at two keep-alive ticks in a row
/// is closed. What a client holds is bounded by its buffers and one snapshot.
final class LiveDisplayHub: Sendable {
    private struct Client {
        let channel: any Channel
        /// Updates were skipped: it gets a snapshot once its channel is writable again.
        var behind = false
        /// Keep-alive ticks it has been behind at, in a row.
        var ticksBehind = 0
    }

    private struct State {
        var model = LiveDisplayModel()
        var clients: [ObjectIdentifier: Client] = [:]
        /// Every connection open (event streams and requests), to close them all at the end.
        var connections: [ObjectIdentifier: any Channel] = [:]
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

    /// How many event streams skip updates now (behind).
    var behindCount: Int { state.withLock { $0.clients.values.filter(\.behind).count } }

    /// A connection opened: `false` when there are ``LiveDisplayServer/Configuration/maxConnections`` already.
    func open(_ channel: any Channel) -> Bool {
        state.withLock { state in
            guard state.connections.count < configuration.maxConnections else { return false }
            state.connections[ObjectIdentifier(channel)] = channel
            return true
        }
    }

    func closed(_ channel: any Channel) {
        state.withLock { state in
            state.connections[ObjectIdentifier(channel)] = nil
            state.clients[ObjectIdentifier(channel)] = nil
        }
    }

    /// Adds `channel` as an event stream and sends it the snapshot: `false` when there are
    /// ``LiveDisplayServer/Configuration/maxClients`` already.
    func subscribe(_ channel: any Channel) -> Bool {
        state.withLock { state in
            guard state.clients.count < configuration.maxClients else { return false }
            state.clients[ObjectIdentifier(channel)] = Client(channel: channel)
            send("retry: 1000\n\n" + state.model.snapshot(), to: channel)
            return true
        }
    }

    func publish(_ update: StrapUpdate) {
        state.withLock { state in
            guard let event = state.model.apply(update) else { return }
            for client in state.clients.values where !client.behind { send(event, to: client.channel) }
        }
    }

    /// Every keep-alive interval: a comment line to each stream (so a gone client is noticed);
    /// a stream behind at this tick and the one before is closed.
    func keepAliveTick() {
        let stuck = state.withLock { state -> [any Channel] in
            var stuck: [any Channel] = []
            for (id, var client) in state.clients {
                if client.behind {
                    client.ticksBehind += 1
                    if client.ticksBehind >= 2 {
                        stuck.append(client.channel)
                        state.clients[id] = nil
                        continue
                    }
                    state.clients[id] = client
                } else {
                    send(": keep-alive\n\n", to: client.channel)
                }
            }
            return stuck
        }
        for channel in stuck { channel.close(promise: nil) }
    }

    /// Hands `text` to `channel`'s event loop (called under the lock: the order is the hub's);
    /// there, a client whose channel is not writable (too far behind) skips it instead.
    private func send(_ text: String, to channel: any Channel) {
        channel.eventLoop.execute { [self] in
            guard channel.isActive else { return }
            guard channel.isWritable else {
                state.withLock { $0.clients[ObjectIdentifier(channel)]?.behind = true }
                return
            }
            let buffer = channel.allocator.buffer(string: text)
            channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
        }
    }

    /// `channel` is writable again (its client read what was queued): if it skipped updates, a
    /// fresh snapshot, then the updates after it.
    func caughtUp(_ channel: any Channel) {
        state.withLock { state in
            let id = ObjectIdentifier(channel)
            guard state.clients[id]?.behind == true else { return }
            state.clients[id]?.behind = false
            state.clients[id]?.ticksBehind = 0
            send(state.model.snapshot(), to: channel)
        }
    }

    /// Waits until every write handed to a client's event loop so far has been made (each loop
    /// runs its tasks in order): a test's deterministic point to look at the clients.
    func settle() async {
        let loops = state.withLock { state in state.clients.values.map(\.channel.eventLoop) }
        for loop in loops { try? await loop.submit {}.get() }
    }

    /// Closes every connection (the server stopped).
    func closeAll() async {
        let channels = state.withLock { state in
            let all = Array(state.connections.values)
            state.clients = [:]
            state.connections = [:]
            return all
        }
        for channel in channels { try? await channel.close() }
    }
}

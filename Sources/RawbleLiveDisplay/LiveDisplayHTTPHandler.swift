import NIOCore
import NIOHTTP1

/// One connection's request: the page, the event stream, or an HTTP error and the connection
/// closed (a request that does not parse: 400; too large: 431; not in time: 408; not GET: 405;
/// another path: 404; a `Host` a loopback server does not answer: 421; too many: 503).
final class LiveDisplayHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private enum Phase {
        /// No request yet.
        case waiting
        /// Answered; the connection closes once the answer is written.
        case answered
        /// An event stream: the hub writes to it.
        case streaming
    }

    private let hub: LiveDisplayHub
    private var phase = Phase.waiting

    init(hub: LiveDisplayHub) {
        self.hub = hub
    }

    func channelActive(context: ChannelHandlerContext) {
        if !hub.open(context.channel) { answer(context, .serviceUnavailable, "Too many connections.") }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        hub.closed(context.channel)
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if case .streaming = phase, context.channel.isWritable { hub.caughtUp(context.channel) }
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let request) = unwrapInboundIn(data), case .waiting = phase else { return }
        guard request.method == .GET else {
            answer(context, .methodNotAllowed, "Only GET is served.", extra: [("Allow", "GET")])
            return
        }
        guard hub.accepts(host: request.headers.first(name: "host")) else {
            answer(context, .misdirectedRequest, "This server answers its own address only.")
            return
        }
        let path = request.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        switch path {
        case "/", "/index.html":
            answer(context, .ok, LiveDisplayPage.html, type: "text/html; charset=utf-8", extra: [
                ("Content-Security-Policy",
                 "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
            ])
        case "/events":
            guard hub.subscribe(context.channel) else {
                answer(context, .serviceUnavailable, "Too many live displays are open: close one and reload.",
                       extra: [("Retry-After", "5")])
                return
            }
            phase = .streaming
            var headers = Self.commonHeaders
            headers.add(name: "Content-Type", value: "text/event-stream; charset=utf-8")
            // The head goes first: the hub's first write (the snapshot) is queued on this
            // loop behind this one.
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))),
                                  promise: nil)
        default:
            answer(context, .notFound, "Not found: the live display is at /.")
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard case .waiting = phase else {
            context.close(promise: nil)
            return
        }
        switch error {
        case is RequestLimitHandler.TooLarge, HTTPParserError.headerOverflow:
            answer(context, .requestHeaderFieldsTooLarge, "The request is too large.")
        case is HTTPParserError:
            answer(context, .badRequest, "The request does not parse as HTTP/1.1.")
        default:
            context.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case IdleStateHandler.IdleStateEvent.read = event {
            // Only a connection that has not asked yet is late: an event stream reads nothing.
            if case .waiting = phase { answer(context, .requestTimeout, "No request arrived in time.") }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    private static let commonHeaders: HTTPHeaders = [
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    ]

    /// Writes a whole response (`body` as `type`), then closes the connection.
    private func answer(_ context: ChannelHandlerContext, _ status: HTTPResponseStatus, _ body: String,
                        type: String = "text/plain; charset=utf-8", extra: [(String, String)] = []) {
        guard case .waiting = phase else { return }
        phase = .answered
        let bytes = context.channel.allocator.buffer(string: status == .ok ? body : body + "\n")
        var headers = Self.commonHeaders
        headers.add(name: "Content-Type", value: type)
        headers.add(name: "Content-Length", value: "\(bytes.readableBytes)")
        headers.add(name: "Connection", value: "close")
        for (name, value) in extra { headers.add(name: name, value: value) }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(bytes))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}

/// Counts the bytes a connection sends: past `limit` the rest is not read and the handler
/// after it gets ``TooLarge`` (431). Each connection carries one request (every answer closes
/// it; an event stream sends nothing more), so this bounds its request line and headers.
final class RequestLimitHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    struct TooLarge: Error {}

    private let limit: Int
    private var received = 0
    private var exceeded = false

    init(limit: Int) {
        self.limit = limit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !exceeded else { return }
        received += unwrapInboundIn(data).readableBytes
        guard received <= limit else {
            exceeded = true
            context.fireErrorCaught(TooLarge())
            return
        }
        context.fireChannelRead(data)
    }
}

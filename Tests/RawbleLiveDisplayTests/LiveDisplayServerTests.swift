import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
@testable import RawbleLiveDisplay
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// The live display's server on real sockets on 127.0.0.1: what a browser gets, and what
/// garbage, slow and too many clients get.
@Suite struct LiveDisplayServerTests {
    /// Runs `body` against a fresh server (any free loopback port), closed afterwards.
    static func withServer<T: Sendable>(_ configuration: LiveDisplayServer.Configuration = .init(),
                                        _ body: (LiveDisplayServer) async throws -> T) async throws -> T {
        let server = try await LiveDisplayServer.start(configuration)
        do {
            let result = try await body(server)
            await server.close()
            return result
        } catch {
            await server.close()
            throw error
        }
    }

    /// A request that is not what the server serves, and the status it gets.
    struct BadRequest: Sendable, CustomTestStringConvertible {
        var name: String
        var request: @Sendable (_ port: Int) -> String
        var status: Int
        var testDescription: String { "\(name) → \(status)" }
    }

    static let badRequests: [BadRequest] = [
        BadRequest(name: "a request line that is not HTTP", request: { _ in "HELLO THERE\r\n\r\n" }, status: 400),
        BadRequest(name: "binary garbage", request: { _ in String(decoding: [0, 1, 2, 0xFF, 0xFE, 13, 10, 13, 10], as: UTF8.self) },
                   status: 400),
        BadRequest(name: "headers past the request limit", request: { port in
            "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Big: \(String(repeating: "a", count: 20_000))\r\n\r\n"
        }, status: 431),
        BadRequest(name: "an unknown path", request: { port in "GET /admin HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n" }, status: 404),
        BadRequest(name: "POST", request: { port in
            "POST /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: 5\r\n\r\nhello"
        }, status: 405),
        BadRequest(name: "HEAD", request: { port in "HEAD / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n" }, status: 405),
        BadRequest(name: "another site's Host on the loopback server (DNS rebinding)", request: { _ in
            "GET /events HTTP/1.1\r\nHost: attacker.example\r\n\r\n"
        }, status: 421),
        BadRequest(name: "no Host", request: { _ in "GET / HTTP/1.0\r\n\r\n" }, status: 421),
    ]

    @Test("garbage gets an HTTP error and the connection closed, nothing else", arguments: badRequests)
    func badInput(_ bad: BadRequest) async throws {
        try await Self.withServer { server in
            let port = server.port
            let client = try await onOwnThread {
                let client = try RawHTTPClient(port: port)
                client.send(bad.request(port))
                try client.readToClose()
                return client.text
            }
            #expect(client.hasPrefix("HTTP/1.1 \(bad.status) "), "\(client.prefix(200))")
            #expect(client.lowercased().contains("connection: close"))
            #expect(!client.contains("event:"), "no event stream")
            #expect(server.clientCount == 0)
        }
    }

    @Test("a connection that sends nothing gets 408 after the request timeout and is closed")
    func idleConnection() async throws {
        try await Self.withServer(.init(requestTimeout: .milliseconds(200))) { server in
            let port = server.port
            let text = try await onOwnThread {
                let client = try RawHTTPClient(port: port)
                try client.readToClose()
                return client.text
            }
            #expect(text.hasPrefix("HTTP/1.1 408 "), "\(text)")
        }
    }

    @Test("GET / is the page: HTML with its script and style inline, nothing fetched from elsewhere, a CSP that says so")
    func page() async throws {
        try await Self.withServer { server in
            let port = server.port
            let client = try await onOwnThread {
                let client = try RawHTTPClient(port: port)
                client.get("/", port: port)
                try client.readToClose()
                return client
            }
            #expect(client.status == 200)
            #expect(client.header("content-type") == "text/html; charset=utf-8")
            let policy = try #require(client.header("content-security-policy"))
            #expect(policy.contains("default-src 'none'") && policy.contains("connect-src 'self'"))
            let body = try #require(client.text.components(separatedBy: "\r\n\r\n").dropFirst().first)
            #expect(body == LiveDisplayPage.html)
            #expect(body.contains("new EventSource(\"events\")"))
            // The SVG namespace is a name, not a fetch; no other address, no src or href.
            let addresses = body.ranges(of: "http").count
            #expect(addresses == 1 && body.contains("http://www.w3.org/2000/svg"))
            #expect(!body.contains("src=") && !body.contains("href=") && !body.contains("@import") && !body.contains("url("))
            for zone in 0...5 {
                #expect(body.contains(".tile.z\(zone){background:\(try #require(LiveDisplayPage.zoneColours[zone]))}"))
            }
        }
    }

    @Test("/events: a snapshot of every strap at once, then each update as it is published; a page that reconnects gets the whole state again")
    func events() async throws {
        try await Self.withServer { server in
            let port = server.port
            server.publish(StrapUpdate(id: "A", name: "Ann", bpm: 70, time: 100, zone: 1, battery: 90, link: .connected))
            server.publish(StrapUpdate(id: "B", name: "Bob", link: .connected))
            let first = try RawHTTPClient(port: port)
            try await onOwnThread {
                first.get("/events", port: port)
                try first.read { _ in !first.events("snapshot").isEmpty }
            }
            #expect(first.status == 200)
            #expect(first.header("content-type") == "text/event-stream; charset=utf-8")
            let snapshot = try LiveDisplayModelTests.json("data: " + first.events("snapshot")[0])
            let straps = try #require(snapshot["straps"] as? [[String: Any]])
            #expect(straps.map { $0["name"] as? String } == ["Ann", "Bob"])
            #expect(straps[0]["trend"] as? [[Int]] == [[100_000, 70]])
            #expect(server.clientCount == 1)

            server.publish(StrapUpdate(id: "B", bpm: 81, time: 101, zone: 2))
            try await onOwnThread { try first.read { _ in first.events("strap").count == 1 } }
            let update = try LiveDisplayModelTests.json("data: " + first.events("strap")[0])
            #expect(update["id"] as? String == "B" && update["bpm"] as? Int == 81 && update["point"] as? [Int] == [101_000, 81])
            #expect(!first.closedByServer)

            // The page reloaded (or its EventSource reconnected): the snapshot has the update.
            let again = try await onOwnThread {
                let again = try RawHTTPClient(port: port)
                again.get("/events", port: port)
                try again.read { _ in !again.events("snapshot").isEmpty }
                return again
            }
            let whole = try #require(try LiveDisplayModelTests.json("data: " + again.events("snapshot")[0])["straps"] as? [[String: Any]])
            #expect(whole[1]["bpm"] as? Int == 81 && whole[1]["zone"] as? Int == 2)
        }
    }

    /// Two event streams on `server`: one that reads nothing after its snapshot (a 4 KiB receive
    /// buffer) and one that reads. Publishes in rounds (a few updates; their writes made, the
    /// reader reads them all, so it keeps up whatever the machine's load) until the stuck one
    /// is behind: its kernel buffers full, then the server's 16 KiB. Returns both and how many
    /// updates were published.
    static func oneClientBehind(_ server: LiveDisplayServer) async throws -> (stuck: RawHTTPClient, reader: RawHTTPClient, published: Int) {
        let port = server.port
        let stuck = try RawHTTPClient(port: port, receiveBuffer: 4096)
        let reader = try RawHTTPClient(port: port, timeout: 10)
        try await onOwnThread {
            for client in [stuck, reader] {
                client.get("/events", port: port)
                try client.read { _ in !client.events("snapshot").isEmpty }
            }
        }
        let name = String(repeating: "n", count: 40)
        var published = 0
        while server.hub.behindCount == 0, published < 100_000 {
            for _ in 0..<20 {
                server.publish(StrapUpdate(id: "A", name: "\(name)\(published)", bpm: 60 + published % 100))
                published += 1
            }
            await server.hub.settle()
            let last = "\(name)\(published - 1)"
            try await onOwnThread { try reader.read { $0.hasWholeEvent(naming: last) } }
        }
        return (stuck, reader, published)
    }

    @Test("a client that does not read skips updates (the other gets every one, publish never waits); once it reads again it gets a fresh snapshot, then the updates")
    func slowClientSkipsToASnapshot() async throws {
        try await Self.withServer(.init(clientBufferLimit: 16 * 1024)) { server in
            let (stuck, reader, published) = try await Self.oneClientBehind(server)
            #expect(server.hub.behindCount == 1, "the stuck client is not behind after \(published) updates")
            #expect(server.clientCount == 2)
            server.publish(StrapUpdate(id: "B", name: "latest", bpm: 99))
            try await onOwnThread { try reader.read { $0.hasWholeEvent(naming: "latest") } }
            #expect(reader.events("strap").count == published + 1, "the reader got every update")
            #expect(reader.events("snapshot").count == 1)
            // The stuck client reads again: what was queued, then a snapshot with the update it
            // skipped, then updates again.
            try await onOwnThread { try stuck.read { $0.events("snapshot").count == 2 } }
            #expect(!stuck.closedByServer)
            let snapshot = try LiveDisplayModelTests.json("data: " + stuck.events("snapshot")[1])
            let straps = try #require(snapshot["straps"] as? [[String: Any]])
            #expect(straps.map { $0["name"] as? String } == ["\(String(repeating: "n", count: 40))\(published - 1)", "latest"])
            #expect(stuck.events("strap").count < published, "it skipped updates")
            server.publish(StrapUpdate(id: "B", name: "after"))
            try await onOwnThread { try stuck.read { $0.hasWholeEvent(naming: "after") } }
            #expect(server.hub.behindCount == 0)
        }
    }

    @Test("a client still behind at two keep-alive ticks in a row is closed; the other stays")
    func stuckClientIsClosed() async throws {
        // Ticks by hand (a test's own clock): the interval is never reached.
        try await Self.withServer(.init(clientBufferLimit: 16 * 1024, keepAliveInterval: .hours(1))) { server in
            let (stuck, reader, _) = try await Self.oneClientBehind(server)
            server.hub.keepAliveTick()
            #expect(server.clientCount == 2, "one tick behind is not yet stuck")
            server.hub.keepAliveTick()
            #expect(server.clientCount == 1)
            try await onOwnThread { try stuck.readToClose() }
            // The reader got the keep-alive comment of each tick and is still served.
            try await onOwnThread { try reader.read { $0.text.components(separatedBy: ": keep-alive\n\n").count == 3 } }
            #expect(!reader.closedByServer)
        }
    }

    @Test("past maxClients event streams, the next gets 503 and a close; the page still loads")
    func clientCap() async throws {
        try await Self.withServer(.init(maxClients: 2)) { server in
            let port = server.port
            let clients = try (0..<2).map { _ in try RawHTTPClient(port: port) }
            try await onOwnThread {
                for client in clients {
                    client.get("/events", port: port)
                    try client.read { _ in !client.events("snapshot").isEmpty }
                }
            }
            let refused = try await onOwnThread {
                let third = try RawHTTPClient(port: port)
                third.get("/events", port: port)
                try third.readToClose()
                return third.status
            }
            #expect(refused == 503)
            let page = try await onOwnThread {
                let page = try RawHTTPClient(port: port)
                page.get("/", port: port)
                try page.readToClose()
                return page.status
            }
            #expect(page == 200)
            #expect(server.clientCount == 2)
        }
    }

    @Test("past maxConnections, a connection gets 503 and a close before it asks anything")
    func connectionCap() async throws {
        try await Self.withServer(.init(maxConnections: 1)) { server in
            let port = server.port
            let held = try RawHTTPClient(port: port)
            held.get("/events", port: port)
            try await onOwnThread { try held.read { _ in !held.events("snapshot").isEmpty } }
            let status = try await onOwnThread {
                let next = try RawHTTPClient(port: port)
                try next.readToClose()
                return next.status
            }
            #expect(status == 503)
        }
    }

    @Test("the handler on an EmbeddedChannel: a request line that does not parse is answered 400 and the channel closed")
    func embeddedGarbage() throws {
        let channel = EmbeddedChannel()
        let hub = LiveDisplayHub(configuration: .init())
        try channel.pipeline.syncOperations.addHandlers([
            RequestLimitHandler(limit: 1024),
            ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)),
            HTTPResponseEncoder(),
            LiveDisplayHTTPHandler(hub: hub),
        ])
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try channel.writeInbound(ByteBuffer(string: "\u{0}\u{1} nonsense\r\n\r\n"))
        var response = ByteBuffer()
        while case .byteBuffer(var part)? = try channel.readOutbound(as: IOData.self) { response.writeBuffer(&part) }
        #expect(String(buffer: response).hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(String(buffer: response))")
        #expect(!channel.isActive)
    }

    @Test("the handler on an EmbeddedChannel: bytes past the request limit are answered 431 and not parsed")
    func embeddedTooLarge() throws {
        let channel = EmbeddedChannel()
        let hub = LiveDisplayHub(configuration: .init())
        try channel.pipeline.syncOperations.addHandlers([
            RequestLimitHandler(limit: 64),
            ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)),
            HTTPResponseEncoder(),
            LiveDisplayHTTPHandler(hub: hub),
        ])
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try channel.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\nX-Fill: " + String(repeating: "a", count: 100)))
        var response = ByteBuffer()
        while case .byteBuffer(var part)? = try channel.readOutbound(as: IOData.self) { response.writeBuffer(&part) }
        #expect(String(buffer: response).hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"), "\(String(buffer: response))")
        #expect(!channel.isActive)
    }
}

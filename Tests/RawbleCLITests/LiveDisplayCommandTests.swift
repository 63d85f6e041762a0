import Foundation
import RawbleAnalysis
import RawbleLiveDisplay
@testable import rawble
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

/// `rawble hr --serve`'s address, as the command reads it, and a port it cannot have.
@Suite("rawble hr --serve: its address")
struct LiveDisplayAddressTests {
    @Test("an address that is not [HOST:]PORT is a usage error naming the form", arguments: ["nonsense", "70000", "99999999999999999999", "::1:8080", "host:", ":8080", "[::1]8080"])
    func badAddress(_ value: String) async throws {
        let result = try await CLI.run(["hr", "--serve", value, "--transport", "tcp:127.0.0.1:1"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("--serve takes [HOST:]PORT"), "\(result.stderr)")
    }

    @Test("a port another program listens on: one line naming the address and the fix, before any controller is opened")
    func portTaken() async throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        let port = try LocalPort.bindToLoopback(fd)
        #expect(listen(fd, 1) == 0)
        let result = try await CLI.run(["hr", "--serve", "127.0.0.1:\(port)", "--transport", "tcp:127.0.0.1:1"])
        #expect(result.status == 69, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("cannot serve the live display at 127.0.0.1:\(port)")
                && lines[0].contains("--serve 0"), "\(result.stderr)")
    }
}

/// `rawble hr --serve` with one strap on Bumble's controller, read by a client of its event stream.
@Suite("rawble hr --serve with one strap", .tags(.bumble),
       .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct LiveDisplayCommandTests {
    @Test("the strap's tile: its values in order as it sends them, its zone; the link dropped is 'reconnecting', then 'connected' again and the values resume; 'ended' at --count")
    func oneStrapThatReconnects() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.1", "--hr-disconnect-after", "5"])
        defer { peer.stop() }
        let address = Mutex<String?>(nil)
        let (pids, started) = AsyncStream<Int32>.makeStream()
        let run = Task {
            defer { started.finish() }
            return try await onOwnThread {
                try CLI.runBlocking(["hr", "--serve", "0", "--count", "12", "--json", "--max-hr", "185", "--transport", peer.transport],
                                    trigger: CLI.Trigger(ready: { _, stderr in
                                        let marker = "serving the live display at http://127.0.0.1:"
                                        guard let line = stderr.split(separator: "\n").first(where: { $0.contains(marker) }),
                                              let range = line.range(of: marker) else { return false }
                                        address.withLock { $0 = String(line[range.upperBound...].dropLast()) }
                                        return true
                                    }, readyLimit: .seconds(30), action: { pid in started.yield(pid) }),
                                    limit: .seconds(60))
            }
        }
        var iterator = pids.makeAsyncIterator()
        _ = await iterator.next()
        let port = try #require(address.withLock { $0 }.flatMap { Int($0) }, "no URL on stderr")
        // The run ends at --count and closes the server: the stream ends with it.
        let client = try await onOwnThread {
            let client = try RawHTTPClient(port: port, timeout: 30)
            client.get("/events", port: port)
            try client.readToClose()
            return client
        }
        let result = try await run.value
        #expect(result.status == 0, "\(result.stderr)")

        let events = try client.events("strap").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        let strap = try #require(peer.straps.first)
        #expect(events.allSatisfy { $0["id"] as? String == strap.address }, "\(events)")
        // The link as the tile showed it, each change once.
        var links: [String] = []
        for event in events {
            if let link = event["link"] as? String, links.last != link { links.append(link) }
        }
        #expect(links == ["connected", "reconnecting", "connected", "ended"], "\(links)")
        // The values the tile showed (those after the stream began), in order, as the strap sent
        // them, each with its zone.
        let shown = events.filter { $0["point"] != nil }.compactMap { $0["bpm"] as? Int }
        let sent = try peer.sentHeartRateValues().prefix(12).map { Int(try HeartRateMeasurement.decode($0).bpm) }
        #expect(shown.count >= 7 && Array(sent.suffix(shown.count)) == shown, "shown \(shown), sent \(sent)")
        for event in events where event["point"] != nil {
            let bpm = try #require(event["bpm"] as? Int)
            #expect(event["zone"] as? Int == HeartRateZones(maxHeartRate: 185).zone(for: Double(bpm)), "\(event)")
        }
    }

    @Test("the controller gone in the middle of hr --serve, with a page connected: one stderr line and the transport status (74), and the page's stream closed; the server does not keep rawble running")
    func controllerGoneWhileServing() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.05", "--hr-count", "1000"])
        defer { peer.stop() }
        let page = Mutex<RawHTTPClient?>(nil)
        let pageError = Mutex<String?>(nil)
        let port = Mutex<Int?>(nil)
        let marker = "serving the live display at http://127.0.0.1:"
        let result = try await CLI.run(["hr", "--serve", "0", "--json", "--transport", peer.transport],
                                       when: { stdout, stderr in
                                           guard let line = stderr.split(separator: "\n").first(where: { $0.contains(marker) }),
                                                 let range = line.range(of: marker), let served = Int(line[range.upperBound...].dropLast()) else { return false }
                                           port.withLock { $0 = served }
                                           return stdout.contains("\"measurement\"")
                                       },
                                       limit: .seconds(30),
                                       do: { _ in
                                           // A page that listens, then the controller goes.
                                           do {
                                               let served = try #require(port.withLock { $0 })
                                               let client = try RawHTTPClient(port: served, timeout: 30)
                                               client.get("/events", port: served)
                                               page.withLock { $0 = client }
                                           } catch {
                                               pageError.withLock { $0 = "\(error)" }
                                           }
                                           peer.stop()
                                       })
        #expect(result.reachedReady, "no measurement: \(result.stdout) \(result.stderr)")
        #expect(pageError.withLock { $0 } == nil, "\(pageError.withLock { $0 } ?? "")")
        #expect(result.status == 74, "stderr: \(result.stderr)")
        #expect(result.stderrLines.filter { !$0.contains("serving the live display") }.count == 1, "\(result.stderr)")
        #expect(page.withLock { $0 != nil }, "no page connected")
        // rawble is gone, so is its end of the page's stream.
        try await onOwnThread { try page.withLock { try $0?.readToClose() } }
    }
}

/// `--serve`'s address read as the command reads it, and which hosts are this machine's only.
@Suite struct ServeAddressTests {
    @Test func forms() throws {
        #expect(ServeAddress("8080") == ServeAddress(host: "127.0.0.1", port: 8080))
        #expect(ServeAddress("0") == ServeAddress(host: "127.0.0.1", port: 0))
        #expect(ServeAddress("0.0.0.0:8080") == ServeAddress(host: "0.0.0.0", port: 8080))
        #expect(ServeAddress("localhost:65535") == ServeAddress(host: "localhost", port: 65_535))
        #expect(ServeAddress("[::1]:8080") == ServeAddress(host: "::1", port: 8080))
        for bad in ["", "x", "65536", "::1:80", "[::1]", "[::1]:", "host:+80", "host: 80", "１２３"] {
            #expect(ServeAddress(bad) == nil, "\(bad)")
        }
    }

    @Test func loopbackOrNot() {
        for host in ["127.0.0.1", "127.0.0.2", "localhost", "::1"] {
            #expect(LiveDisplayServer.Configuration(host: host).isLoopback, "\(host)")
        }
        for host in ["0.0.0.0", "::", "192.168.1.20", "example.org"] {
            #expect(!LiveDisplayServer.Configuration(host: host).isLoopback, "\(host)")
        }
    }
}

import Foundation
@testable import RawbleLiveDisplay
import Testing

/// The live display's state and its events, sans I/O.
@Suite struct LiveDisplayModelTests {
    static func json(_ event: String) throws -> [String: Any] {
        let lines = event.split(separator: "\n")
        let data = try #require(lines.first { $0.hasPrefix("data: ") })
        return try #require(try JSONSerialization.jsonObject(with: Data(data.dropFirst(6).utf8)) as? [String: Any])
    }

    /// `update` applied to `model`: its event, which there must be.
    static func event(_ model: inout LiveDisplayModel, _ update: StrapUpdate) throws -> String {
        let event = model.apply(update)
        return try #require(event)
    }

    @Test("an update is one event naming its strap with the merged tile; a field left nil keeps its value; a bpm with a time is a trend point")
    func updatesMerge() throws {
        var model = LiveDisplayModel()
        _ = model.apply(StrapUpdate(id: "C0:00:00:00:00:01", name: "Ann", battery: 80, link: .connected))
        let event = try Self.event(&model, StrapUpdate(id: "C0:00:00:00:00:01", bpm: 72, time: 1_700_000_000.25, zone: 2))
        #expect(event.hasPrefix("event: strap\ndata: {") && event.hasSuffix("}\n\n"))
        let object = try Self.json(event)
        #expect(object["id"] as? String == "C0:00:00:00:00:01")
        #expect(object["name"] as? String == "Ann")
        #expect(object["bpm"] as? Int == 72)
        #expect(object["zone"] as? Int == 2)
        #expect(object["battery"] as? Int == 80)
        #expect(object["link"] as? String == "connected")
        #expect(object["point"] as? [Int] == [1_700_000_000_250, 72])
        let link = try Self.json(try Self.event(&model, StrapUpdate(id: "C0:00:00:00:00:01", link: .reconnecting)))
        #expect(link["bpm"] as? Int == 72 && link["link"] as? String == "reconnecting" && link["point"] == nil)
        #expect(link["zone"] as? Int == 2, "a zone stays until the next bpm")
        let outside = try Self.json(try Self.event(&model, StrapUpdate(id: "C0:00:00:00:00:01", bpm: 300, time: 1_700_000_001)))
        #expect(outside["zone"] is NSNull, "a bpm without a zone clears it")
    }

    @Test("the snapshot holds every strap in the order they came, each with its last minute of trend")
    func snapshotIsWhole() throws {
        var model = LiveDisplayModel()
        for second in 0..<100 {
            _ = model.apply(StrapUpdate(id: "A", bpm: 60 + second % 7, time: Double(second)))
            _ = model.apply(StrapUpdate(id: "B", bpm: 90, time: Double(second)))
        }
        let snapshot = model.snapshot()
        #expect(snapshot.hasPrefix("event: snapshot\n"))
        let straps = try #require(try Self.json(snapshot)["straps"] as? [[String: Any]])
        #expect(straps.map { $0["id"] as? String } == ["A", "B"])
        let trend = try #require(straps[0]["trend"] as? [[Int]])
        #expect(trend.first == [39_000, 60 + 39 % 7] && trend.last == [99_000, 60 + 99 % 7] && trend.count == 61)
    }

    @Test("values closer than trendSpacing: the trend keeps one point per spacing and the newest value")
    func trendSpacing() throws {
        var model = LiveDisplayModel()
        for step in 0..<9 { _ = model.apply(StrapUpdate(id: "A", bpm: 60 + step, time: Double(step) * 0.25)) }
        // 0, 0.25 … 2.0 s: the points at 0, 0.5, 1.0, 1.5 and 2.0 s (the newest) stay.
        #expect(model.straps[0].trend.map(\.time) == [0, 500, 1000, 1500, 2000])
        #expect(model.straps[0].trend.map(\.bpm) == [60, 62, 64, 66, 68])
    }

    @Test("a strap's name is data: quotes, markup, newlines and line separators escaped; a long one cut")
    func hostileNames() throws {
        var model = LiveDisplayModel()
        let name = "</script><img src=x onerror=alert(1)>\"\\\n\u{2028}\u{1}"
        let event = try Self.event(&model, StrapUpdate(id: "A", name: name))
        #expect(!event.contains("<") && !event.contains(">") && !event.contains("\u{2028}"))
        #expect(event.split(separator: "\n").count == 2, "one event line and one data line: \(event)")
        #expect(try Self.json(event)["name"] as? String == name)
        let long = try Self.json(try Self.event(&model, StrapUpdate(id: "A", name: String(repeating: "x", count: 10_000))))
        #expect((long["name"] as? String)?.count == LiveDisplayModel.maxNameLength + 1)
    }

    @Test("memory is bounded: at most maxStraps tiles, and a trend keeps at most maxTrendPoints whatever its times")
    func bounded() throws {
        var model = LiveDisplayModel()
        for index in 0..<(LiveDisplayModel.maxStraps + 10) {
            let event = model.apply(StrapUpdate(id: "strap-\(index)", bpm: 60))
            #expect((event != nil) == (index < LiveDisplayModel.maxStraps))
        }
        #expect(model.straps.count == LiveDisplayModel.maxStraps)
        // Times that step back and forth (10, 10.5, 10.1, 10.6, 10.2, …, then far back and forth
        // again): at most maxTrendPoints whatever they are.
        for step in 0..<5_000 {
            let time = 10 + Double(step / 2) * 0.1 + (step % 2 == 1 ? 0.5 : 0) - (step % 1000 == 999 ? 10_000 : 0)
            _ = model.apply(StrapUpdate(id: "strap-0", bpm: 70, time: time))
            #expect(model.straps[0].trend.count <= LiveDisplayModel.maxTrendPoints)
        }
        #expect(model.apply(StrapUpdate(id: "")) == nil)
    }
}

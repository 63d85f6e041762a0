import Foundation
import RawbleReport
import RawbleTestSupport
import RawbleWire

/// A made-up workout to plot, deterministic (seeded): warm-up, intervals up to ~182 bpm, a
/// disconnection, cool-down; RR intervals with breathing and noise, and a few beats marked
/// corrected (an artifact the analysis replaced). Zones from a maximum of 190 bpm.
struct SyntheticSession {
    /// 2026-11-22T05:14:12Z, seconds since 1970.
    static let start = 1_795_324_452.0
    static let zones = PlotZones(maximumHeartRate: 190)

    var samples: [PlotSample] = []
    var beats: [PlotBeat] = []
    var gaps: [PlotGap] = []

    /// `minutes` long with one gap from 55 % to 60 % of the way; `beatsPerSample` beats per
    /// measurement second.
    init(minutes: Double = 42, seed: UInt64 = 13) {
        var random = SplitMix64(state: seed)
        let duration = minutes * 60
        let gapStart = Self.start + duration * 0.55
        let gapEnd = Self.start + duration * 0.60
        gaps = [PlotGap(start: gapStart, end: gapEnd)]
        var time = Self.start
        var nextSample = Self.start
        var lastSampleTime = -Double.infinity
        var beatIndex = 0
        while time < Self.start + duration {
            let progress = (time - Self.start) / duration
            let bpm = Self.heartRate(at: progress)
            // RR with breathing (~0.25 Hz), less of it at high rates, and noise.
            let base = 60_000 / bpm
            let breathing = (18 - 14 * min(1, max(0, (bpm - 70) / 100))) * Self.sine(time * 0.25)
            let noise = (Double(random.next() % 1000) / 1000 - 0.5) * 14
            var rr = base + breathing + noise
            beatIndex += 1
            let corrected = beatIndex % 173 == 0
            if corrected { rr += (random.next() % 2 == 0 ? 1 : -1) * 60 }
            time += rr / 1000
            if time > gapStart, time < gapEnd {
                time = gapEnd + 0.4
                continue
            }
            beats.append(PlotBeat(time: time, rrMs: rr, corrected: corrected))
            if time >= nextSample, time - lastSampleTime >= 0.9 {
                let shown = (bpm + noise / 5).rounded()
                samples.append(PlotSample(time: time, bpm: shown, zone: Self.zone(shown)))
                lastSampleTime = time
                nextSample += 1
                while nextSample < time { nextSample += 1 }
            }
        }
    }

    /// Warm-up from 62 bpm, three intervals to ~182, a steady part, cool-down.
    static func heartRate(at progress: Double) -> Double {
        if progress < 0.15 { return 62 + progress / 0.15 * 60 }                        // 62 → 122
        if progress < 0.5 {
            let phase = (progress - 0.15) / 0.35 * 3                                    // three intervals
            let within = phase - phase.rounded(.down)
            return within < 0.5 ? 125 + within * 2 * 57 : 182 - (within - 0.5) * 2 * 57
        }
        if progress < 0.8 { return 140 + 8 * sine(progress * 40) }
        return 140 - (progress - 0.8) / 0.2 * 75                                        // → 65
    }

    static func zone(_ bpm: Double) -> Int {
        zones.lowerBounds.lastIndex { bpm >= $0 }.map { $0 + 1 } ?? 0
    }

    static func sine(_ x: Double) -> Double { sin(x) }

    func plot(deviceName: String = "Polar H10 7E3A1B2C", timeAxis: PlotTimeAxis = .clock) -> SessionPlot {
        SessionPlot(deviceName: deviceName, samples: samples, beats: beats, gaps: gaps, zones: Self.zones,
                    timeAxis: timeAxis, utcOffset: 3600)
    }
}

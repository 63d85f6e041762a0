import ArgumentParser
import RawbleLSL
import RawblePolar
import RawbleWire
import Synchronization

/// `--lsl` (hr, ecg): each strap's streams as Lab Streaming Layer outlets.
struct LSLOptions: ParsableArguments {
    @Flag(help: ArgumentHelp(
        "Publish each strap's streams as Lab Streaming Layer outlets: heart rate and RR (HR, RR), and with ecg the ECG and acceleration (ECG, Accelerometer).",
        discussion: "Needs liblsl: the file RAWBLE_LIBLSL names, else liblsl.so.2 on the loader's path (pip install pylsl ships one in pylsl/lib)."))
    var lsl = false

    /// The run's outlets (liblsl loaded), or nil without `--lsl`.
    ///
    /// - Throws: a ``CLIError`` (unavailable) saying how to get liblsl when it cannot be loaded.
    func streams() throws -> LSLStreams? {
        guard lsl else { return nil }
        let path = environment()["RAWBLE_LIBLSL"].flatMap { $0.isEmpty ? nil : $0 }
        do {
            return LSLStreams(library: try LSLLibrary.load(path: path))
        } catch {
            throw CLIError(.unavailable, "--lsl: \(error)",
                           fix: "liblsl is the Lab Streaming Layer's library: pip install pylsl and point RAWBLE_LIBLSL at the liblsl.so.2 in its pylsl/lib folder, or install the .deb of a release at github.com/sccn/liblsl/releases")
        }
    }
}

/// A strap as its streams' metadata names it.
struct LSLStrap: Sendable {
    var address: BluetoothAddress
    var name: String?
    var manufacturer: String?
    var model: String?

    /// `rawble:ADDRESS:TYPE`: the same for the strap's stream of a type in every run, so an
    /// inlet (LabRecorder) that lost it finds it again after a reconnection or a restart.
    func sourceID(_ type: String) -> String { "rawble:\(address):\(type)" }

    func description(type: String, rate: Double, channels: [LSLChannel]) -> LSLStreamDescription {
        var acquisition: [LSLField] = []
        if let manufacturer { acquisition.append(LSLField("manufacturer", manufacturer)) }
        if let model { acquisition.append(LSLField("model", model)) }
        acquisition.append(LSLField("bluetooth_address", "\(address)"))
        acquisition.append(LSLField("software", "rawble \(BuildStamp.version)"))
        return LSLStreamDescription(name: "\(name ?? "\(address)") \(type)", type: type, nominalRate: rate,
                                    sourceID: sourceID(type), channels: channels, acquisition: acquisition)
    }
}

/// One run's LSL outlets, by source ID: a strap's stream is made once and kept across its
/// reconnections (an inlet stays connected through a drop of the strap's link).
final class LSLStreams: Sendable {
    let library: LSLLibrary
    private let outlets = Mutex<[String: LSLOutlet]>([:])

    init(library: LSLLibrary) {
        self.library = library
    }

    private func outlet(_ description: LSLStreamDescription) throws -> LSLOutlet {
        try outlets.withLock { outlets in
            if let outlet = outlets[description.sourceID] { return outlet }
            do {
                let outlet = try library.makeOutlet(description)
                outlets[description.sourceID] = outlet
                return outlet
            } catch {
                throw CLIError(.unavailable, "\(description.name): \(error)")
            }
        }
    }

    /// The strap's heart-rate and RR streams, timed from this connection's beats.
    func heartRate(_ strap: LSLStrap) throws -> HeartRateOutlets {
        HeartRateOutlets(
            library: library,
            heartRate: try outlet(strap.description(type: "HR", rate: LSLStreamDescription.irregularRate,
                                                   channels: [LSLChannel(label: "HR", unit: "bpm", type: "HR")])),
            rr: try outlet(strap.description(type: "RR", rate: LSLStreamDescription.irregularRate,
                                            channels: [LSLChannel(label: "RR", unit: "ms", type: "RR")])))
    }

    /// The H10's ECG stream (130 Hz, µV) and, at `accelerationRate`, its acceleration (mG),
    /// timed on this connection's device clock.
    func pmd(_ strap: LSLStrap, accelerationRate: UInt16?) throws -> PMDOutlets {
        let ecg = try outlet(strap.description(type: "ECG", rate: 130, channels: [LSLChannel(label: "ECG", unit: "microvolts", type: "ECG")]))
        let acceleration = try accelerationRate.map { rate in
            try outlet(strap.description(type: "Accelerometer", rate: Double(rate), channels: ["X", "Y", "Z"].map {
                LSLChannel(label: $0, unit: "mG", type: "Acceleration\($0)")
            }))
        }
        return PMDOutlets(library: library, ecg: ecg, acceleration: acceleration)
    }
}

/// A strap's heart rate (bpm) and RR intervals (ms) pushed as they arrive, each beat at its
/// time from the RR intervals (``RRTimestamps``); a measurement without RR at its arrival.
struct HeartRateOutlets {
    let library: LSLLibrary
    let heartRate: LSLOutlet
    let rr: LSLOutlet
    private var beats = RRTimestamps()

    init(library: LSLLibrary, heartRate: LSLOutlet, rr: LSLOutlet) {
        self.library = library
        self.heartRate = heartRate
        self.rr = rr
    }

    mutating func push(_ measurement: HeartRateMeasurement) {
        let arrival = library.localClock()
        let times = beats.beatTimes(rrSeconds: measurement.rrIntervals.map(\.seconds), arrival: arrival)
        if !times.isEmpty {
            rr.push(chunk: measurement.rrIntervals.map { Float($0.milliseconds) }, timestamps: times)
        }
        heartRate.push([Float(measurement.bpm)], timestamp: times.last ?? arrival)
    }
}

/// An H10's ECG and acceleration frames pushed with each sample's device time put on LSL's
/// clock (one mapping for both streams: they share the device's clock).
struct PMDOutlets {
    let library: LSLLibrary
    let ecg: LSLOutlet
    let acceleration: LSLOutlet?
    private var clock = LSLClockMapping()
    private var values: [Float] = []
    private var timestamps: [Double] = []

    init(library: LSLLibrary, ecg: LSLOutlet, acceleration: LSLOutlet?) {
        self.library = library
        self.ecg = ecg
        self.acceleration = acceleration
    }

    /// The first `count` samples of `frame`.
    mutating func push(_ frame: PMDECGFrame, count: Int) {
        guard count > 0, let newest = frame.times.last else { return }
        clock.anchor(newest: newest, arrival: library.localClock())
        values.removeAll(keepingCapacity: true)
        timestamps.removeAll(keepingCapacity: true)
        for index in 0..<min(count, frame.microvolts.count, frame.times.count) {
            values.append(Float(frame.microvolts[index]))
            timestamps.append(clock.lslTime(deviceNanoseconds: frame.times[index]))
        }
        ecg.push(chunk: values, timestamps: timestamps)
    }

    mutating func push(_ frame: PMDAccelerationFrame) {
        guard let acceleration, let newest = frame.times.last else { return }
        clock.anchor(newest: newest, arrival: library.localClock())
        values.removeAll(keepingCapacity: true)
        timestamps.removeAll(keepingCapacity: true)
        for index in 0..<min(frame.vectors.count, frame.times.count) {
            let vector = frame.vectors[index]
            values += [Float(vector.x), Float(vector.y), Float(vector.z)]
            timestamps.append(clock.lslTime(deviceNanoseconds: frame.times[index]))
        }
        acceleration.push(chunk: values, timestamps: timestamps)
    }
}

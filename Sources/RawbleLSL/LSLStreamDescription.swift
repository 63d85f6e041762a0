/// What an outlet announces: the stream's name, type, rate and source ID, and the metadata LSL's
/// conventions put in its description (`desc/channels/channel/{label,unit,type}`,
/// `desc/acquisition/…`), which LabRecorder stores in the XDF file.
///
/// Every stream rawble makes carries 32-bit float samples.
public struct LSLStreamDescription: Hashable, Sendable {
    /// The nominal rate of a stream whose samples come when they come (heart rate, RR
    /// intervals): liblsl's `LSL_IRREGULAR_RATE`.
    public static let irregularRate = 0.0
    /// liblsl's `cft_float32`.
    static let float32Format: Int32 = 1

    /// A name for people (LabRecorder's list), e.g. `Polar H10 A1B2C3D4 ECG`.
    public var name: String
    /// The content type inlets resolve by: `ECG`, `HR`, `RR`, `Accelerometer`.
    public var type: String
    /// Samples per second, or ``irregularRate``.
    public var nominalRate: Double
    /// What identifies the stream's source across restarts: an inlet that lost the outlet
    /// reconnects to an outlet with the same source ID.
    public var sourceID: String
    /// One per value of a sample, in order.
    public var channels: [LSLChannel]
    /// `desc/acquisition`'s fields (`manufacturer`, `model`, …), in order.
    public var acquisition: [LSLField]

    public init(name: String, type: String, nominalRate: Double, sourceID: String, channels: [LSLChannel],
                acquisition: [LSLField] = []) {
        self.name = name
        self.type = type
        self.nominalRate = nominalRate
        self.sourceID = sourceID
        self.channels = channels
        self.acquisition = acquisition
    }
}

/// One channel of a stream: `desc/channels/channel`'s `label`, `unit` and `type`.
public struct LSLChannel: Hashable, Sendable {
    public var label: String
    /// As LSL's meta-data conventions spell units: `microvolts`, `bpm`, `ms`, `mG`.
    public var unit: String
    public var type: String

    public init(label: String, unit: String, type: String) {
        self.label = label
        self.unit = unit
        self.type = type
    }
}

/// A named text value of a stream's description.
public struct LSLField: Hashable, Sendable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// Why liblsl could not be used.
public enum LSLError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No liblsl at the path given, nor under the loader's names: the names tried and the
    /// loader's last reason.
    case libraryNotFound(tried: [String], reason: String)
    /// The file opened but lacks a function of liblsl's C API: not liblsl, or older than 1.14.
    case missingFunction(String, path: String)
    /// liblsl refused to make an outlet (its message).
    case outletFailed(String)

    public var description: String {
        switch self {
        case let .libraryNotFound(tried, reason): "liblsl not found (tried \(tried.joined(separator: ", ")): \(reason))"
        case let .missingFunction(name, path): "\(path) is not a liblsl of 1.14 or later (no \(name))"
        case let .outletFailed(message): "liblsl could not make an outlet: \(message)"
        }
    }
}

// Measurements of the Health Thermometer, Cycling Speed and Cadence and Running Speed and
// Cadence services (GATT Specification Supplement): a flags byte saying which fields follow.

extension BluetoothUUID {
    /// Temperature Measurement (Health Thermometer): ``TemperatureMeasurement``.
    public static let temperatureMeasurement = BluetoothUUID(0x2A1C)
    /// CSC Measurement (Cycling Speed and Cadence): ``CSCMeasurement``.
    public static let cscMeasurement = BluetoothUUID(0x2A5B)
    /// RSC Measurement (Running Speed and Cadence): ``RSCMeasurement``.
    public static let rscMeasurement = BluetoothUUID(0x2A53)
}

/// A Date Time value (`2A08`, and the time stamp of health measurements): the device's local
/// time, seven bytes. Zero in the year, month or day means "not known".
public struct GATTDateTime: Hashable, Sendable, CustomStringConvertible, WireDecodable, WireEncodable {
    public let year: UInt16
    public let month: UInt8
    public let day: UInt8
    public let hours: UInt8
    public let minutes: UInt8
    public let seconds: UInt8

    public init(year: UInt16, month: UInt8, day: UInt8, hours: UInt8, minutes: UInt8, seconds: UInt8) {
        (self.year, self.month, self.day) = (year, month, day)
        (self.hours, self.minutes, self.seconds) = (hours, minutes, seconds)
    }

    /// Year u16, then month, day, hours, minutes, seconds (a byte each), checked against their
    /// ranges (year 1582...9999 or 0, month 0...12, day 0...31, 0...23, 0...59, 0...59).
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> GATTDateTime {
        var r = ByteReader(bytes, context: "Date Time")
        let value = try read(&r)
        try r.expectEnd()
        return value
    }

    /// Reads the seven bytes from `r` (a field of a larger value).
    static func read(_ r: inout ByteReader) throws(WireError) -> GATTDateTime {
        let start = r.offset
        let year = try r.readUInt16()
        let fields = try r.readBytes(5)
        let f = Array(fields)
        let limits: [(String, UInt8)] = [("month", 12), ("day", 31), ("hours", 23), ("minutes", 59), ("seconds", 59)]
        guard year == 0 || (1582...9999).contains(year) else {
            throw WireError(.invalidValue("year \(year) is out of range"), at: start, in: "Date Time")
        }
        for (index, (name, limit)) in limits.enumerated() where f[index] > limit {
            throw WireError(.invalidValue("\(name) \(f[index]) is out of range"), at: start + 2 + index, in: "Date Time")
        }
        return GATTDateTime(year: year, month: f[0], day: f[1], hours: f[2], minutes: f[3], seconds: f[4])
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(year)
        writer.write(contentsOf: [month, day, hours, minutes, seconds])
    }

    /// `2024-01-31T08:05:09`: ISO 8601 without a zone (the device's local time); unknown parts
    /// as zeros.
    public var iso8601: String {
        func two(_ v: UInt8) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let y = String(year)
        return String(repeating: "0", count: max(0, 4 - y.count)) + y
            + "-\(two(month))-\(two(day))T\(two(hours)):\(two(minutes)):\(two(seconds))"
    }

    /// `2024-01-31 08:05:09`.
    public var description: String {
        var text = iso8601
        if let t = text.firstIndex(of: "T") { text.replaceSubrange(t...t, with: " ") }
        return text
    }
}

/// A Temperature Measurement value (`2A1C`, Health Thermometer): flags, an IEEE-11073 FLOAT
/// temperature in °C or °F, then optionally a time stamp and where it was taken.
public struct TemperatureMeasurement: Hashable, Sendable, CustomStringConvertible, WireDecodable, WireEncodable {
    /// Bit 0 of the flags: °F when set, else °C.
    public let fahrenheit: Bool
    public let temperature: MedicalFloat
    /// Flag bit 1.
    public let timestamp: GATTDateTime?
    /// Flag bit 2: ``TemperatureType`` code.
    public let type: TemperatureType?
    /// The flags as received (reserved bits 3–7 kept so the value re-encodes as received).
    public let flags: UInt8

    /// Where on the body the temperature was taken (Temperature Type, `2A1D`).
    public struct TemperatureType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// `armpit`, `body`, `ear`, `finger`, `gastro-intestinal tract`, `mouth`, `rectum`,
        /// `toe`, `tympanum`; `nil` for reserved codes.
        public var name: String? {
            switch rawValue {
            case 1: "armpit"
            case 2: "body"
            case 3: "ear"
            case 4: "finger"
            case 5: "gastro-intestinal tract"
            case 6: "mouth"
            case 7: "rectum"
            case 8: "toe"
            case 9: "tympanum"
            default: nil
            }
        }

        public var description: String { name ?? "type \(rawValue) (reserved)" }
    }

    public init(temperature: MedicalFloat, fahrenheit: Bool = false, timestamp: GATTDateTime? = nil, type: TemperatureType? = nil) {
        self.temperature = temperature
        self.fahrenheit = fahrenheit
        self.timestamp = timestamp
        self.type = type
        flags = (fahrenheit ? 1 : 0) | (timestamp != nil ? 2 : 0) | (type != nil ? 4 : 0)
    }

    private init(flags: UInt8, temperature: MedicalFloat, timestamp: GATTDateTime?, type: TemperatureType?) {
        self.flags = flags
        fahrenheit = flags & 1 != 0
        self.temperature = temperature
        self.timestamp = timestamp
        self.type = type
    }

    /// Flags u8, FLOAT (4 bytes), Date Time (7, flag bit 1), type u8 (flag bit 2), nothing after.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> TemperatureMeasurement {
        var r = ByteReader(bytes, context: "Temperature Measurement")
        let flags = try r.readUInt8()
        let temperature = MedicalFloat(float32Bits: try r.readUInt32())
        let timestamp = flags & 0x02 != 0 ? try GATTDateTime.read(&r) : nil
        let type = flags & 0x04 != 0 ? TemperatureType(rawValue: try r.readUInt8()) : nil
        try r.expectEnd()
        return TemperatureMeasurement(flags: flags, temperature: temperature, timestamp: timestamp, type: type)
    }

    /// Encodes as decoded; a temperature whose mantissa does not fit 24 bits is sent as NaN.
    public func encode(into writer: inout ByteWriter) {
        writer.write(flags)
        writer.write(temperature.float32Bits ?? 0x007F_FFFF)
        if flags & 0x02 != 0 { (timestamp ?? GATTDateTime(year: 0, month: 0, day: 0, hours: 0, minutes: 0, seconds: 0)).encode(into: &writer) }
        if flags & 0x04 != 0 { writer.write(type?.rawValue ?? 0) }
    }

    /// `°C` or `°F`.
    public var unitSymbol: String { fahrenheit ? "°F" : "°C" }

    /// `36.5 °C, 2024-01-31 08:05:09, armpit`.
    public var description: String {
        var parts = ["\(temperature) \(unitSymbol)"]
        if let timestamp { parts.append(timestamp.description) }
        if let type { parts.append(type.description) }
        return parts.joined(separator: ", ")
    }
}

/// A CSC Measurement value (`2A5B`, Cycling Speed and Cadence): cumulative wheel and crank
/// revolutions with the time of the last event of each, in 1/1024 s (speed and cadence come
/// from the difference between two measurements).
public struct CSCMeasurement: Hashable, Sendable, CustomStringConvertible, WireDecodable, WireEncodable {
    /// Cumulative wheel revolutions and the last wheel event time (1/1024 s), flag bit 0.
    public let wheel: (revolutions: UInt32, lastEventTime: UInt16)?
    /// Cumulative crank revolutions and the last crank event time (1/1024 s), flag bit 1.
    public let crank: (revolutions: UInt16, lastEventTime: UInt16)?
    /// The flags as received (reserved bits kept).
    public let flags: UInt8

    public init(wheel: (revolutions: UInt32, lastEventTime: UInt16)?, crank: (revolutions: UInt16, lastEventTime: UInt16)?) {
        self.wheel = wheel
        self.crank = crank
        flags = (wheel != nil ? 1 : 0) | (crank != nil ? 2 : 0)
    }

    private init(flags: UInt8, wheel: (revolutions: UInt32, lastEventTime: UInt16)?, crank: (revolutions: UInt16, lastEventTime: UInt16)?) {
        self.flags = flags
        self.wheel = wheel
        self.crank = crank
    }

    /// Flags u8; wheel: u32 revolutions, u16 time (bit 0); crank: u16 revolutions, u16 time
    /// (bit 1); nothing after.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> CSCMeasurement {
        var r = ByteReader(bytes, context: "CSC Measurement")
        let flags = try r.readUInt8()
        var wheel: (revolutions: UInt32, lastEventTime: UInt16)? = nil
        if flags & 0x01 != 0 { wheel = (try r.readUInt32(), try r.readUInt16()) }
        var crank: (revolutions: UInt16, lastEventTime: UInt16)? = nil
        if flags & 0x02 != 0 { crank = (try r.readUInt16(), try r.readUInt16()) }
        try r.expectEnd()
        return CSCMeasurement(flags: flags, wheel: wheel, crank: crank)
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(flags)
        if flags & 0x01 != 0 {
            writer.write(wheel?.revolutions ?? 0)
            writer.write(wheel?.lastEventTime ?? 0)
        }
        if flags & 0x02 != 0 {
            writer.write(crank?.revolutions ?? 0)
            writer.write(crank?.lastEventTime ?? 0)
        }
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.flags == b.flags && a.wheel?.revolutions == b.wheel?.revolutions && a.wheel?.lastEventTime == b.wheel?.lastEventTime
            && a.crank?.revolutions == b.crank?.revolutions && a.crank?.lastEventTime == b.crank?.lastEventTime
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(flags)
        hasher.combine(wheel?.revolutions)
        hasher.combine(wheel?.lastEventTime)
        hasher.combine(crank?.revolutions)
        hasher.combine(crank?.lastEventTime)
    }

    /// `wheel 1200 revolutions (last at 3.000 s), crank 300 revolutions (last at 2.500 s)`;
    /// `no data` when neither is present.
    public var description: String {
        var parts: [String] = []
        if let wheel { parts.append("wheel \(wheel.revolutions) revolutions (last at \(formatSeconds(Double(wheel.lastEventTime) / 1024)) s)") }
        if let crank { parts.append("crank \(crank.revolutions) revolutions (last at \(formatSeconds(Double(crank.lastEventTime) / 1024)) s)") }
        return parts.isEmpty ? "no data" : parts.joined(separator: ", ")
    }
}

/// An RSC Measurement value (`2A53`, Running Speed and Cadence): speed (1/256 m/s), cadence
/// (steps a minute), optionally stride length (cm) and total distance (dm), and whether the
/// user runs or walks.
public struct RSCMeasurement: Hashable, Sendable, CustomStringConvertible, WireDecodable, WireEncodable {
    /// Instantaneous speed in 1/256 m/s.
    public let speed: UInt16
    /// Instantaneous cadence in steps (or strides) a minute.
    public let cadence: UInt8
    /// Instantaneous stride length in centimetres (flag bit 0).
    public let strideLength: UInt16?
    /// Total distance in decimetres (flag bit 1).
    public let totalDistance: UInt32?
    /// The flags as received: bit 2 set when running, clear when walking.
    public let flags: UInt8

    public init(speed: UInt16, cadence: UInt8, strideLength: UInt16? = nil, totalDistance: UInt32? = nil, running: Bool) {
        self.speed = speed
        self.cadence = cadence
        self.strideLength = strideLength
        self.totalDistance = totalDistance
        flags = (strideLength != nil ? 1 : 0) | (totalDistance != nil ? 2 : 0) | (running ? 4 : 0)
    }

    private init(flags: UInt8, speed: UInt16, cadence: UInt8, strideLength: UInt16?, totalDistance: UInt32?) {
        self.flags = flags
        self.speed = speed
        self.cadence = cadence
        self.strideLength = strideLength
        self.totalDistance = totalDistance
    }

    /// Flag bit 2.
    public var running: Bool { flags & 0x04 != 0 }
    /// Speed in metres per second.
    public var metresPerSecond: Double { Double(speed) / 256 }
    /// Stride length in metres.
    public var strideLengthMetres: Double? { strideLength.map { Double($0) / 100 } }
    /// Total distance in metres.
    public var totalDistanceMetres: Double? { totalDistance.map { Double($0) / 10 } }

    /// Flags u8, speed u16, cadence u8, stride length u16 (bit 0), total distance u32 (bit 1).
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> RSCMeasurement {
        var r = ByteReader(bytes, context: "RSC Measurement")
        let flags = try r.readUInt8()
        let speed = try r.readUInt16()
        let cadence = try r.readUInt8()
        let stride = flags & 0x01 != 0 ? try r.readUInt16() : nil
        let distance = flags & 0x02 != 0 ? try r.readUInt32() : nil
        try r.expectEnd()
        return RSCMeasurement(flags: flags, speed: speed, cadence: cadence, strideLength: stride, totalDistance: distance)
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(flags)
        writer.write(speed)
        writer.write(cadence)
        if flags & 0x01 != 0 { writer.write(strideLength ?? 0) }
        if flags & 0x02 != 0 { writer.write(totalDistance ?? 0) }
    }

    /// `running 3.000 m/s, 170 steps/min, stride 1.05 m, total 1234.5 m`.
    public var description: String {
        var parts = ["\(running ? "running" : "walking") \(formatSeconds(metresPerSecond)) m/s", "\(cadence) steps/min"]
        if let strideLength { parts.append("stride \(strideLength / 100).\(twoDigits(strideLength % 100)) m") }
        if let totalDistance { parts.append("total \(totalDistance / 10).\(totalDistance % 10) m") }
        return parts.joined(separator: ", ")
    }
}

/// `5` → `05`.
private func twoDigits(_ value: some BinaryInteger) -> String {
    value < 10 ? "0\(value)" : "\(value)"
}

import PropertyBased
import RawblePolarCore
import RawbleTestSupport
import RawbleWire
import Testing

@Suite("PMD service, types and features")
struct PMDServiceTests {
    @Test("the PMD service and its characteristics have Polar's 128-bit UUIDs")
    func uuids() {
        #expect(BluetoothUUID.polarMeasurementDataService.canonical128 == "FB005C80-02E7-F387-1CAD-8ACD2D8DF0C8")
        #expect(BluetoothUUID.polarMeasurementDataControlPoint.canonical128 == "FB005C81-02E7-F387-1CAD-8ACD2D8DF0C8")
        #expect(BluetoothUUID.polarMeasurementDataData.canonical128 == "FB005C82-02E7-F387-1CAD-8ACD2D8DF0C8")
        #expect(BluetoothUUID("FB005C80-02E7-F387-1CAD-8ACD2D8DF0C8") == .polarMeasurementDataService)
    }

    @Test("an H10's control-point read value announces ECG and acceleration")
    func h10Features() throws {
        let value = bytes("0F 05 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00")
        let features = try PMDFeatures.decode(value)
        #expect(features.types == [.ecg, .acceleration])
        #expect(features.contains(.ecg) && features.contains(.acceleration) && !features.contains(.ppg))
        #expect(features.encoded == value)
        #expect(features.description == "ecg acc")
    }

    @Test("feature bit n announces type n, byte 2 included, unnamed bits kept")
    func featureBits() throws {
        let features = try PMDFeatures.decode(bytes("0F FF 7E"))
        #expect(features.types == [
            .ecg, .ppg, .acceleration, .ppi, PMDMeasurementType(4), .gyroscope, .magnetometer, .skinTemperature,
            .sdkMode, .location, .pressure, .temperature, .offlineRecording, .offlineHeartRate,
        ])
        #expect(PMDMeasurementType(4).name == nil)
        #expect(PMDMeasurementType(4).description == "type 0x04")
        #expect(try PMDFeatures.decode(bytes("0F")).types.isEmpty)
        #expect(try PMDFeatures.decode(bytes("0F 00 02")).types == [.sdkMode])
        #expect(PMDFeatures([.ecg, .acceleration]) == (try PMDFeatures.decode(bytes("0F 05"))))
    }

    @Test("a read value that does not start with 0F is refused")
    func featuresMarker() {
        #expect(wireError { () throws(WireError) in try PMDFeatures.decode(bytes("F0 05")) }
            == WireError(.unknownValue(0xF0), at: 0, in: "PMD features"))
        #expect(wireError { () throws(WireError) in try PMDFeatures.decode([]) }?.kind
            == .truncated(needed: 1, available: 0))
    }

    @Test("a type byte is recording << 7 | type; unknown types are kept")
    func typeBytes() {
        #expect(PMDStream(typeByte: 0x82) == PMDStream(.acceleration, recording: .offline))
        #expect(PMDStream(.acceleration, recording: .offline).typeByte == 0x82)
        #expect(PMDStream(typeByte: 0x00) == PMDStream(.ecg))
        #expect(PMDStream(typeByte: 0x2A).type.rawValue == 0x2A)
        #expect(PMDStream(typeByte: 0x2A).typeByte == 0x2A)
        #expect(PMDMeasurementType(0x89) == .sdkMode)
        let named: [(PMDMeasurementType, UInt8, String)] = [
            (.ecg, 0, "ecg"), (.ppg, 1, "ppg"), (.acceleration, 2, "acc"), (.ppi, 3, "ppi"), (.gyroscope, 5, "gyro"),
            (.magnetometer, 6, "mag"), (.skinTemperature, 7, "skin-temperature"), (.sdkMode, 9, "sdk-mode"),
            (.location, 0x0A, "location"), (.pressure, 0x0B, "pressure"), (.temperature, 0x0C, "temperature"),
            (.offlineRecording, 0x0D, "offline-recording"), (.offlineHeartRate, 0x0E, "offline-hr"),
        ]
        for (type, raw, name) in named {
            #expect(type.rawValue == raw)
            #expect(type.name == name)
        }
    }
}

@Suite("PMD control point")
struct PMDControlPointTests {
    /// The H10 exchanges of the 2019 PMD specification: request, indication.
    static let h10Requests: [(PMDControlPointRequest, String)] = [
        (.getSettings(PMDStream(.ecg)), "01 00"),
        (.getSettings(PMDStream(.acceleration)), "01 02"),
        (.start(PMDStream(.ecg), .h10ECG), "02 00 00 01 82 00 01 01 0E 00"),
        (.start(PMDStream(.acceleration), .h10Acceleration(sampleRate: 200, range: 8)),
         "02 02 00 01 C8 00 01 01 10 00 02 01 08 00"),
        (.stop(PMDStream(.acceleration)), "03 02"),
        // The specification prints the stop-ACC reply for stop ECG as well (a slip); the
        // request follows the layout.
        (.stop(PMDStream(.ecg)), "03 00"),
        (.measurementStatus, "05"),
    ]

    @Test("every H10 request encodes byte for byte and decodes back")
    func h10RequestBytes() throws {
        for (request, hex) in Self.h10Requests {
            #expect(request.encoded == bytes(hex), "\(hex)")
            #expect(try PMDControlPointRequest.decode(bytes(hex)) == request)
        }
    }

    @Test("the H10's ECG settings reply: 130 Hz, 14 bits")
    func ecgSettingsReply() throws {
        let indication = try PMDControlPointIndication.decode(bytes("F0 01 00 00 00 00 01 82 00 01 01 0E 00"))
        guard case let .response(response) = indication else {
            Issue.record("not a response: \(indication)")
            return
        }
        #expect(response.opcode == .getSettings)
        #expect(response.stream == PMDStream(.ecg))
        #expect(response.status == .success)
        #expect(!response.more)
        let settings = try response.settings()
        #expect(settings == PMDSettings(sampleRates: [130], resolutions: [14]))
        #expect(indication.encoded == bytes("F0 01 00 00 00 00 01 82 00 01 01 0E 00"))
    }

    @Test("the H10's ACC settings reply: 25/50/100/200 Hz, 16 bits, ±2/4/8 G")
    func accSettingsReply() throws {
        let hex = "F0 01 02 00 00 00 04 19 00 32 00 64 00 C8 00 01 01 10 00 02 03 02 00 04 00 08 00"
        guard case let .response(response) = try PMDControlPointIndication.decode(bytes(hex)) else {
            Issue.record("not a response")
            return
        }
        #expect(response.stream == PMDStream(.acceleration))
        let settings = try response.settings()
        #expect(settings.sampleRates == [25, 50, 100, 200])
        #expect(settings.resolutions == [16])
        #expect(settings.ranges == [2, 4, 8])
        #expect(settings.factors.isEmpty && settings.channels.isEmpty)
        #expect(settings.encoded == Array(bytes(hex)[5...]))
    }

    @Test("the H10's start and stop replies; a start reply's lone reserved byte is no setting")
    func startAndStopReplies() throws {
        let startECG = try PMDControlPointIndication.decode(bytes("F0 02 00 00 00 00"))
        #expect(startECG == .response(PMDControlPointResponse(
            opcode: .start, stream: PMDStream(.ecg), status: .success, parameters: [0x00])))
        let startACC = try PMDControlPointIndication.decode(bytes("F0 02 02 00 00 01"))
        guard case let .response(acc) = startACC else {
            Issue.record("not a response")
            return
        }
        #expect(acc.parameters == [0x01])
        #expect(try acc.settings().isEmpty)
        #expect(startACC.encoded == bytes("F0 02 02 00 00 01"))
        let stop = try PMDControlPointIndication.decode(bytes("F0 03 02 00 00"))
        #expect(stop == .response(PMDControlPointResponse(opcode: .stop, stream: PMDStream(.acceleration), status: .success)))
        #expect(stop.encoded == bytes("F0 03 02 00 00"))
    }

    @Test("a start reply's factor is kept for delta decoding")
    func factorInStartReply() throws {
        // Factor 0.5 (float32 3F000000), channels 3, then one reserved byte.
        guard case let .response(response) = try PMDControlPointIndication.decode(
            bytes("F0 02 02 00 00 05 01 00 00 00 3F 04 01 03 00"))
        else {
            Issue.record("not a response")
            return
        }
        let settings = try response.settings()
        #expect(settings.factors == [0.5])
        #expect(settings.channels == [3])
    }

    @Test("every status code has its name; unknown codes are kept")
    func statusNames() throws {
        let names = [
            "success", "invalid op code", "invalid measurement type", "not supported", "invalid length",
            "invalid parameter", "already in state", "invalid resolution", "invalid sample rate", "invalid range",
            "invalid MTU", "invalid number of channels", "invalid state", "device in charger", "disk full",
        ]
        let constants: [PMDStatus] = [
            .success, .invalidOpcode, .invalidMeasurementType, .notSupported, .invalidLength, .invalidParameter,
            .alreadyInState, .invalidResolution, .invalidSampleRate, .invalidRange, .invalidMTU, .invalidChannels,
            .invalidState, .inCharger, .diskFull,
        ]
        for (code, name) in names.enumerated() {
            #expect(PMDStatus(UInt8(code)).name == name)
            #expect(constants[code].rawValue == UInt8(code))
        }
        #expect(PMDStatus(15).name == nil)
        #expect(PMDStatus(15).description == "status 15")
        let unknown = try PMDControlPointIndication.decode(bytes("F0 02 00 0F"))
        #expect(unknown == .response(PMDControlPointResponse(opcode: .start, stream: PMDStream(.ecg), status: PMDStatus(15))))
    }

    @Test("an error response may end after its status; its more byte is not read")
    func errorResponses() throws {
        #expect(try PMDControlPointIndication.decode(bytes("F0 02 00 0A")) == .response(PMDControlPointResponse(
            opcode: .start, stream: PMDStream(.ecg), status: .invalidMTU)))
        #expect(try PMDControlPointIndication.decode(bytes("F0 02 00 08 01")) == .response(PMDControlPointResponse(
            opcode: .start, stream: PMDStream(.ecg), status: .invalidSampleRate, more: false)))
    }

    @Test("a response announcing more is joined with its continuation")
    func continuation() throws {
        guard case let .response(first) = try PMDControlPointIndication.decode(bytes("F0 01 02 00 01 00 01 C8 00")),
            case let .response(second) = try PMDControlPointIndication.decode(bytes("F0 01 02 00 00 01 01 10 00"))
        else {
            Issue.record("not responses")
            return
        }
        #expect(first.more)
        let joined = try first.appending(second)
        #expect(!joined.more)
        #expect(try joined.settings() == PMDSettings(sampleRates: [200], resolutions: [16]))
        // Unannounced, other opcode, failed continuation.
        #expect(wireError { () throws(WireError) in try second.appending(first) }?.context
            == "PMD control point continuation")
        let other = PMDControlPointResponse(opcode: .start, stream: PMDStream(.acceleration), status: .success)
        #expect(wireError { () throws(WireError) in try first.appending(other) }?.offset == 1)
        let failed = PMDControlPointResponse(opcode: .getSettings, stream: PMDStream(.acceleration), status: .invalidState)
        #expect(wireError { () throws(WireError) in try first.appending(failed) }?.offset == 3)
    }

    @Test("01 + type bytes is the device's notice that it stopped those streams")
    func unsolicitedStop() throws {
        let indication = try PMDControlPointIndication.decode(bytes("01 01 02"))
        #expect(indication == .streamsStopped([PMDStream(.ppg), PMDStream(.acceleration)]))
        #expect(indication.encoded == bytes("01 01 02"))
        #expect(try PMDControlPointIndication.decode(bytes("01 80")) == .streamsStopped([PMDStream(.ecg, recording: .offline)]))
    }

    @Test("an indication that is neither a response nor a stop notice is a typed error")
    func notAResponse() {
        #expect(wireError { () throws(WireError) in try PMDControlPointIndication.decode(bytes("0F 05 00")) }
            == WireError(.unknownValue(0x0F), at: 0, in: "PMD control point indication"))
        #expect(wireError { () throws(WireError) in try PMDControlPointIndication.decode([]) }
            == WireError(.truncated(needed: 1, available: 0), at: 0, in: "PMD control point indication"))
        #expect(wireError { () throws(WireError) in try PMDControlPointIndication.decode(bytes("F0 02 00")) }
            == WireError(.truncated(needed: 1, available: 0), at: 3, in: "PMD control point response"))
    }

    @Test("requests: unknown opcodes, missing type bytes and trailing bytes are refused")
    func badRequests() {
        #expect(wireError { () throws(WireError) in try PMDControlPointRequest.decode(bytes("07 00")) }
            == WireError(.unknownValue(7), at: 0, in: "PMD control point request"))
        #expect(wireError { () throws(WireError) in try PMDControlPointRequest.decode(bytes("01")) }?.kind
            == .truncated(needed: 1, available: 0))
        #expect(wireError { () throws(WireError) in try PMDControlPointRequest.decode(bytes("03 02 00")) }
            == WireError(.trailingBytes(count: 1), at: 2, in: "PMD control point request"))
    }
}

@Suite("PMD settings")
struct PMDSettingsTests {
    @Test("every setting type decodes with its value size, several values each")
    func everySetting() throws {
        let hex = "00 02 82 00 C8 00 01 01 10 00 02 01 08 00 03 01 40 1F 00 00 04 01 03 05 01 00 00 80 3F"
            + " 06 01 00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F"
        let settings = try PMDSettings.decode(bytes(hex))
        #expect(settings.sampleRates == [130, 200])
        #expect(settings.resolutions == [16])
        #expect(settings.ranges == [8])
        #expect(settings.milliunitRanges == [8000])
        #expect(settings.channels == [3])
        #expect(settings.factors == [1.0])
        #expect(settings.security == [0x0F0E_0D0C_0B0A_0908_0706_0504_0302_0100])
        #expect(settings.encoded == bytes(hex))
        let sizes: [(PMDSettingType, Int)] = [
            (.sampleRate, 2), (.resolution, 2), (.range, 2), (.rangeMilliunits, 4), (.channels, 1), (.factor, 4),
            (.security, 16),
        ]
        for (type, size) in sizes { #expect(type.valueSize == size) }
        #expect(PMDSettingType(7).valueSize == nil)
    }

    @Test("a truncated setting entry is a typed error")
    func truncatedEntry() {
        // Two sample rates announced, one present.
        #expect(wireError { () throws(WireError) in try PMDSettings.decode(bytes("00 02 82 00")) }
            == WireError(.truncated(needed: 4, available: 2), at: 2, in: "PMD settings"))
        // 255 security values announced in a short value: checked before any is read.
        #expect(wireError { () throws(WireError) in try PMDSettings.decode(bytes("06 FF 00 00")) }?.kind
            == .truncated(needed: 255 * 16, available: 2))
    }

    @Test("an unknown setting type is a typed error; a last lone byte is ignored")
    func unknownTypeAndLoneByte() throws {
        #expect(wireError { () throws(WireError) in try PMDSettings.decode(bytes("00 01 82 00 07 01 00")) }
            == WireError(.unknownValue(7), at: 4, in: "PMD settings"))
        #expect(try PMDSettings.decode(bytes("00 01 82 00 07")) == PMDSettings(sampleRates: [130]))
        #expect(try PMDSettings.decode(bytes("01")).isEmpty)
        #expect(try PMDSettings.decode([]).isEmpty)
    }

    @Test("a selection encodes each setting once with count 1 and never a factor")
    func selection() throws {
        let all = PMDSettingSelection(
            sampleRate: 52, resolution: 16, range: 8, milliunitRange: 8000, channels: 3, security: 1)
        let encoded = all.encoded
        #expect(encoded == bytes(
            "00 01 34 00 01 01 10 00 02 01 08 00 03 01 40 1F 00 00 04 01 03 06 01 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"))
        #expect(try PMDSettingSelection.decode(encoded) == all)
        #expect(wireError { () throws(WireError) in try PMDSettingSelection.decode(bytes("05 01 00 00 80 3F")) }?.kind
            == .invalidValue("a factor is not selectable"))
        #expect(wireError { () throws(WireError) in try PMDSettingSelection.decode(bytes("00 02 82 00 C8 00")) }?.offset
            == 1)
        #expect(wireError { () throws(WireError) in try PMDSettingSelection.decode(bytes("00 01 82 00 00 01 C8 00")) }?
            .offset == 4)
    }
}

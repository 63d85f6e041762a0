import RawbleWire

extension AdvertisingReport {
    /// The device fields `scan` prints, also used for reports inside `decode`:
    /// `address`, `addressType`, `rssi`, `connectable`, `name`, `services`,
    /// `manufacturerData`, `serviceData`, `txPower`, `appearance`; plus the report's own
    /// `eventType`, the raw `data`, and `error` when an AD structure is broken (the fields
    /// decoded before it are still shown).
    var deviceJSON: JSON {
        let ad = AdvertisingData(decoding: data)
        var fields: [(String, JSON)] = [
            ("address", .string(address.description)),
            ("addressType", .string(addressType.description)),
            ("rssi", rssi.map { JSON($0) } ?? .null),
            ("connectable", .bool(isConnectable)),
            ("scanResponse", .bool(isScanResponse)),
            ("eventType", .string(eventTypeName)),
        ]
        fields += ad.deviceFields
        fields.append(("data", .hex(data)))
        if let error = ad.error { fields.append(("error", .string(error.description))) }
        return .object(fields)
    }

    private var eventTypeName: String {
        switch format {
        case .legacy(let type): type.name
        case .extended:
            "extended" + [(isConnectable, " connectable"), (isScannable, " scannable"), (isDirected, " directed"),
                          (isScanResponse, " scan-response"), (eventType.contains(.legacyPDU), " legacy")]
                .filter(\.0).map(\.1).joined()
        }
    }
}

extension AdvertisingData {
    /// Fields of the `scan` device shape that come from advertising data.
    var deviceFields: [(String, JSON)] {
        [
            ("name", JSON(localName)),
            ("services", .array(serviceUUIDs.map { .uuid($0) })),
            ("manufacturerData", .array(manufacturerData.map {
                .object([("company", JSON($0.companyID)), ("data", .hex($0.data))]
                        + ($0.companyName.map { [("companyName", JSON.string($0))] } ?? []))
            })),
            ("serviceData", .array(serviceData.map { entry in
                var item: [(String, JSON)] = [("uuid", .uuid(entry.uuid)), ("data", .hex(entry.data))]
                // The one Heart Rate decoder, wherever HRM bytes appear.
                if entry.uuid == .heartRateService || entry.uuid == .heartRateMeasurement,
                   let m = try? HeartRateMeasurement.decode(entry.data) {
                    item.append(("heartRate", m.json(raw: entry.data)))
                }
                return .object(item)
            })),
            ("txPower", txPowerLevel.map { JSON($0) } ?? .null),
            ("appearance", appearance.map { JSON($0.rawValue) } ?? .null),
        ]
    }

    /// Every structure in order, with its type name and decoded value.
    var structuresJSON: JSON {
        .array(map { structure in
            var item: [(String, JSON)] = [
                ("type", JSON(structure.type.rawValue)), ("typeName", .string(structure.type.name ?? "Unknown AD type")),
            ]
            switch structure {
            case .flags(let flags):
                item.append(("flags", .array(flags.names.map { .string($0) })))
            case let .serviceUUIDs(list, _), let .solicitedServiceUUIDs(list):
                item.append(("uuids", .array(list.map { uuid in
                    .string(uuid.name.map { "\(uuid) (\($0))" } ?? uuid.description)
                })))
            case .localName(let name):
                item.append(("name", .string(name.string)))
            case .txPowerLevel(let level):
                item.append(("dBm", JSON(level)))
            case .manufacturerData(let m):
                item.append(("company", JSON(m.companyID)))
                if let name = m.companyName { item.append(("companyName", .string(name))) }
                item.append(("data", .hex(m.data)))
            case .serviceData(let s):
                item.append(("uuid", .uuid(s.uuid)))
                item += uuidName(s.uuid, key: "uuidName")
                item.append(("data", .hex(s.data)))
            case .appearance(let a):
                item.append(("appearance", JSON(a.rawValue)))
                if let name = a.name { item.append(("appearanceName", .string(name))) }
            case .uri(let uri):
                item.append(("uri", .string(uri.description)))
            case .other(_, let data):
                item.append(("data", .hex(data)))
            default:
                item.append(("value", .string(String(describing: structure.valueDescription))))
            }
            return .object(item)
        })
    }
}

extension ADStructure {
    var valueDescription: String {
        switch self {
        case .peripheralConnectionIntervalRange(let r): r.description
        case .publicTargetAddresses(let a), .randomTargetAddresses(let a): a.description
        case .advertisingInterval(let i): i.description
        case .leDeviceAddress(let a): a.description
        case .leRole(let r): r.description
        default: "\(self)"
        }
    }
}

/// Describes one H4 packet (type byte + packet): HCI command, event, ACL with its L2CAP
/// frame and, on the ATT channel, the ATT PDU.
enum PacketDescription {
    /// What a capture's earlier packets tell about later ones: the type of the last Read By
    /// Type request per connection, so its response can be decoded in full.
    struct Session {
        var readByTypeRequests: [UInt16: BluetoothUUID] = [:]
        /// Characteristic value handles seen in discovery, per connection.
        var characteristics: [UInt16: [UInt16: BluetoothUUID]] = [:]
        /// The handle of the last Read Request per connection, to name its response.
        var readRequests: [UInt16: UInt16] = [:]

        /// Remembers the value handles of a characteristic discovery response.
        mutating func learn(_ pdu: ATTPDU, connection: UInt16) {
            guard case .readByTypeResponse(let entries) = pdu,
                  readByTypeRequests[connection] == .characteristic else { return }
            for entry in entries {
                if let declaration = try? CharacteristicDeclaration.decode(entry.value) {
                    characteristics[connection, default: [:]][declaration.valueHandle] = declaration.uuid
                }
            }
        }

        /// The value a notification, indication or read carries, decoded when its
        /// characteristic is one this stack knows (Heart Rate Measurement, Body Sensor Location).
        mutating func valueFields(_ pdu: ATTPDU, connection: UInt16) -> [(String, JSON)] {
            let handle: UInt16
            let value: ArraySlice<UInt8>
            switch pdu {
            case let .handleValueNotification(h, v), let .handleValueIndication(h, v):
                handle = h
                value = v
            case .readRequest(let h):
                readRequests[connection] = h
                return []
            case .readResponse(let v):
                guard let h = readRequests.removeValue(forKey: connection) else { return [] }
                handle = h
                value = v
            default:
                return []
            }
            guard let uuid = characteristics[connection]?[handle] else { return [] }
            var fields: [(String, JSON)] = [("characteristic", .uuid(uuid))] + uuidName(uuid, key: "characteristicName")
            switch uuid {
            case .heartRateMeasurement:
                // The one Heart Rate decoder, as everywhere HRM bytes appear.
                do {
                    let measurement = try HeartRateMeasurement.decode(value)
                    fields.append(("heartRate", measurement.json(raw: value)))
                    fields.append(("summary", .string(measurement.summary)))
                } catch {
                    fields.append(("heartRateError", .string(error.description)))
                }
            case .bodySensorLocation:
                if let location = try? BodySensorLocation.decode(value) {
                    fields.append(("bodySensorLocation", location.name.map { .string($0) } ?? JSON(location.rawValue)))
                }
            default:
                break
            }
            return fields
        }
    }

    /// The JSON fields of a packet: `type`, then the decoded packet. Throws when the packet does
    /// not decode (the error names the byte offset within the packet).
    static func json(_ packet: H4Packet) throws(WireError) -> [(String, JSON)] {
        var session = Session()
        return try json(packet, session: &session)
    }

    static func json(_ packet: H4Packet, session: inout Session) throws(WireError) -> [(String, JSON)] {
        switch packet.type {
        case .command:
            let command = try HCICommand.decode(packet.bytes)
            return [("type", "command"), ("opcode", JSON(command.opcode.rawValue)), ("name", .string(command.name))]
                + commandParameters(command)
        case .event:
            let event = try HCIEvent.decode(packet.bytes)
            return [("type", "event"), ("code", JSON(event.code)), ("name", .string(event.name))] + eventFields(event)
        case .acl:
            let acl = try ACLPacket.decode(packet.bytes)
            var fields: [(String, JSON)] = [
                ("type", "acl"), ("handle", JSON(acl.handle)),
                ("boundary", .string(boundaryName(acl.packetBoundary))), ("length", JSON(acl.payload.count)),
            ]
            if acl.packetBoundary != .continuation {
                fields += try l2capFields(acl.payload, connection: acl.handle, session: &session)
            } else {
                fields.append(("fragment", .hex(acl.payload)))
            }
            return fields
        case .sco, .iso:
            return [("type", .string(packet.type == .sco ? "sco" : "iso")), ("data", .hex(packet.bytes))]
        }
    }

    static func boundaryName(_ boundary: ACLHeader.PacketBoundary) -> String {
        switch boundary {
        case .firstNonFlushable: "first (non-flushable)"
        case .continuation: "continuation"
        case .firstFlushable: "first (flushable)"
        case .reserved: "reserved"
        }
    }

    /// The L2CAP basic frame in a first ACL fragment; a frame longer than the fragment is shown
    /// as the start of a fragmented PDU, not an error.
    static func l2capFields(_ payload: ArraySlice<UInt8>, connection: UInt16, session: inout Session)
        throws(WireError) -> [(String, JSON)]
    {
        guard let header = L2CAPHeader(peeking: payload) else {
            throw WireError(.truncated(needed: 4, available: payload.count), at: payload.startIndex, in: "L2CAP basic header")
        }
        var fields: [(String, JSON)] = [
            ("channel", JSON(header.channelID.rawValue)), ("channelName", .string(header.channelID.name)),
        ]
        if Int(header.length) + 4 > payload.count {
            fields.append(("l2capLength", JSON(header.length)))
            fields.append(("fragmented", true))
            // The first fragment holds the ATT opcode: name it, the rest waits for reassembly.
            if header.channelID == .att, let opcode = payload.dropFirst(4).first {
                fields.append(("attOpcode", JSON(opcode)))
                fields.append(("attName", .string(ATTOpcode(opcode).name)))
            }
            return fields
        }
        let frame = try L2CAPFrame.decode(payload)
        switch frame.channelID {
        case .att:
            let pdu = try ATTPDU.decode(frame.payload)
            switch pdu {
            case let .readByTypeRequest(_, _, type):
                session.readByTypeRequests[connection] = type
                fields.append(("att", pdu.json))
            case .readByTypeResponse:
                fields.append(("att", pdu.json(readByTypeRequestType: session.readByTypeRequests[connection])))
            default:
                var json = pdu.json
                if case .object(let attFields) = json {
                    json = .object(attFields + session.valueFields(pdu, connection: connection))
                }
                fields.append(("att", json))
            }
            session.learn(pdu, connection: connection)
        case .leSignaling:
            let command = try LESignalingCommand.decode(frame.payload)
            let payload: (String, JSON) = if case .unknown(_, let data) = command.payload {
                ("parameterBytes", .hex(data))
            } else {
                ("fields", Reflection.json(command.payload))
            }
            fields.append(("signaling", .object([
                ("code", JSON(command.code.rawValue)), ("name", .string(command.code.name)),
                ("identifier", JSON(command.identifier)), payload,
            ])))
        case .securityManager:
            let command = try SMPCommand.decode(frame.payload)
            let payload: (String, JSON) = if case .other(_, let parameters) = command {
                ("parameterBytes", .hex(parameters))
            } else {
                ("fields", Reflection.json(command))
            }
            fields.append(("smp", .object([
                ("code", JSON(command.code.rawValue)), ("name", .string(command.code.name)), payload,
            ])))
        default:
            fields.append(("payload", .hex(frame.payload)))
        }
        return fields
    }

    /// A command's parameters: `parameters`, an object of the decoded fields, for a command this
    /// stack models; `parameterBytes`, the parameter block in hex, for any other (its opcode and
    /// name are the packet's own fields, so nothing here repeats them).
    static func commandParameters(_ command: HCICommand) -> [(String, JSON)] {
        if case .other(let raw) = command { return [("parameterBytes", .hex(raw.parameters))] }
        let mirror = Mirror(reflecting: command)
        guard let payload = mirror.children.first else { return [("parameters", .object([]))] }
        if case .object(let fields) = Reflection.json(payload.value) { return [("parameters", .object(fields))] }
        return [("parameters", .object([(payload.label ?? "value", Reflection.json(payload.value))]))]
    }

    /// A Command Complete's `status` and what follows it, without the opcode (the event's own
    /// `opcode` field): `returnParameters`, an object, when the command returns more than its
    /// status and this stack decodes it; `returnParameterBytes`, the block in hex (status first),
    /// when it does not or the command failed. Bytes that do not fit the command add `error`.
    static func returnFields(_ complete: HCIEvent.CommandComplete) -> [(String, JSON)] {
        let bytes: [(String, JSON)] = [("returnParameterBytes", .hex(complete.returnParameters))]
        guard let result = try? CommandReturn.decode(opcode: complete.opcode, returnParameters: complete.returnParameters) else {
            return bytes + [("error", "return parameters do not match the command")]
        }
        let status: [(String, JSON)] = [("status", .string(result.status?.description ?? "none"))]
        switch result {
        case .success:
            return status
        case .failure, .other:
            return status + bytes
        case .connectionHandle(_, let handle):
            return status + [("returnParameters", .object([("connectionHandle", .object([("handle", JSON(handle))]))]))]
        default:
            return status + [("returnParameters", Reflection.json(result))]
        }
    }

    static func eventFields(_ event: HCIEvent) -> [(String, JSON)] {
        switch event {
        case .commandComplete(let complete):
            return [
                ("numHCICommandPackets", JSON(complete.numHCICommandPackets)),
                ("opcode", JSON(complete.opcode.rawValue)),
                ("command", .string(complete.opcode.name ?? complete.opcode.description)),
            ] + returnFields(complete)
        case .commandStatus(let status):
            // As Command Complete: the opcode a number, the command's name beside it.
            return [
                ("status", .string(status.status.description)),
                ("numHCICommandPackets", JSON(status.numHCICommandPackets)),
                ("opcode", JSON(status.opcode.rawValue)),
                ("command", .string(status.opcode.name ?? status.opcode.description)),
            ]
        case .le(let meta):
            return [("subevent", JSON(meta.subeventCode))] + subeventFields(meta)
        case .unknown(_, let parameters):
            return [("parameterBytes", .hex(parameters))]
        default:
            return [("fields", Reflection.json(event))]
        }
    }

    /// An LE subevent's fields after its `subevent` code: advertising reports as `reports`, a
    /// subevent this stack does not decode as `parameterBytes` (as an undecoded command), any
    /// other as `fields`.
    static func subeventFields(_ meta: LEMetaEvent) -> [(String, JSON)] {
        switch meta {
        case .advertisingReport(let reports), .extendedAdvertisingReport(let reports):
            [("reports", .array(reports.map(\.deviceJSON)))]
        case .unknown(_, let parameters):
            [("parameterBytes", .hex(parameters))]
        default:
            [("fields", Reflection.json(meta))]
        }
    }
}

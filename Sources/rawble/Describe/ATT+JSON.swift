import RawbleWire

extension ATTPDU {
    /// The JSON the CLI prints for an ATT PDU: `opcode` (number), `name`, `handle` where the
    /// PDU has one, `value` (hex) where it has one, then the PDU's other fields.
    var json: JSON { json(readByTypeRequestType: nil) }

    /// As ``json``; when the Read By Type request this answers is known (a capture), a response
    /// to a characteristic-declaration request also shows each declaration decoded.
    func json(readByTypeRequestType: BluetoothUUID?) -> JSON {
        var fields: [(String, JSON)] = [("opcode", JSON(opcode.rawValue)), ("name", .string(opcode.name))]
        func range(_ start: UInt16, _ end: UInt16) {
            fields.append(("startHandle", .handle(start)))
            fields.append(("endHandle", .handle(end)))
        }
        switch self {
        case let .errorResponse(requestOpcode, handle, errorCode):
            fields.append(("handle", .handle(handle)))
            fields.append(("requestOpcode", JSON(requestOpcode.rawValue)))
            fields.append(("request", .string(requestOpcode.name)))
            fields.append(("error", JSON(errorCode.rawValue)))
            fields.append(("errorName", .string(errorCode.name)))
        case .exchangeMTURequest(let mtu):
            fields.append(("mtu", JSON(mtu)))
        case .exchangeMTUResponse(let mtu):
            fields.append(("mtu", JSON(mtu)))
        case let .findInformationRequest(start, end):
            range(start, end)
        case .findInformationResponse(let entries):
            fields.append(("entries", .array(entries.map {
                .object([("handle", .handle($0.handle)), ("uuid", .uuid($0.uuid))] + uuidName($0.uuid))
            })))
        case let .findByTypeValueRequest(start, end, type, value):
            range(start, end)
            fields.append(("type", .uuid(BluetoothUUID(type))))
            fields.append(("value", .hex(value)))
        case .findByTypeValueResponse(let entries):
            fields.append(("entries", .array(entries.map {
                .object([("handle", .handle($0.foundHandle)), ("groupEndHandle", .handle($0.groupEndHandle))])
            })))
        case let .readByTypeRequest(start, end, type):
            range(start, end)
            fields.append(("type", .uuid(type)))
            fields += uuidName(type, key: "typeName")
        case .readByTypeResponse(let entries):
            fields.append(("entries", .array(entries.map { entry in
                var item: [(String, JSON)] = [("handle", .handle(entry.handle)), ("value", .hex(entry.value))]
                if readByTypeRequestType == .characteristic,
                   let declaration = try? CharacteristicDeclaration.decode(entry.value) {
                    item.append(("properties", .array(declaration.properties.names.map { .string($0) })))
                    item.append(("valueHandle", .handle(declaration.valueHandle)))
                    item.append(("uuid", .uuid(declaration.uuid)))
                    item += uuidName(declaration.uuid)
                }
                return .object(item)
            })))
        case .readRequest(let handle):
            fields.append(("handle", .handle(handle)))
        case .readResponse(let value), .readBlobResponse(let value):
            fields.append(("value", .hex(value)))
        case let .readBlobRequest(handle, offset):
            fields.append(("handle", .handle(handle)))
            fields.append(("offset", JSON(offset)))
        case .readMultipleRequest(let handles), .readMultipleVariableRequest(let handles):
            fields.append(("handles", .array(handles.map { .handle($0) })))
        case .readMultipleResponse(let values):
            fields.append(("value", .hex(values)))
        case let .readByGroupTypeRequest(start, end, type):
            range(start, end)
            fields.append(("type", .uuid(type)))
            fields += uuidName(type, key: "typeName")
        case .readByGroupTypeResponse(let entries):
            fields.append(("entries", .array(entries.map { entry in
                var item: [(String, JSON)] = [
                    ("handle", .handle(entry.handle)), ("endGroupHandle", .handle(entry.endGroupHandle)),
                    ("value", .hex(entry.value)),
                ]
                // Service discovery: the value is the service UUID.
                if let uuid = BluetoothUUID(littleEndianBytes: entry.value) {
                    item.append(("uuid", .uuid(uuid)))
                    item += uuidName(uuid)
                }
                return .object(item)
            })))
        case let .writeRequest(handle, value), let .writeCommand(handle, value),
             let .handleValueNotification(handle, value), let .handleValueIndication(handle, value):
            fields.append(("handle", .handle(handle)))
            fields.append(("value", .hex(value)))
        case let .signedWriteCommand(handle, value, signature):
            fields.append(("handle", .handle(handle)))
            fields.append(("value", .hex(value)))
            fields.append(("signature", .hex(signature)))
        case let .prepareWriteRequest(handle, offset, value), let .prepareWriteResponse(handle, offset, value):
            fields.append(("handle", .handle(handle)))
            fields.append(("offset", JSON(offset)))
            fields.append(("value", .hex(value)))
        case .executeWriteRequest(let flags):
            fields.append(("flags", .string(flags.description)))
        case .writeResponse, .executeWriteResponse, .handleValueConfirmation:
            break
        case .readMultipleVariableResponse(let entries):
            fields.append(("values", .array(entries.map {
                .object([("length", JSON($0.length)), ("value", .hex($0.value))])
            })))
        case .multipleHandleValueNotification(let entries):
            fields.append(("values", .array(entries.map {
                .object([("handle", .handle($0.handle)), ("value", .hex($0.value))])
            })))
        case .unknown(_, let parameters):
            fields.append(("parameterBytes", .hex(parameters)))
        }
        return .object(fields)
    }
}

/// `[("name", "Heart Rate")]` when the UUID has an assigned name, else nothing.
func uuidName(_ uuid: BluetoothUUID, key: String = "name") -> [(String, JSON)] {
    guard let name = uuid.name else { return [] }
    return [(key, .string(name))]
}

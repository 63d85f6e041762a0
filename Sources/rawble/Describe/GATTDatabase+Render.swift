import RawbleGATT
import RawbleGATTCore
import RawbleWire

extension GATTDatabase {
    /// The `gatt --json` document of cli.md.
    func json(address: DeviceAddress, mtu: UInt16, values: [UInt16: Result<[UInt8], GATTError>]) -> JSON {
        .object([
            ("address", .string(address.address.description)),
            ("addressType", .string(address.type.description)),
            ("mtu", JSON(mtu)),
            ("services", .array(services.map { entry in
                .object([
                    ("uuid", .uuid(entry.service.uuid)),
                    ("name", JSON(entry.service.uuid.name)),
                    ("start", .handle(entry.service.startHandle)),
                    ("end", .handle(entry.service.endHandle)),
                    ("includedServices", .array(entry.includedServices.map { included in
                        .object([("handle", .handle(included.declarationHandle)), ("start", .handle(included.startHandle)),
                                 ("end", .handle(included.endHandle)), ("uuid", included.uuid.map { .uuid($0) } ?? .null)])
                    })),
                    ("characteristics", .array(entry.characteristics.map { item in
                        let c = item.characteristic
                        var fields: [(String, JSON)] = [
                            ("uuid", .uuid(c.uuid)),
                            ("name", JSON(c.uuid.name)),
                            ("handle", .handle(c.declarationHandle)),
                            ("valueHandle", .handle(c.valueHandle)),
                            ("properties", .array(c.properties.names.map { .string($0) })),
                        ]
                        switch values[c.valueHandle] {
                        case .success(let value)?:
                            fields.append(("value", .hex(value)))
                            fields += readable(value, of: item, values: values).jsonFields
                        case .failure(let error)?: fields.append(("readError", .string(error.description)))
                        case nil: break
                        }
                        fields.append(("descriptors", .array(item.descriptors.map { d in
                            var descriptor: [(String, JSON)] = [("uuid", .uuid(d.uuid)), ("name", JSON(d.uuid.name)), ("handle", .handle(d.handle))]
                            switch values[d.handle] {
                            case .success(let value)?:
                                descriptor.append(("value", .hex(value)))
                                descriptor += ReadableValues.describe(value, of: d.uuid).jsonFields
                            case .failure(let error)?: descriptor.append(("readError", .string(error.description)))
                            case nil: break
                            }
                            return .object(descriptor)
                        })))
                        return .object(fields)
                    })),
                ])
            })),
        ])
    }

    /// The readable tree: services, characteristics with properties and values, descriptors.
    func tree(address: DeviceAddress, mtu: UInt16, values: [UInt16: Result<[UInt8], GATTError>]) -> [String] {
        var lines = ["\(address.address) (\(address.type)), MTU \(mtu)"]
        for entry in services {
            let s = entry.service
            lines.append("\(named(s.uuid))  \(handleText(s.startHandle))–\(handleText(s.endHandle))")
            for included in entry.includedServices {
                lines.append("  includes \(included.uuid.map(named) ?? "a service")  \(handleText(included.startHandle))–\(handleText(included.endHandle))")
            }
            for item in entry.characteristics {
                let c = item.characteristic
                var line = "  \(named(c.uuid))  \(handleText(c.valueHandle))  [\(c.properties.names.joined(separator: ", "))]"
                switch values[c.valueHandle] {
                case .success(let value)?: line += "  = \(readable(value, of: item, values: values).treeText)"
                case .failure(let error)?: line += "  (read failed: \(error))"
                case nil: break
                }
                lines.append(line)
                for d in item.descriptors {
                    var line = "    \(named(d.uuid))  \(handleText(d.handle))"
                    switch values[d.handle] {
                    case .success(let value)?: line += "  = \(ReadableValues.describe(value, of: d.uuid).treeText)"
                    case .failure(let error)?: line += "  (read failed: \(error))"
                    case nil: break
                    }
                    lines.append(line)
                }
            }
        }
        return lines
    }

    private func named(_ uuid: BluetoothUUID) -> String {
        uuid.name.map { "\($0) (\(uuid))" } ?? uuid.description
    }

    /// Whether `gatt` reads a descriptor of this type: those that say what the value is (User
    /// Description, Presentation Format, Extended Properties).
    static func readsDescriptor(_ uuid: BluetoothUUID) -> Bool {
        uuid == .characteristicUserDescription || uuid == .characteristicPresentationFormat
            || uuid == .characteristicExtendedProperties
    }

    /// A characteristic's value made readable: by its UUID, else by its Presentation Format
    /// descriptor when it has one that was read and decodes.
    private func readable(_ value: [UInt8], of item: GATTDatabase.Characteristic,
                          values: [UInt16: Result<[UInt8], GATTError>]) -> ReadableValue {
        let byUUID = ReadableValues.describe(value, of: item.characteristic.uuid)
        guard !byUUID.isKnownFormat,
              let descriptor = item.descriptors.first(where: { $0.uuid == .characteristicPresentationFormat }),
              case .success(let bytes)? = values[descriptor.handle],
              let presentation = try? PresentationFormat.decode(bytes) else { return byUUID }
        return ReadableValues.describe(value, presentedAs: presentation)
    }
}

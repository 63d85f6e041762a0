import RawbleGATT

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
                        case .success(let value)?: fields.append(("value", .hex(value)))
                        case .failure(let error)?: fields.append(("readError", .string(error.description)))
                        case nil: break
                        }
                        fields.append(("descriptors", .array(item.descriptors.map { d in
                            .object([("uuid", .uuid(d.uuid)), ("name", JSON(d.uuid.name)), ("handle", .handle(d.handle))])
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
                case .success(let value)?: line += "  = \(readable(value))"
                case .failure(let error)?: line += "  (read failed: \(error))"
                case nil: break
                }
                lines.append(line)
                for d in item.descriptors {
                    lines.append("    \(named(d.uuid))  \(handleText(d.handle))")
                }
            }
        }
        return lines
    }

    private func named(_ uuid: BluetoothUUID) -> String {
        uuid.name.map { "\($0) (\(uuid))" } ?? uuid.description
    }

    /// Hex, plus the text when the value is printable UTF-8 (names, model numbers).
    private func readable(_ value: [UInt8]) -> String {
        if value.isEmpty { return "(empty)" }
        let hex = value.count > 32 ? Hex.encode(value.prefix(32)) + "… (\(value.count) bytes)" : Hex.encode(value)
        guard value.count >= 3, let text = String(validating: value, as: UTF8.self),
              text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else { return hex }
        return "\(hex) \"\(text)\""
    }
}

// Discovery procedures (Core Vol 3 Part G 4.4–4.7): services, included services,
// characteristics and descriptors. Each walks a handle range one request at a time, ends on
// Attribute Not Found or at the end of the range, and rejects responses whose handles do not
// advance (see HandleCursor), so it terminates whatever the server answers.

import RawbleWire

/// Discover All Primary Services (Core Vol 3 Part G 4.4.1): Read By Group Type of «Primary
/// Service» over `range`, continuing after each response's last group end.
public struct DiscoverPrimaryServices: GATTProcedure {
    private var walk: HandleWalk<GATTService>

    public init(range: ClosedRange<UInt16> = 0x0001...0xFFFF) {
        walk = HandleWalk(range, request: .readByGroupTypeRequest, finding: "services")
    }

    public mutating func start() -> GATTProcedureStep<[GATTService]> { next() }

    private mutating func next() -> GATTProcedureStep<[GATTService]> {
        walk.next { .readByGroupTypeRequest(startHandle: $0.start, endHandle: $0.end, groupType: .primaryService) }
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<[GATTService]> {
        try walk.accept(response)
        guard case .readByGroupTypeResponse(let entries) = response else {
            try walk.expectEnd(response)
            return .finished(walk.items)
        }
        try walk.collect(entries, in: "Read By Group Type Response", handle: \.handle) { entry throws(GATTError) in
            guard entry.endGroupHandle >= entry.handle else {
                throw .invalidResponse("service at 0x\(Hex.padded(entry.handle, digits: 4)) ends before it starts (0x\(Hex.padded(entry.endGroupHandle, digits: 4)))")
            }
            let uuid = try decodeUUID(entry.value, in: "service declaration 0x\(Hex.padded(entry.handle, digits: 4))")
            return (GATTService(uuid: uuid, startHandle: entry.handle, endHandle: entry.endGroupHandle), entry.endGroupHandle)
        }
        return next()
    }
}

/// Discover Primary Service by Service UUID (Core Vol 3 Part G 4.4.2): Find By Type Value of
/// «Primary Service» with the UUID as value (2 bytes when it has a 16-bit form, else 16).
public struct DiscoverPrimaryServicesByUUID: GATTProcedure {
    public let uuid: BluetoothUUID
    private var walk: HandleWalk<GATTService>

    public init(_ uuid: BluetoothUUID, range: ClosedRange<UInt16> = 0x0001...0xFFFF) {
        self.uuid = uuid
        walk = HandleWalk(range, request: .findByTypeValueRequest, finding: "services")
    }

    public mutating func start() -> GATTProcedureStep<[GATTService]> { next() }

    private mutating func next() -> GATTProcedureStep<[GATTService]> {
        let value = uuid.littleEndianBytes(width: uuid.uuid16 != nil ? 2 : 16)
        return walk.next { .findByTypeValueRequest(startHandle: $0.start, endHandle: $0.end, attributeType: 0x2800, value: value[...]) }
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<[GATTService]> {
        try walk.accept(response)
        guard case .findByTypeValueResponse(let ranges) = response else {
            try walk.expectEnd(response)
            return .finished(walk.items)
        }
        try walk.collect(ranges, in: "Find By Type Value Response", handle: \.foundHandle) { [uuid] range throws(GATTError) in
            guard range.groupEndHandle >= range.foundHandle else {
                throw .invalidResponse("service at 0x\(Hex.padded(range.foundHandle, digits: 4)) ends before it starts (0x\(Hex.padded(range.groupEndHandle, digits: 4)))")
            }
            return (GATTService(uuid: uuid, startHandle: range.foundHandle, endHandle: range.groupEndHandle), range.groupEndHandle)
        }
        return next()
    }
}

/// Find Included Services (Core Vol 3 Part G 4.5.1): Read By Type of «Include» over the
/// service's handles; an include without a 16-bit UUID is followed by a Read Request on the
/// included service's declaration to learn its 128-bit UUID.
public struct FindIncludedServices: GATTProcedure {
    private var cursor: HandleCursor
    private var includes: [GATTIncludedService] = []
    /// Indexes into `includes` whose UUID still has to be read, in order.
    private var unread: [Int] = []
    private var pending: ATTOpcode?

    public init(of service: GATTService) {
        // A service that ends before it starts has no handles to search.
        cursor = service.endHandle >= service.startHandle
            ? HandleCursor(service.startHandle...service.endHandle) : HandleCursor(0...0)
    }

    public mutating func start() -> GATTProcedureStep<[GATTIncludedService]> { next() }

    private mutating func next() -> GATTProcedureStep<[GATTIncludedService]> {
        if let index = unread.first, includes.indices.contains(index) {
            pending = .readRequest
            return .send(.readRequest(handle: includes[index].startHandle))
        }
        guard !cursor.isDone else {
            pending = nil
            return .finished(includes)
        }
        pending = .readByTypeRequest
        return .send(.readByTypeRequest(startHandle: cursor.start, endHandle: cursor.end, attributeType: .include))
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<[GATTIncludedService]> {
        guard let request = pending else { throw .noRequestOutstanding(response) }
        pending = nil // until the next request: an answer that throws ends the procedure
        switch (request, response) {
        case (.readByTypeRequest, .readByTypeResponse(let entries)):
            guard !entries.isEmpty else { throw .invalidResponse("empty Read By Type Response") }
            var previous: UInt16?
            for entry in entries {
                try cursor.check(entry.handle, after: previous, in: "Read By Type Response")
                guard let declaration = try? IncludeDeclaration.decode(entry.value) else {
                    throw .invalidResponse("include declaration 0x\(Hex.padded(entry.handle, digits: 4)) of \(entry.value.count) bytes; must be 4 or 6")
                }
                guard declaration.includedServiceHandle != 0,
                      declaration.endGroupHandle >= declaration.includedServiceHandle else {
                    throw .invalidResponse("include declaration 0x\(Hex.padded(entry.handle, digits: 4)) names the invalid range 0x\(Hex.padded(declaration.includedServiceHandle, digits: 4))–0x\(Hex.padded(declaration.endGroupHandle, digits: 4))")
                }
                if declaration.serviceUUID == nil { unread.append(includes.count) }
                includes.append(GATTIncludedService(
                    declarationHandle: entry.handle, startHandle: declaration.includedServiceHandle,
                    endHandle: declaration.endGroupHandle, uuid: declaration.serviceUUID))
                try checkBound(includes.count, "included services")
                previous = entry.handle
            }
            if let previous { cursor.advance(past: previous) }
            return next()
        case (.readRequest, .readResponse(let value)):
            guard let index = unread.first, includes.indices.contains(index) else {
                throw .noRequestOutstanding(response)
            }
            let handle = includes[index].startHandle
            guard value.count == 16, let uuid = BluetoothUUID(littleEndianBytes: value) else {
                throw .invalidResponse("included service declaration 0x\(Hex.padded(handle, digits: 4)) holds \(value.count) bytes; a 128-bit UUID has 16")
            }
            includes[index].uuid = uuid
            unread.removeFirst()
            return next()
        case let (_, .errorResponse(requestOpcode, handle, code)):
            let error = try GATTError.fromErrorResponse(requestOpcode: requestOpcode, handle: handle, code: code, answering: request)
            guard request == .readByTypeRequest, code == .attributeNotFound else { throw .att(error) }
            cursor = HandleCursor(0...0)
            return next()
        default:
            throw .unexpected(response, to: request)
        }
    }
}

/// Discover All Characteristics of a Service, or by UUID (Core Vol 3 Part G 4.6.1, 4.6.2):
/// Read By Type of «Characteristic» over the service's handles. Every declaration is walked
/// even when filtering by UUID, because each characteristic ends just before the next
/// declaration (the last one at the service's end).
public struct DiscoverCharacteristics: GATTProcedure {
    /// Only characteristics of this type are returned; all when `nil`.
    public let uuid: BluetoothUUID?
    private let serviceEnd: UInt16
    /// Every declaration found, whatever its UUID, with its handle.
    private var walk: HandleWalk<Found>
    private struct Found: Sendable {
        var handle: UInt16
        var declaration: CharacteristicDeclaration
    }

    public init(of service: GATTService, uuid: BluetoothUUID? = nil) {
        self.uuid = uuid
        serviceEnd = service.endHandle
        // A service that ends before it starts has no handles to search.
        walk = HandleWalk(service.endHandle >= service.startHandle ? service.startHandle...service.endHandle : 0...0,
                          request: .readByTypeRequest, finding: "characteristics")
    }

    public mutating func start() -> GATTProcedureStep<[GATTCharacteristic]> { next() }

    private mutating func next() -> GATTProcedureStep<[GATTCharacteristic]> {
        let request = walk.nextRequest {
            .readByTypeRequest(startHandle: $0.start, endHandle: $0.end, attributeType: .characteristic)
        }
        guard let request else { return finish() }
        return .send(request)
    }

    private mutating func finish() -> GATTProcedureStep<[GATTCharacteristic]> {
        let declarations = walk.items
        var characteristics: [GATTCharacteristic] = []
        for (index, entry) in declarations.enumerated() {
            // Checked on arrival: the next declaration lies past this one's value handle, so the
            // handle before it exists; the comparison keeps that true should the check change.
            let valueHandle = entry.declaration.valueHandle
            var end = serviceEnd
            if index + 1 < declarations.count {
                let next = declarations[index + 1].handle
                end = next > valueHandle ? next - 1 : valueHandle
            }
            guard uuid == nil || entry.declaration.uuid == uuid else { continue }
            characteristics.append(GATTCharacteristic(
                uuid: entry.declaration.uuid, declarationHandle: entry.handle, valueHandle: entry.declaration.valueHandle,
                properties: entry.declaration.properties, endHandle: max(end, valueHandle)))
        }
        return .finished(characteristics)
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<[GATTCharacteristic]> {
        try walk.accept(response)
        switch response {
        case .readByTypeResponse(let entries):
            guard !entries.isEmpty else { throw .invalidResponse("empty Read By Type Response") }
            var previous: UInt16?
            var lastDeclaration: UInt16?
            for entry in entries {
                // The next declaration must lie past the previous characteristic's value.
                try walk.cursor.check(entry.handle, after: previous ?? walk.items.last?.declaration.valueHandle,
                                      in: "Read By Type Response")
                guard let declaration = try? CharacteristicDeclaration.decode(entry.value) else {
                    throw .invalidResponse("characteristic declaration 0x\(Hex.padded(entry.handle, digits: 4)) of \(entry.value.count) bytes; must be 5 or 19")
                }
                guard declaration.valueHandle > entry.handle, declaration.valueHandle <= serviceEnd else {
                    // No arithmetic on the server's handles here: a declaration at 0xFFFF (or at
                    // the service's end) has no handle after it to name.
                    throw .invalidResponse("characteristic declaration 0x\(Hex.padded(entry.handle, digits: 4)) has its value at 0x\(Hex.padded(declaration.valueHandle, digits: 4)), which must lie after the declaration and within the service (up to 0x\(Hex.padded(serviceEnd, digits: 4)))")
                }
                try walk.append(Found(handle: entry.handle, declaration: declaration))
                previous = declaration.valueHandle
                lastDeclaration = entry.handle
            }
            // The next request starts after the last declaration (Core Vol 3 Part G 4.6.1);
            // when that declaration's value is the service's last handle, none can follow.
            if let previous, let lastDeclaration {
                walk.cursor.advance(past: previous >= walk.cursor.end ? previous : lastDeclaration)
            }
            return next()
        default:
            try walk.expectEnd(response)
            return finish()
        }
    }
}

/// Discover All Characteristic Descriptors (Core Vol 3 Part G 4.7.1): Find Information over
/// the handles after the characteristic's value up to its end.
public struct DiscoverDescriptors: GATTProcedure {
    private var walk: HandleWalk<GATTDescriptor>

    public init(of characteristic: GATTCharacteristic) {
        self.init(handles: characteristic.descriptorHandles)
    }

    /// Descriptors in an explicit range (`nil`: none to discover).
    public init(handles: ClosedRange<UInt16>?) {
        walk = HandleWalk(handles ?? 0...0, request: .findInformationRequest, finding: "descriptors")
    }

    public mutating func start() -> GATTProcedureStep<[GATTDescriptor]> { next() }

    private mutating func next() -> GATTProcedureStep<[GATTDescriptor]> {
        walk.next { .findInformationRequest(startHandle: $0.start, endHandle: $0.end) }
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<[GATTDescriptor]> {
        try walk.accept(response)
        guard case .findInformationResponse(let entries) = response else {
            try walk.expectEnd(response)
            return .finished(walk.items)
        }
        try walk.collect(entries, in: "Find Information Response", handle: \.handle) { entry in
            (GATTDescriptor(uuid: entry.uuid, handle: entry.handle), entry.handle)
        }
        return next()
    }
}

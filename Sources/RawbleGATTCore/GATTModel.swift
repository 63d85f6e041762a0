import RawbleWire

/// A service as discovered: its type and the handles it spans.
public struct GATTService: Hashable, Sendable, CustomStringConvertible {
    public var uuid: BluetoothUUID
    /// The service declaration's handle.
    public var startHandle: UInt16
    /// The last handle of the service, as the server reports it.
    public var endHandle: UInt16
    /// Primary or secondary (included services may be secondary).
    public var isPrimary: Bool

    public init(uuid: BluetoothUUID, startHandle: UInt16, endHandle: UInt16, isPrimary: Bool = true) {
        self.uuid = uuid
        self.startHandle = startHandle
        self.endHandle = endHandle
        self.isPrimary = isPrimary
    }

    public var description: String {
        "\(uuid.name ?? uuid.description) 0x\(Hex.padded(startHandle, digits: 4))–0x\(Hex.padded(endHandle, digits: 4))"
    }
}

/// A service included by another (an Include declaration).
public struct GATTIncludedService: Hashable, Sendable {
    /// The include declaration's own handle.
    public var declarationHandle: UInt16
    public var startHandle: UInt16
    public var endHandle: UInt16
    /// The included service's UUID (read separately when it is 128-bit).
    public var uuid: BluetoothUUID?

    public init(declarationHandle: UInt16, startHandle: UInt16, endHandle: UInt16, uuid: BluetoothUUID?) {
        self.declarationHandle = declarationHandle
        self.startHandle = startHandle
        self.endHandle = endHandle
        self.uuid = uuid
    }
}

/// A characteristic as discovered from its declaration.
public struct GATTCharacteristic: Hashable, Sendable, CustomStringConvertible {
    public var uuid: BluetoothUUID
    /// The characteristic declaration's handle.
    public var declarationHandle: UInt16
    /// Where the value lives.
    public var valueHandle: UInt16
    public var properties: CharacteristicProperties
    /// The last handle that belongs to this characteristic (its descriptors end here): the
    /// handle before the next declaration, or the service's end.
    public var endHandle: UInt16

    public init(uuid: BluetoothUUID, declarationHandle: UInt16, valueHandle: UInt16,
                properties: CharacteristicProperties, endHandle: UInt16) {
        self.uuid = uuid
        self.declarationHandle = declarationHandle
        self.valueHandle = valueHandle
        self.properties = properties
        self.endHandle = endHandle
    }

    /// Handles where this characteristic's descriptors may be (empty range when none).
    public var descriptorHandles: ClosedRange<UInt16>? {
        valueHandle < endHandle ? (valueHandle + 1)...endHandle : nil
    }

    public var description: String {
        "\(uuid.name ?? uuid.description) value 0x\(Hex.padded(valueHandle, digits: 4)) [\(properties)]"
    }
}

/// A descriptor as discovered (Find Information).
public struct GATTDescriptor: Hashable, Sendable {
    public var uuid: BluetoothUUID
    public var handle: UInt16

    public init(uuid: BluetoothUUID, handle: UInt16) {
        self.uuid = uuid
        self.handle = handle
    }
}

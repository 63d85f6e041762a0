import RawbleGATTCore
import RawbleWire

/// A server's attribute database as discovered: services with their included services,
/// characteristics and descriptors, in handle order.
public struct GATTDatabase: Hashable, Sendable {
    /// One service and what it holds.
    public struct Service: Hashable, Sendable {
        public var service: GATTService
        public var includedServices: [GATTIncludedService]
        public var characteristics: [Characteristic]

        public init(service: GATTService, includedServices: [GATTIncludedService] = [], characteristics: [Characteristic] = []) {
            self.service = service
            self.includedServices = includedServices
            self.characteristics = characteristics
        }
    }

    /// One characteristic and its descriptors.
    public struct Characteristic: Hashable, Sendable {
        public var characteristic: GATTCharacteristic
        public var descriptors: [GATTDescriptor]

        public init(characteristic: GATTCharacteristic, descriptors: [GATTDescriptor] = []) {
            self.characteristic = characteristic
            self.descriptors = descriptors
        }

        /// The Client Characteristic Configuration descriptor, if the characteristic has one.
        public var configurationDescriptor: GATTDescriptor? {
            descriptors.first { $0.uuid == .clientCharacteristicConfiguration }
        }
    }

    public var services: [Service]

    public init(services: [Service]) {
        self.services = services
    }

    /// Every characteristic, in handle order.
    public var characteristics: [Characteristic] { services.flatMap(\.characteristics) }

    /// The first characteristic with `uuid` (in `service` when given).
    public func characteristic(_ uuid: BluetoothUUID, inService service: BluetoothUUID? = nil) -> Characteristic? {
        services.lazy
            .filter { service == nil || $0.service.uuid == service }
            .flatMap(\.characteristics)
            .first { $0.characteristic.uuid == uuid }
    }

    /// The characteristic whose value (or declaration) is at `handle`.
    public func characteristic(handle: UInt16) -> Characteristic? {
        characteristics.first { $0.characteristic.valueHandle == handle || $0.characteristic.declarationHandle == handle }
    }
}

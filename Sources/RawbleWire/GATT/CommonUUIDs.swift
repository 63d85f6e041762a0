// The services and characteristics most LE devices carry, by their Bluetooth SIG names
// (Assigned Numbers, sections 3.4 and 3.8), so that code reads `.batteryLevel`, not `0x2A19`.
// Heart Rate's own are in HeartRate/HeartRateService.swift, those with a value type beside it
// (Battery Level, Device Name, the sensor measurements …) in GATT/Values, the GATT
// declarations and descriptors in GATTDeclarations.swift.

extension BluetoothUUID {
    // MARK: Services

    /// Generic Access service (the device's name and appearance).
    public static let genericAccessService = BluetoothUUID(0x1800)
    /// Generic Attribute service (Service Changed, the database hash).
    public static let genericAttributeService = BluetoothUUID(0x1801)
    /// Immediate Alert service.
    public static let immediateAlertService = BluetoothUUID(0x1802)
    /// Link Loss service.
    public static let linkLossService = BluetoothUUID(0x1803)
    /// Tx Power service.
    public static let txPowerService = BluetoothUUID(0x1804)
    /// Current Time service.
    public static let currentTimeService = BluetoothUUID(0x1805)
    /// Glucose service.
    public static let glucoseService = BluetoothUUID(0x1808)
    /// Health Thermometer service.
    public static let healthThermometerService = BluetoothUUID(0x1809)
    /// Device Information service (manufacturer, model, serial number, revisions).
    public static let deviceInformationService = BluetoothUUID(0x180A)
    /// Battery service.
    public static let batteryService = BluetoothUUID(0x180F)
    /// Blood Pressure service.
    public static let bloodPressureService = BluetoothUUID(0x1810)
    /// Human Interface Device service.
    public static let humanInterfaceDeviceService = BluetoothUUID(0x1812)
    /// Running Speed and Cadence service.
    public static let runningSpeedAndCadenceService = BluetoothUUID(0x1814)
    /// Cycling Speed and Cadence service.
    public static let cyclingSpeedAndCadenceService = BluetoothUUID(0x1816)
    /// Cycling Power service.
    public static let cyclingPowerService = BluetoothUUID(0x1818)
    /// Location and Navigation service.
    public static let locationAndNavigationService = BluetoothUUID(0x1819)
    /// Environmental Sensing service.
    public static let environmentalSensingService = BluetoothUUID(0x181A)
    /// Body Composition service.
    public static let bodyCompositionService = BluetoothUUID(0x181B)
    /// User Data service.
    public static let userDataService = BluetoothUUID(0x181C)
    /// Weight Scale service.
    public static let weightScaleService = BluetoothUUID(0x181D)
    /// Pulse Oximeter service.
    public static let pulseOximeterService = BluetoothUUID(0x1822)
    /// Fitness Machine service.
    public static let fitnessMachineService = BluetoothUUID(0x1826)

    // MARK: Characteristics

    /// Peripheral Preferred Connection Parameters (Generic Access).
    public static let peripheralPreferredConnectionParameters = BluetoothUUID(0x2A04)
    /// Model Number String (Device Information; UTF-8).
    public static let modelNumberString = BluetoothUUID(0x2A24)
    /// Serial Number String (Device Information; UTF-8).
    public static let serialNumberString = BluetoothUUID(0x2A25)
    /// Firmware Revision String (Device Information; UTF-8).
    public static let firmwareRevisionString = BluetoothUUID(0x2A26)
    /// Hardware Revision String (Device Information; UTF-8).
    public static let hardwareRevisionString = BluetoothUUID(0x2A27)
    /// Software Revision String (Device Information; UTF-8).
    public static let softwareRevisionString = BluetoothUUID(0x2A28)
    /// Manufacturer Name String (Device Information; UTF-8).
    public static let manufacturerNameString = BluetoothUUID(0x2A29)
    /// Current Time (Current Time).
    public static let currentTime = BluetoothUUID(0x2A2B)
    /// Cycling Power Measurement (Cycling Power).
    public static let cyclingPowerMeasurement = BluetoothUUID(0x2A63)
    /// Temperature (Environmental Sensing; 0.01 °C, signed 16 bits).
    public static let temperature = BluetoothUUID(0x2A6E)
    /// Humidity (Environmental Sensing; 0.01 %, 16 bits).
    public static let humidity = BluetoothUUID(0x2A6F)
}

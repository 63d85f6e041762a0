import RawbleWire
import Testing

@Suite("The common services' and characteristics' UUID constants")
struct CommonUUIDTests {
    /// Each constant against the name the SIG's Assigned Numbers give its number (the generated
    /// table rawble prints names from): a constant with the wrong number names another thing.
    @Test("every constant's number is the one the SIG's name belongs to")
    func namesMatchTheAssignedNumbers() {
        let expected: [(BluetoothUUID, String)] = [
            (.genericAccessService, "Generic Access"), (.genericAttributeService, "Generic Attribute"),
            (.immediateAlertService, "Immediate Alert"), (.linkLossService, "Link Loss"),
            (.txPowerService, "Tx Power"), (.currentTimeService, "Current Time"),
            (.glucoseService, "Glucose"), (.healthThermometerService, "Health Thermometer"),
            (.deviceInformationService, "Device Information"), (.batteryService, "Battery"),
            (.bloodPressureService, "Blood Pressure"), (.humanInterfaceDeviceService, "Human Interface Device"),
            (.runningSpeedAndCadenceService, "Running Speed and Cadence"),
            (.cyclingSpeedAndCadenceService, "Cycling Speed and Cadence"), (.cyclingPowerService, "Cycling Power"),
            (.locationAndNavigationService, "Location and Navigation"),
            (.environmentalSensingService, "Environmental Sensing"), (.bodyCompositionService, "Body Composition"),
            (.userDataService, "User Data"), (.weightScaleService, "Weight Scale"),
            (.pulseOximeterService, "Pulse Oximeter"), (.fitnessMachineService, "Fitness Machine"),
            (.heartRateService, "Heart Rate"),
            (.peripheralPreferredConnectionParameters, "Peripheral Preferred Connection Parameters"),
            (.modelNumberString, "Model Number String"), (.serialNumberString, "Serial Number String"),
            (.firmwareRevisionString, "Firmware Revision String"), (.hardwareRevisionString, "Hardware Revision String"),
            (.softwareRevisionString, "Software Revision String"), (.manufacturerNameString, "Manufacturer Name String"),
            (.currentTime, "Current Time"), (.cyclingPowerMeasurement, "Cycling Power Measurement"),
            (.temperature, "Temperature"), (.humidity, "Humidity"),
            (.deviceName, "Device Name"), (.appearance, "Appearance"), (.batteryLevel, "Battery Level"),
        ]
        for (uuid, name) in expected {
            #expect(uuid.name == name, "\(uuid)")
        }
    }
}

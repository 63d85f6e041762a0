import RawbleWire
import Testing

@Suite("Assigned numbers: UUID names")
struct AssignedNumbersUUIDTests {
    @Test func heartRateHasItsNameInAllThreeWidths() throws {
        let forms = [BluetoothUUID(0x180D), BluetoothUUID(uuid32: 0x180D),
                     try #require(BluetoothUUID("0000180D-0000-1000-8000-00805F9B34FB"))]
        for uuid in forms { #expect(uuid.name == "Heart Rate") }
    }

    @Test(arguments: [
        (0x1800, "Generic Access"), (0x1801, "Generic Attribute"), (0x1802, "Immediate Alert"),
        (0x1803, "Link Loss"), (0x1804, "Tx Power"), (0x1805, "Current Time"),
        (0x180A, "Device Information"), (0x180F, "Battery"), (0x1810, "Blood Pressure"),
        (0x1812, "Human Interface Device"), (0x1814, "Running Speed and Cadence"),
        (0x1816, "Cycling Speed and Cadence"), (0x1818, "Cycling Power"),
        (0x1819, "Location and Navigation"), (0x181A, "Environmental Sensing"),
        (0x181B, "Body Composition"), (0x181C, "User Data"), (0x181D, "Weight Scale"),
        (0x181E, "Bond Management"), (0x181F, "Continuous Glucose Monitoring"),
        (0x1820, "Internet Protocol Support"), (0x1821, "Indoor Positioning"),
        (0x1822, "Pulse Oximeter"), (0x1823, "HTTP Proxy"), (0x1824, "Transport Discovery"),
        (0x1825, "Object Transfer"), (0x1826, "Fitness Machine"), (0x1827, "Mesh Provisioning"),
        (0x1828, "Mesh Proxy"), (0x1829, "Reconnection Configuration"), (0x183A, "Insulin Delivery"),
        (0x183B, "Binary Sensor"), (0x183C, "Emergency Configuration"),
        (0x183E, "Physical Activity Monitor"), (0x1844, "Volume Control"),
        (0x184E, "Audio Stream Control"), (0x1850, "Published Audio Capabilities"),
    ] as [(UInt16, String)])
    func gattServiceNames(code: UInt16, name: String) {
        #expect(BluetoothUUID(code).name == name)
    }

    @Test(arguments: [
        (0x2A00, "Device Name"), (0x2A01, "Appearance"),
        (0x2A04, "Peripheral Preferred Connection Parameters"), (0x2A05, "Service Changed"),
        (0x2AA6, "Central Address Resolution"), (0x2AC9, "Resolvable Private Address Only"),
        (0x2B29, "Client Supported Features"), (0x2B2A, "Database Hash"),
        (0x2B3A, "Server Supported Features"), (0x2A19, "Battery Level"),
        (0x2A37, "Heart Rate Measurement"), (0x2A38, "Body Sensor Location"),
        (0x2A39, "Heart Rate Control Point"), (0x2A23, "System ID"), (0x2A24, "Model Number String"),
        (0x2A25, "Serial Number String"), (0x2A26, "Firmware Revision String"),
        (0x2A27, "Hardware Revision String"), (0x2A28, "Software Revision String"),
        (0x2A29, "Manufacturer Name String"), (0x2A50, "PnP ID"), (0x2A07, "Tx Power Level"),
        (0x2A5B, "CSC Measurement"), (0x2A5C, "CSC Feature"), (0x2A53, "RSC Measurement"),
        (0x2A63, "Cycling Power Measurement"), (0x2A6E, "Temperature"), (0x2A6F, "Humidity"),
        (0x2A6D, "Pressure"), (0x2A35, "Blood Pressure Measurement"), (0x2A18, "Glucose Measurement"),
        (0x2A98, "Weight"), (0x2A2B, "Current Time"),
    ] as [(UInt16, String)])
    func characteristicNames(code: UInt16, name: String) {
        #expect(BluetoothUUID(code).name == name)
    }

    @Test func declarationAndDescriptorNames() {
        #expect(BluetoothUUID(0x2800).name == "Primary Service")
        #expect(BluetoothUUID(0x2801).name == "Secondary Service")
        #expect(BluetoothUUID(0x2802).name == "Include")
        #expect(BluetoothUUID(0x2803).name == "Characteristic")
        #expect(BluetoothUUID(0x2900).name == "Characteristic Extended Properties")
        #expect(BluetoothUUID(0x2901).name == "Characteristic User Description")
        #expect(BluetoothUUID(0x2902).name == "Client Characteristic Configuration")
        #expect(BluetoothUUID(0x2904).name == "Characteristic Presentation Format")
        #expect(BluetoothUUID(0x2908).name == "Report Reference")
    }

    @Test func wellKnown128BitNames() throws {
        #expect(BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")?.name == "Nordic UART Service")
        #expect(BluetoothUUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E")?.name == "Nordic UART RX")
        #expect(BluetoothUUID("6e400003-b5a3-f393-e0a9-e50e24dcca9e")?.name == "Nordic UART TX")
        #expect(BluetoothUUID("7905F431-B5CE-4E99-A40F-4B1E122D00D0")?.name == "Apple Notification Center Service")
        #expect(BluetoothUUID("6E400004-B5A3-F393-E0A9-E50E24DCCA9E")?.name == nil)
    }

    @Test func memberUUIDsNameTheirCompany() {
        #expect(BluetoothUUID(0xFEAA).name == "Google LLC")
        #expect(BluetoothUUID(0xFE59).name == "Nordic Semiconductor ASA")
        #expect(BluetoothUUID(0xFD6F).name == "Apple, Inc.")
    }

    @Test func unassignedUUIDsHaveNoName() {
        #expect(BluetoothUUID(0x1830).name == nil)     // gap in the service range
        #expect(BluetoothUUID(0x0000).name == nil)
        #expect(BluetoothUUID(uuid32: 0x0001_180D).name == nil)  // 32-bit, not a 16-bit one
        #expect(BluetoothUUID(high: 0x1234, low: 0x5678).name == nil)
    }
}

@Suite("Assigned numbers: companies, appearance, URI schemes")
struct AssignedNumbersTableTests {
    @Test(arguments: [
        (0x0000, "Ericsson AB"), (0x0001, "Nokia Mobile Phones"), (0x0002, "Intel Corp."),
        (0x0003, "IBM Corp."), (0x0006, "Microsoft"), (0x0008, "Motorola"),
        (0x000D, "Texas Instruments Inc."), (0x000F, "Broadcom Corporation"), (0x001D, "Qualcomm"),
        (0x004C, "Apple, Inc."), (0x0059, "Nordic Semiconductor ASA"),
        (0x0075, "Samsung Electronics Co. Ltd."), (0x006B, "Polar Electro OY"),
        (0x0087, "Garmin International, Inc."), (0x009F, "Suunto Oy"), (0x00E0, "Google"),
        (0x02E5, "Espressif Systems (Shanghai) Co., Ltd."), (0x02FF, "Silicon Laboratories"),
        (0x038F, "Xiaomi Inc."), (0x027D, "HUAWEI Technologies Co., Ltd."), (0x018E, "Fitbit, Inc."),
        (0x01FC, "Wahoo Fitness, LLC"), (0x067C, "Tile, Inc."), (0x0171, "Amazon.com Services LLC"),
        (0x01AB, "Meta Platforms, Inc."), (0x03FF, "Withings"), (0x0030, "ST Microelectronics"),
    ] as [(UInt16, String)])
    func companyNames(id: UInt16, name: String) {
        #expect(AssignedNumbers.companyName(id) == name)
    }

    @Test func companyTableIsSortedAndConsistent() {
        let ids = AssignedNumbers.knownCompanyIdentifiers
        #expect(ids.count >= 60)
        #expect(ids == ids.sorted())
        #expect(Set(ids).count == ids.count)
        for id in ids { #expect(AssignedNumbers.companyName(id) != nil) }
        #expect(AssignedNumbers.companyName(0xFFFF) == nil)   // reserved test id, not carried
    }

    @Test func appearanceNames() {
        #expect(Appearance(0x0340).categoryName == "Heart Rate Sensor")
        #expect(Appearance(0x0340).name == "Heart Rate Sensor")
        #expect(Appearance(0x0341).name == "Heart Rate Belt")
        #expect(Appearance(0x0341).description == "Heart Rate Sensor: Heart Rate Belt (0x0341)")
        #expect(Appearance(0x0341).category == 0x00D)
        #expect(Appearance(0x0341).subcategory == 1)
        #expect(Appearance(0x03C1).description == "Human Interface Device: Keyboard (0x03C1)")
        #expect(Appearance(0x0485).name == "Speed and Cadence Sensor")
        // Unknown sub-category of a known category falls back to the category.
        #expect(Appearance(0x037F).name == "Heart Rate Sensor")
        #expect(Appearance(0xFFC0).name == nil)
        #expect(Appearance(0xFFC0).description == "Appearance 0xFFC0")
    }

    @Test func uriSchemes() {
        #expect(AssignedNumbers.uriScheme(0x01) == "")
        #expect(AssignedNumbers.uriScheme(0x16) == "http:")
        #expect(AssignedNumbers.uriScheme(0x17) == "https:")
        #expect(AssignedNumbers.uriScheme(0x26) == "mailto:")
        #expect(AssignedNumbers.uriScheme(0xBB) == "bluetooth:")
        #expect(AssignedNumbers.uriScheme(0x00) == nil)
        #expect(AssignedNumbers.uriScheme(0xBD) == nil)
        #expect(AssignedNumbers.uriSchemeCode("https:") == 0x17)
        #expect(AssignedNumbers.uriSchemeCode("nope:") == nil)
        for code: UInt32 in 0x01...0xBC {
            let scheme = AssignedNumbers.uriScheme(code)
            #expect(scheme.flatMap(AssignedNumbers.uriSchemeCode) == code)
        }
    }
}

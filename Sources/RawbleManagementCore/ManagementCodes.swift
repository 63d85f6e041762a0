import RawbleWire

/// Management command opcodes (BlueZ `doc/mgmt-api.txt`, "Commands"): the first u16 of a
/// command packet, and the `Command_Opcode` a Command Complete or Command Status answers.
///
/// Plain `UInt16` constants, so an opcode read from an event compares with them directly.
/// Only the opcodes ``ManagementCommand`` models get a constant; ``name(of:)`` knows them all.
public enum ManagementOpcode {
    /// Read Management Version Information (non-controller).
    public static let readVersion: UInt16 = 0x0001
    /// Read Management Supported Commands (non-controller).
    public static let readCommands: UInt16 = 0x0002
    /// Read Controller Index List (non-controller).
    public static let readIndexList: UInt16 = 0x0003
    public static let readControllerInformation: UInt16 = 0x0004
    public static let setPowered: UInt16 = 0x0005
    public static let setConnectable: UInt16 = 0x0007
    public static let setBondable: UInt16 = 0x0009
    public static let setLowEnergy: UInt16 = 0x000D
    public static let disconnect: UInt16 = 0x0014
    public static let setIOCapability: UInt16 = 0x0018
    public static let pairDevice: UInt16 = 0x0019
    public static let cancelPairDevice: UInt16 = 0x001A
    public static let unpairDevice: UInt16 = 0x001B
    public static let userConfirmationReply: UInt16 = 0x001C
    public static let userConfirmationNegativeReply: UInt16 = 0x001D
    public static let userPasskeyReply: UInt16 = 0x001E
    public static let userPasskeyNegativeReply: UInt16 = 0x001F
    public static let startDiscovery: UInt16 = 0x0023
    public static let stopDiscovery: UInt16 = 0x0024
    public static let startServiceDiscovery: UInt16 = 0x003A
    public static let startLimitedDiscovery: UInt16 = 0x0041

    /// The documentation's name of a command, e.g. `"Set Powered"`; `nil` for an opcode it
    /// does not define.
    public static func name(of opcode: UInt16) -> String? { managementCommandNames.name(of: opcode) }

    /// `Set Powered (0x0005)`, or `0x0100` alone for an opcode without a name.
    public static func description(of opcode: UInt16) -> String { managementCommandNames.description(of: opcode) }
}

/// Management event codes (BlueZ `doc/mgmt-api.txt`, "Events"): the first u16 of an event
/// packet. Only the events ``ManagementEvent`` models get a constant; ``name(of:)`` knows them all.
public enum ManagementEventCode {
    public static let commandComplete: UInt16 = 0x0001
    public static let commandStatus: UInt16 = 0x0002
    public static let controllerError: UInt16 = 0x0003
    public static let indexAdded: UInt16 = 0x0004
    public static let indexRemoved: UInt16 = 0x0005
    public static let newSettings: UInt16 = 0x0006
    public static let classOfDeviceChanged: UInt16 = 0x0007
    public static let deviceConnected: UInt16 = 0x000B
    public static let deviceDisconnected: UInt16 = 0x000C
    public static let connectFailed: UInt16 = 0x000D
    public static let userConfirmationRequest: UInt16 = 0x000F
    public static let userPasskeyRequest: UInt16 = 0x0010
    public static let authenticationFailed: UInt16 = 0x0011
    public static let deviceFound: UInt16 = 0x0012
    public static let discovering: UInt16 = 0x0013
    public static let deviceUnpaired: UInt16 = 0x0016
    public static let passkeyNotify: UInt16 = 0x0017

    /// The documentation's name of an event, e.g. `"Device Found"`; `nil` for a code it does
    /// not define.
    public static func name(of code: UInt16) -> String? { managementEventNames.name(of: code) }

    /// `Device Found (0x0012)`, or `0x0100` alone for a code without a name.
    public static func description(of code: UInt16) -> String { managementEventNames.description(of: code) }
}

/// Names of management codes (opcodes or event codes), numbered from 0x0001, and the error
/// contexts of their decoders (made once: a decoder runs for every packet).
struct ManagementCodeNames: Sendable {
    let names: [String]
    /// What a code's parameters are called in a `WireError`: `Management <name> <kind>`.
    private let contexts: [String]
    private let kind: String

    init(kind: String, names: [String]) {
        self.names = names
        self.kind = kind
        contexts = names.map { "Management \($0) \(kind)" }
    }

    /// `Management Device Found event`, `Management 0x0100 command` for a code without a name.
    func context(of code: UInt16) -> String {
        let index = Int(code) - 1
        return index >= 0 && index < contexts.count ? contexts[index] : "Management \(displayName(of: code)) \(kind)"
    }

    /// The name of `code`; `nil` past the table's end and for 0.
    func name(of code: UInt16) -> String? {
        let index = Int(code) - 1
        return index >= 0 && index < names.count ? names[index] : nil
    }

    /// The name, or the code in hex for a code without one.
    func displayName(of code: UInt16) -> String { name(of: code) ?? "0x" + Hex.padded(code, digits: 4) }

    /// `Name (0x0012)`, or the code in hex alone.
    func description(of code: UInt16) -> String {
        let hexCode = "0x" + Hex.padded(code, digits: 4)
        return name(of: code).map { "\($0) (\(hexCode))" } ?? hexCode
    }
}

/// Command names by opcode, from 0x0001 on, as `doc/mgmt-api.txt` titles them.
let managementCommandNames = ManagementCodeNames(kind: "command", names: [
    "Read Management Version Information", "Read Management Supported Commands",
    "Read Controller Index List", "Read Controller Information", "Set Powered", "Set Discoverable",
    "Set Connectable", "Set Fast Connectable", "Set Bondable", "Set Link Security",
    "Set Secure Simple Pairing", "Set High Speed", "Set Low Energy", "Set Device Class",
    "Set Local Name", "Add UUID", "Remove UUID", "Load Link Keys", "Load Long Term Keys",
    "Disconnect", "Get Connections", "PIN Code Reply", "PIN Code Negative Reply",
    "Set IO Capability", "Pair Device", "Cancel Pair Device", "Unpair Device",
    "User Confirmation Reply", "User Confirmation Negative Reply", "User Passkey Reply",
    "User Passkey Negative Reply", "Read Local Out Of Band Data", "Add Remote Out Of Band Data",
    "Remove Remote Out Of Band Data", "Start Discovery", "Stop Discovery", "Confirm Name",
    "Block Device", "Unblock Device", "Set Device ID", "Set Advertising", "Set BR/EDR",
    "Set Static Address", "Set Scan Parameters", "Set Secure Connections", "Set Debug Keys",
    "Set Privacy", "Load Identity Resolving Keys", "Get Connection Information",
    "Get Clock Information", "Add Device", "Remove Device", "Load Connection Parameters",
    "Read Unconfigured Controller Index List", "Read Controller Configuration Information",
    "Set External Configuration", "Set Public Address", "Start Service Discovery",
    "Read Local Out Of Band Extended Data", "Read Extended Controller Index List",
    "Read Advertising Features", "Add Advertising", "Remove Advertising",
    "Get Advertising Size Information", "Start Limited Discovery",
    "Read Extended Controller Information", "Set Appearance", "Get PHY Configuration",
    "Set PHY Configuration", "Load Blocked Keys", "Set Wideband Speech",
    "Read Controller Capabilities", "Read Experimental Features Information",
    "Set Experimental Feature", "Read Default System Configuration",
    "Set Default System Configuration", "Read Default Runtime Configuration",
    "Set Default Runtime Configuration", "Get Device Flags", "Set Device Flags",
    "Read Advertisement Monitor Features", "Add Advertisement Patterns Monitor",
    "Remove Advertisement Monitor", "Add Extended Advertising Parameters",
    "Add Extended Advertising Data", "Add Advertisement Patterns Monitor With RSSI Threshold",
    "Set Mesh Receiver", "Read Mesh Features", "Transmit Mesh Packet",
    "Cancel Transmit Mesh Packet", "Send HCI Command and Wait for Event", "Load Connection Subrate",
])

/// Event names by code, from 0x0001 on, as `doc/mgmt-api.txt` titles them.
let managementEventNames = ManagementCodeNames(kind: "event", names: [
    "Command Complete", "Command Status", "Controller Error", "Index Added", "Index Removed",
    "New Settings", "Class Of Device Changed", "Local Name Changed", "New Link Key",
    "New Long Term Key", "Device Connected", "Device Disconnected", "Connect Failed",
    "PIN Code Request", "User Confirmation Request", "User Passkey Request",
    "Authentication Failed", "Device Found", "Discovering", "Device Blocked", "Device Unblocked",
    "Device Unpaired", "Passkey Notify", "New Identity Resolving Key",
    "New Signature Resolving Key", "Device Added", "Device Removed", "New Connection Parameter",
    "Unconfigured Index Added", "Unconfigured Index Removed", "New Configuration Options",
    "Extended Index Added", "Extended Index Removed", "Local Out Of Band Extended Data Updated",
    "Advertising Added", "Advertising Removed", "Extended Controller Information Changed",
    "PHY Configuration Changed", "Experimental Feature Changed",
    "Default System Configuration Changed", "Default Runtime Configuration Changed",
    "Device Flags Changed", "Advertisement Monitor Added", "Advertisement Monitor Removed",
    "Controller Suspend", "Controller Resume", "Advertisement Monitor Device Found",
    "Advertisement Monitor Device Lost", "Mesh Device Found", "Mesh Packet Transmit Complete",
    "Connection Subrate",
])

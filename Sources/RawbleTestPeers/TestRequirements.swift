#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// The outside tools some tests need (Google Bumble, tshark), looked up in one place, and the one
/// switch that deselects the Bumble-backed suites.
///
/// A missing tool is a failure, never a silent skip: a test that needs tshark or Bumble and does
/// not find it fails with one line naming `Scripts/bootstrap`. `RAWBLE_TESTS_WITHOUT_BUMBLE=1`
/// deselects every suite that starts a Bumble peer (they need the project's Python environment and
/// take most of the suite's time); the tshark tests have no switch (tshark is one Debian package
/// and its tests take a second).
public enum TestRequirements {
    /// The environment variable that deselects the Bumble-backed suites when set to `1`.
    public static let withoutBumbleVariable = "RAWBLE_TESTS_WITHOUT_BUMBLE"

    /// Whether the Bumble-backed suites run: true unless `RAWBLE_TESTS_WITHOUT_BUMBLE=1`. Their
    /// trait: `.enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1")`.
    public static var bumbleSuitesEnabled: Bool {
        bumbleSuitesEnabled(in: ProcessInfo.processInfo.environment)
    }

    /// Whether the Bumble-backed suites run in `environment`: unless it sets the switch to `1`.
    public static func bumbleSuitesEnabled(in environment: [String: String]) -> Bool {
        environment[withoutBumbleVariable] != "1"
    }

    /// Whether this machine's kernel has Bluetooth sockets (AF_BLUETOOTH = 31): build machines
    /// often have none, so the kernel path is tested in the VM (Scripts/vm-test) and tests of
    /// what happens without it run here.
    public static let kernelHasBluetooth: Bool = {
        let fd = socket(31, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 1)
        if fd >= 0 { close(fd) }
        return fd >= 0 || errno != EAFNOSUPPORT
    }()

    /// The path of the first `tshark` on `searchPath` (default: this process's `PATH`); throws
    /// ``MissingTool`` (one line: run `Scripts/bootstrap`) when there is none.
    public static func tshark(
        searchPath: String = ProcessInfo.processInfo.environment["PATH"] ?? ""
    ) throws(MissingTool) -> String {
        try tool("tshark", searchPath: searchPath)
    }

    /// BlueZ's `btmon` (Debian's `bluez`), the other reader people open captures with; as ``tshark(searchPath:)``.
    public static func btmon(
        searchPath: String = ProcessInfo.processInfo.environment["PATH"] ?? ""
    ) throws(MissingTool) -> String {
        try tool("btmon", searchPath: searchPath)
    }

    /// Debian's `chromium` (Scripts/bootstrap installs it), the real browser `rawble hr --serve`'s
    /// page is tested in; as ``tshark(searchPath:)``.
    public static func chromium(
        searchPath: String = ProcessInfo.processInfo.environment["PATH"] ?? ""
    ) throws(MissingTool) -> String {
        try tool("chromium", searchPath: searchPath)
    }

    private static func tool(_ name: String, searchPath: String) throws(MissingTool) -> String {
        for directory in searchPath.split(separator: ":").map(String.init) where !directory.isEmpty {
            let candidate = directory + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw MissingTool(name: name)
    }
}

/// A tool a test needs is not installed; the description is the one line that says how to fix it.
public struct MissingTool: Error, Hashable, Sendable, CustomStringConvertible {
    /// The tool's command name, e.g. `tshark`.
    public var name: String

    public init(name: String) { self.name = name }

    public var description: String {
        "\(name) is not installed (not on PATH): run Scripts/bootstrap"
    }
}

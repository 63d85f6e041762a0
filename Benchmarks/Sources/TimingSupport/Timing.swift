// Clocks, memory and JSON-line output shared by the host benchmark executables (HostTiming,
// GATTTiming). No Foundation: process start-up is part of what they measure.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: Clocks and memory

public func monotonicNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

public func processCPUNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// Resident set size in bytes, from /proc/self/statm (second field, in pages); 0 when unreadable.
public func residentBytes() -> Int {
    let fd = open("/proc/self/statm", O_RDONLY)
    guard fd >= 0 else { return 0 }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 128)
    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard count > 0 else { return 0 }
    let fields = buffer[0..<count].split(separator: UInt8(ascii: " "))
    guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

// MARK: Output

public func emit(_ fields: KeyValuePairs<String, String>) {
    let body = fields.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ")
    print("{\(body)}")
    fflush(nil)
}

public func quoted(_ text: String) -> String {
    var out = "\""
    for character in text {
        switch character {
        case "\"", "\\": out += "\\\(character)"
        case "\n": out += "\\n"
        default: out.append(character)
        }
    }
    return out + "\""
}

public func fail(_ message: String) -> Never {
    emit(["error": quoted(message)])
    exit(1)
}

/// `tcp:HOST:PORT`, the only transport the timing executables take, as host and port; `nil`
/// for anything else.
public func tcpTransport(_ value: String) -> (host: String, port: UInt16)? {
    let parts = value.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 3, parts[0] == "tcp", let port = UInt16(parts[2]) else { return nil }
    return (String(parts[1]), port)
}

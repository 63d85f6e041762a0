import RawbleStack
import RawbleWire
import Testing

/// The transport strings `rawble --transport` and embedders accept: what each parses to, that
/// it reads back as written, and which typed problem each bad string is.
@Suite("TransportAddress: parsing transport strings")
struct TransportAddressTests {
    @Test("every form parses to its case and reads back as written", arguments: [
        ("hci0", TransportAddress.kernel(adapter: 0)),
        ("hci1023", .kernel(adapter: 1023)),
        ("user:hci1", .userChannel(adapter: 1)),
        ("tcp:127.0.0.1:9000", .tcp(host: "127.0.0.1", port: 9000)),
        ("tcp:localhost:1", .tcp(host: "localhost", port: 1)),
        ("tcp:[::1]:65535", .tcp(host: "::1", port: 65535)),
        ("unix:/tmp/controller.sock", .unix(path: "/tmp/controller.sock")),
        ("serial:/dev/ttyUSB0", .serial(path: "/dev/ttyUSB0", baudRate: nil)),
        ("serial:/dev/ttyUSB0:1000000", .serial(path: "/dev/ttyUSB0", baudRate: 1_000_000)),
    ])
    func good(text: String, expected: TransportAddress) throws {
        let address = try TransportAddress(text)
        #expect(address == expected)
        #expect(address.description == text)
        #expect(try TransportAddress(address.description) == address)
    }

    @Test("a serial path may hold colons; a last field that is not a number is the path's")
    func serialPathWithColons() throws {
        #expect(try TransportAddress("serial:/dev/serial/by-path/pci-0:1.2") == .serial(path: "/dev/serial/by-path/pci-0:1.2", baudRate: nil))
        #expect(try TransportAddress("serial:/dev/a:b:9600") == .serial(path: "/dev/a:b", baudRate: 9600))
    }

    @Test("the default adapter says so, and is the one form not parsed back")
    func defaultAdapter() {
        #expect(TransportAddress.kernel(adapter: nil).description == "hci (first adapter up)")
        #expect(throws: TransportAddress.ParseError.self) { try TransportAddress("hci") }
    }

    @Test("each bad string is its own typed problem", arguments: [
        ("", TransportAddress.ParseError.Problem.empty),
        ("bluetooth", .unknownKind("bluetooth")),
        ("bt:hci0", .unknownKind("bt")),
        ("TCP:127.0.0.1:9000", .unknownKind("TCP")),
        ("hci", .invalidAdapter("hci")),
        ("hcix", .invalidAdapter("hcix")),
        ("hci-1", .invalidAdapter("hci-1")),
        ("hci1024", .invalidAdapter("hci1024")),
        ("hci0:x", .invalidAdapter("hci0:x")),
        ("user:", .invalidAdapter("")),
        ("user:0", .invalidAdapter("0")),
        ("user:hci99999", .invalidAdapter("hci99999")),
        ("tcp:localhost", .missingPort),
        ("tcp:localhost:", .missingPort),
        ("tcp::9000", .missingHost),
        ("tcp:[]:9000", .missingHost),
        ("tcp:localhost:0", .invalidPort("0")),
        ("tcp:localhost:65536", .invalidPort("65536")),
        ("tcp:localhost:http", .invalidPort("http")),
        ("unix:", .missingPath),
        ("serial:", .missingPath),
        ("serial::115200", .missingPath),
        ("serial:/dev/ttyUSB0:0", .invalidBaudRate("0")),
        ("serial:/dev/ttyUSB0:-9600", .invalidBaudRate("-9600")),
    ])
    func bad(text: String, problem: TransportAddress.ParseError.Problem) {
        #expect(throws: TransportAddress.ParseError(text: text, problem: problem)) { try TransportAddress(text) }
    }

    @Test("a parse error is one line that says what is accepted instead")
    func errorsSayWhatToWrite() throws {
        let unknown = try #require(throws: TransportAddress.ParseError.self) { try TransportAddress("bluetooth") }
        #expect(unknown.description == "bluetooth is not a kind of transport: write hciN, user:hciN, tcp:HOST:PORT, unix:PATH or serial:PATH[:BAUD]")
        let port = try #require(throws: TransportAddress.ParseError.self) { try TransportAddress("tcp:localhost") }
        #expect(port.description.contains("tcp:HOST:PORT"))
        let adapter = try #require(throws: TransportAddress.ParseError.self) { try TransportAddress("hci1024") }
        #expect(adapter.description.contains("0 to 1023"))
        for text in ["", "x", "user:x", "tcp:h", "tcp::1", "tcp:h:0", "unix:", "serial:/d:0"] {
            let error = try #require(throws: TransportAddress.ParseError.self) { try TransportAddress(text) }
            #expect(!error.description.contains("\n"))
            #expect(error.description.contains(": "), "\(error) names no fix")
        }
    }
}

// The driver every procedure test runs on, in the manner of BlueZ's unit/test-gatt.c: a script
// of the exact request bytes the procedure must send, each with the server's answer in bytes.
import RawbleGATTCore
import RawbleTestSupport
import RawbleWire
import Testing

/// One exchange of a script: what the procedure must send (hex) and the server's answer (hex).
struct Exchange {
    var request: String
    var response: String
    init(_ request: String, _ response: String) {
        self.request = request
        self.response = response
    }
}

/// Runs `procedure` through `script`: every request it sends must equal the script's bytes,
/// every answer is decoded with ``ATTPDU/decode(_:)`` and handed to it. The procedure must
/// finish or fail exactly on the script's last answer (or at start for an empty script).
func run<P: GATTProcedure>(_ procedure: P, _ script: [Exchange],
                           sourceLocation: SourceLocation = #_sourceLocation) -> Result<P.Output, GATTError> {
    var procedure = procedure
    var step = procedure.start()
    for (index, exchange) in script.enumerated() {
        guard case .send(let request) = step else {
            Issue.record("finished before exchange \(index + 1) (expected \(exchange.request))", sourceLocation: sourceLocation)
            return .failure(.invalidResponse("test script not consumed"))
        }
        #expect(request.encoded == bytes(exchange.request), "request \(index + 1)", sourceLocation: sourceLocation)
        let response: ATTPDU
        do {
            response = try ATTPDU.decode(bytes(exchange.response))
        } catch {
            Issue.record("script answer \(index + 1) does not decode: \(error)", sourceLocation: sourceLocation)
            return .failure(.malformedPDU(error))
        }
        do {
            step = try procedure.receive(response)
        } catch {
            if index != script.count - 1 {
                Issue.record("failed at exchange \(index + 1) of \(script.count): \(error)", sourceLocation: sourceLocation)
            }
            return .failure(error)
        }
    }
    guard case .finished(let output) = step else {
        if case .send(let request) = step {
            Issue.record("still sending after the script: \(request.encoded.map { String($0, radix: 16) })", sourceLocation: sourceLocation)
        }
        return .failure(.invalidResponse("test script too short"))
    }
    return .success(output)
}

/// Feeds one typed response (for PDUs the byte script cannot express, such as values over the
/// decoder-friendly sizes) after starting; returns the step or the error.
func answer<P: GATTProcedure>(_ procedure: P, with response: ATTPDU) -> Result<GATTProcedureStep<P.Output>, GATTError> {
    var procedure = procedure
    _ = procedure.start()
    do {
        return .success(try procedure.receive(response))
    } catch {
        return .failure(error)
    }
}

extension Result {
    /// The error of a failure; `nil` on success.
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
    /// The value of a success; `nil` on failure.
    var value: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}

extension GATTError {
    /// The message of an invalid response; `nil` for other errors.
    var invalidResponseMessage: String? {
        if case .invalidResponse(let message) = self { return message }
        return nil
    }
}

/// Expects `result` to fail with an invalid response whose message contains `words`.
func expectInvalid<T>(_ result: Result<T, GATTError>, _ words: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let message = result.error?.invalidResponseMessage
    #expect(message?.contains(words) == true, "\(String(describing: result.error)) should mention \"\(words)\"",
            sourceLocation: sourceLocation)
}

/// Expects `result` to fail with the ATT error code `code` for `request`.
func expectATTError<T>(_ result: Result<T, GATTError>, _ code: ATTErrorCode, request: ATTOpcode, handle: UInt16,
                       sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(result.error == .att(ATTError(code: code, requestOpcode: request, handle: handle)), sourceLocation: sourceLocation)
}

/// The 128-bit UUID used by the scripts, and its little-endian wire form.
let customUUID = BluetoothUUID("12345678-1234-5678-1234-56789ABCDEF0")!
let customUUIDHex = hexString(customUUID.littleEndianBytes(width: 16))

@Suite("Procedure script driver")
struct ProcedureScriptTests {
    @Test("the custom UUID's wire form is 16 bytes, least significant first")
    func customUUIDWireForm() {
        #expect(bytes(customUUIDHex).count == 16)
        #expect(bytes(customUUIDHex).first == 0xF0)
    }
}

import RawbleWire
import Testing

/// Decoding helpers the HCI event suites share.
enum HCIEventSamples {
    /// Decodes the event in `text` (hex), checks that re-encoding gives the same bytes, and
    /// returns it.
    static func decodeRoundTrip(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> HCIEvent {
        let bytes = try Hex.decode(text)
        let event = try HCIEvent.decode(bytes)
        #expect(event.encoded == bytes, "re-encoding \(event)", sourceLocation: sourceLocation)
        return event
    }

    /// The error thrown decoding the event in `text` (hex), or `nil` if it decoded.
    static func decodeError(_ text: String) throws -> WireError? {
        let bytes = try Hex.decode(text)
        do {
            _ = try HCIEvent.decode(bytes)
            return nil
        } catch {
            return error
        }
    }
}

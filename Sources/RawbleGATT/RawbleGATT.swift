// The ATT/GATT client. ATT/ holds the request engine over an `ATTBearer`; Procedures/ the
// sans-I/O GATT procedures (PDUs in, PDUs out); Client/ the API people embed.
@_exported import RawbleTransport
@_exported import RawbleWire

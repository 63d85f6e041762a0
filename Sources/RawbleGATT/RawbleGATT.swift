// The ATT/GATT client. ATT/ holds the request engine over an `ATTBearer`; Procedures/ the
// sans-I/O GATT procedures (PDUs in, PDUs out); Client/ the API people embed. It depends on the
// wire layer and the bearer contract only (re-exported: the client's API names both), never on
// the transports: whoever brings a bearer brings its link.
@_exported import RawbleBearer
@_exported import RawbleWire

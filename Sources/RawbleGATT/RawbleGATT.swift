// The ATT/GATT client and server. ATT/ holds the request engine over an `ATTBearer`; Procedures/
// the sans-I/O GATT procedures (PDUs in, PDUs out); Client/ the API people embed; Server/ the
// GATT server (database, the sans-I/O per-connection `ATTServer`, the async `GATTServer`). It depends on the
// wire layer and the bearer contract only (re-exported: the client's API names both), never on
// the transports: whoever brings a bearer brings its link.
@_exported import RawbleBearer
@_exported import RawbleWire

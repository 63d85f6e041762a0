// RawbleHost: the user-space host's protocol engines, sans I/O (bytes and events in, bytes and
// events out; time is an input, never read from a clock): HCI command flow, ACL flow control
// and L2CAP reassembly. Transports and the async API sit above it.
//
// Host users work with wire types (addresses, UUIDs, PDUs) everywhere, and with the ATT bearer
// each connection offers (`Connection.att`, its `BearerError`), so they come with it.
@_exported import RawbleBearer
@_exported import RawbleWire

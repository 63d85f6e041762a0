// The ATT/GATT client and server, async, on any `ATTBearer` (RawbleBearer): ATT/ holds the
// request engine, Client/ the API people embed, Server/ the async `GATTServer`. The sans-I/O
// parts they drive, the GATT procedures (PDUs in, PDUs out) and the per-connection `ATTServer`,
// are RawbleGATTCore. Never the transports: whoever brings a bearer brings its link.

import RawbleBearer

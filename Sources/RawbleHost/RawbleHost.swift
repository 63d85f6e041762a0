// RawbleHost: rawble's own host, async, on any `HCITransport` (RawbleHCITransport): `Adapter`
// drives a controller with the sans-I/O engines of RawbleHostCore (HCI command flow, ACL flow
// control and reassembly, the L2CAP responders, the scan aggregator) and does the awaiting and
// the timers; `Central` is the API both it and the kernel's central (RawbleKernelHost) offer.
// Nothing here opens a socket: the transports (RawbleTransport, RawbleKernel) do.

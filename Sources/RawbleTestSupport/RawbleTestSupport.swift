// Test support for people who test their own code on rawble, with no I/O: the in-memory
// doubles (a controller played byte by byte or from an answer table, an ATT server played PDU
// by PDU, controllers joined on a virtual link), virtual time, bounded waits and seeded random
// samples. It runs on NIO's embedded loop, never on sockets or threads of its own; the peers
// that are real stacks (Bumble, started as processes) are in RawbleTestPeers.

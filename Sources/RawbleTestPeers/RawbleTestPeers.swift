// Test peers that are real stacks, for people who test their own code on rawble: Google
// Bumble's virtual controller with peripherals on its link (`BumblePeer`) and Bumble's GATT
// client as a central (`BumbleCentral`), served as H4 on 127.0.0.1 and started and stopped by
// the test itself; the Python reference implementations tests compare with; and what starting
// them needs (child processes, free local ports, tools that must be there). Apart from
// RawbleTestSupport's in-memory doubles, as swift-nio keeps NIOTestUtils apart from NIOEmbedded:
// a test of a sans-I/O core needs neither processes nor sockets.

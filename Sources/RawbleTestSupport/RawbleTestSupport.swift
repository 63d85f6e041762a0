// Test support for people who test their own code on rawble: peers that are real stacks
// (Bumble's virtual controller), started and stopped by the test itself.

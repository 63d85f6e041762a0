// The process's command line as the C library handed it to the program, for when Swift's
// `CommandLine` cannot read it: on Linux, Swift's runtime reads the arguments from
// /proc/self/cmdline, and without /proc (a chroot, a container or an initramfs that mounts
// none) it finds no argument at all, so every command ran as a bare `rawble`.
#ifndef RAWBLE_CPROCESSARGUMENTS_H
#define RAWBLE_CPROCESSARGUMENTS_H

/// The `argc` glibc passed to the program's initializers; 0 where none was captured (another C
/// library, or a process started with no argument at all).
int rawble_argument_count(void);

/// The `argv` glibc passed to the program's initializers: `rawble_argument_count()` strings,
/// then a null pointer; null where none was captured.
char *const *rawble_argument_vector(void);

#endif

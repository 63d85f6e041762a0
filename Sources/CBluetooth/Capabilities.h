// The calling thread's Linux capability sets, through the kernel's own interface (capget/capset
// with _LINUX_CAPABILITY_VERSION_3, prctl): no libcap. Swift cannot call the variadic
// syscall(2) and prctl(2), so each call is a static inline function here.
//
// Linux keeps capabilities per thread: every function acts on the calling thread only, and a
// new thread starts with its creator's sets. Masks are 64-bit (bit N = capability N).
#ifndef RAWBLE_CAPABILITIES_H
#define RAWBLE_CAPABILITIES_H

#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>

/// Reads the calling thread's effective, permitted and inheritable sets; 0 or -1 (errno set).
static inline int rawble_capget(uint64_t *effective, uint64_t *permitted, uint64_t *inheritable) {
    struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2] = { { 0, 0, 0 }, { 0, 0, 0 } };
    if (syscall(SYS_capget, &header, data) != 0) return -1;
    *effective = (uint64_t)data[0].effective | ((uint64_t)data[1].effective << 32);
    *permitted = (uint64_t)data[0].permitted | ((uint64_t)data[1].permitted << 32);
    *inheritable = (uint64_t)data[0].inheritable | ((uint64_t)data[1].inheritable << 32);
    return 0;
}

/// Sets the calling thread's three sets (the kernel refuses to grow the permitted set, or an
/// effective set outside it: EPERM); 0 or -1 (errno set).
static inline int rawble_capset(uint64_t effective, uint64_t permitted, uint64_t inheritable) {
    struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2] = {
        { (uint32_t)effective, (uint32_t)permitted, (uint32_t)inheritable },
        { (uint32_t)(effective >> 32), (uint32_t)(permitted >> 32), (uint32_t)(inheritable >> 32) },
    };
    return (int)syscall(SYS_capset, &header, data);
}

/// Empties the calling thread's ambient set (PR_CAP_AMBIENT_CLEAR_ALL: needs no privilege);
/// 0, or -1 with EINVAL on a kernel without ambient capabilities (before 4.3: nothing to clear).
static inline int rawble_clear_ambient(void) {
    return prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
}

/// Names the calling thread (PR_SET_NAME: its `comm` in /proc/self/task/TID/comm, 15 bytes).
static inline int rawble_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

#endif

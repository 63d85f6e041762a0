#include "CProcessArguments.h"

#include <stdlib.h>  // and with it <features.h>, which defines __GLIBC__

static int captured_count;
static char *const *captured_vector;

#if defined(__GLIBC__)
// glibc calls each function of .init_array with (argc, argv, envp), in dynamically and
// statically linked programs alike (csu/libc-start.c, call_init), before main: the arguments
// come from the stack the kernel laid out, not from /proc.
static void capture_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    captured_count = argc;
    captured_vector = argv;
}
__attribute__((section(".init_array"), used))
static void (*const rawble_capture_arguments)(int, char **, char **) = capture_arguments;
#endif

int rawble_argument_count(void) { return captured_vector ? captured_count : 0; }

char *const *rawble_argument_vector(void) { return captured_vector; }

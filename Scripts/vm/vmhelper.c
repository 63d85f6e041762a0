/*
 * vmhelper: the guest side of Scripts/vm-test (static; runs as the VM's PID 1 helpers).
 *
 *   vmhelper relay PORT PIDFILE
 *       Creates an HCI adapter with /dev/vhci and carries H4 packets between it and PORT (a
 *       virtio serial port whose host end is an H4 controller, e.g. Scripts/bumble-peer).
 *       vhci wants exactly one H4 packet per write(2), while the port is a byte stream, so
 *       bytes from the port are re-framed (packet lengths read from the H4 headers). Prints
 *       "hciN" on stdout once the kernel created the adapter, then runs in the background
 *       (its PID in PIDFILE: kill it and the adapter is removed, like an unplugged dongle).
 *       It ends when the host end closes (the controller went away) or on a framing error.
 *
 *   vmhelper exec ROOT CWD ARGV ENV
 *       chroot(ROOT), chdir(CWD), then execvpe() the NUL-separated argument list in file ARGV
 *       with the NUL-separated environment in file ENV (PATH from it): the user's command,
 *       exactly as given on the host, without a shell quoting anything.
 *
 * Errors are one line on stderr, "vmhelper: ...", and exit status 1 (127 when exec fails).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

/* Largest H4 packet: ACL header (type + 4) + 65535 bytes of data. */
#define H4_MAX (1 + 4 + 65535)

static void die(const char *what) {
    fprintf(stderr, "vmhelper: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int write_all(int fd, const uint8_t *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Length of the complete H4 packet at the start of buf (have bytes), 0 if more bytes are
 * needed, -1 for an unknown packet type (the stream lost its framing). */
static long h4_length(const uint8_t *buf, size_t have) {
    if (have < 1) return 0;
    switch (buf[0]) {
    case 0x01: /* command: opcode(2) len(1) */
        return have < 4 ? 0 : 4 + (long)buf[3];
    case 0x02: /* ACL: handle(2) len(2) */
        return have < 5 ? 0 : 5 + (long)(buf[3] | buf[4] << 8);
    case 0x03: /* SCO: handle(2) len(1) */
        return have < 4 ? 0 : 4 + (long)buf[3];
    case 0x04: /* event: code(1) len(1) */
        return have < 3 ? 0 : 3 + (long)buf[2];
    case 0x05: /* ISO: handle(2) len(2, 14 bits) */
        return have < 5 ? 0 : 5 + (long)((buf[3] | buf[4] << 8) & 0x3FFF);
    default:
        return -1;
    }
}

static int relay(const char *port_path, const char *pid_path) {
    int port = open(port_path, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (port < 0) die(port_path);
    if (isatty(port)) { /* an ordinary serial port: raw 8-bit, no echo, no flow control */
        struct termios t;
        if (tcgetattr(port, &t) < 0) die("tcgetattr");
        cfmakeraw(&t);
        t.c_cflag &= ~(tcflag_t)CRTSCTS;
        t.c_cflag |= CLOCAL | CREAD;
        if (tcsetattr(port, TCSANOW, &t) < 0) die("tcsetattr");
    }
    int vhci = open("/dev/vhci", O_RDWR | O_CLOEXEC);
    if (vhci < 0) die("/dev/vhci");
    /* Create a primary adapter (vhci would create one by itself after 1 s). */
    const uint8_t create[2] = {0xFF, 0x00};
    if (write_all(vhci, create, sizeof create) < 0) die("create adapter on /dev/vhci");
    uint8_t reply[4];
    ssize_t r;
    do r = read(vhci, reply, sizeof reply); while (r < 0 && errno == EINTR);
    if (r != 4 || reply[0] != 0xFF || reply[1] != 0x00) {
        fprintf(stderr, "vmhelper: /dev/vhci did not answer the create request (%zd bytes)\n", r);
        return 1;
    }
    unsigned index = (unsigned)(reply[2] | reply[3] << 8);

    /* Into the background: the caller waits for this line, then for /sys/class/bluetooth. */
    pid_t child = fork();
    if (child < 0) die("fork");
    if (child > 0) {
        FILE *f = fopen(pid_path, "w");
        if (f) { fprintf(f, "%d\n", (int)child); fclose(f); }
        printf("hci%u\n", index);
        return 0;
    }
    setsid();
    int nul = open("/dev/null", O_RDWR);
    if (nul >= 0) { dup2(nul, 0); dup2(nul, 1); close(nul); } /* let the caller's $(...) end */

    static uint8_t from_port[2 * H4_MAX];
    static uint8_t from_vhci[H4_MAX];
    size_t have = 0;
    struct pollfd fds[2] = {{.fd = vhci, .events = POLLIN}, {.fd = port, .events = POLLIN}};
    for (;;) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            die("poll");
        }
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t n = read(vhci, from_vhci, sizeof from_vhci);
            if (n < 0 && errno != EINTR && errno != EAGAIN) die("read /dev/vhci");
            if (n == 0) { fprintf(stderr, "vmhelper: hci%u: /dev/vhci closed\n", index); return 1; }
            if (n > 0 && write_all(port, from_vhci, (size_t)n) < 0) die("write to the controller port");
        }
        if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t n = read(port, from_port + have, sizeof from_port - have);
            if (n < 0 && errno != EINTR && errno != EAGAIN) die("read the controller port");
            if (n == 0) { /* the host end closed: the controller is gone, so is the adapter */
                fprintf(stderr, "vmhelper: hci%u: the controller closed the connection\n", index);
                return 0;
            }
            if (n > 0) have += (size_t)n;
            size_t at = 0;
            for (;;) {
                long len = h4_length(from_port + at, have - at);
                if (len < 0) {
                    fprintf(stderr, "vmhelper: hci%u: H4 framing lost (packet type 0x%02x from the controller)\n",
                            index, from_port[at]);
                    return 1;
                }
                if (len == 0 || (size_t)len > have - at) break;
                if (write_all(vhci, from_port + at, (size_t)len) < 0) die("write /dev/vhci");
                at += (size_t)len;
            }
            memmove(from_port, from_port + at, have - at);
            have -= at;
        }
    }
}

/* Reads a file of NUL-terminated strings into a NULL-terminated array. */
static char **read_list(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) die(path);
    size_t cap = 4096, len = 0;
    char *data = malloc(cap + 1);
    if (!data) die("malloc");
    for (;;) {
        if (len == cap) {
            cap *= 2;
            data = realloc(data, cap + 1);
            if (!data) die("realloc");
        }
        ssize_t n = read(fd, data + len, cap - len);
        if (n < 0) { if (errno == EINTR) continue; die(path); }
        if (n == 0) break;
        len += (size_t)n;
    }
    close(fd);
    if (len > 0 && data[len - 1] != '\0') data[len++] = '\0';
    size_t count = 0;
    for (size_t i = 0; i < len; i++) if (data[i] == '\0') count++;
    char **list = calloc(count + 1, sizeof *list);
    if (!list) die("calloc");
    size_t k = 0;
    for (size_t i = 0; i < len; i += strlen(data + i) + 1) list[k++] = data + i;
    list[k] = NULL;
    return list;
}

static int run(const char *root, const char *cwd, const char *argv_path, const char *env_path) {
    char **args = read_list(argv_path);
    char **env = read_list(env_path);
    if (!args[0]) { fprintf(stderr, "vmhelper: no command\n"); return 1; }
    if (chroot(root) < 0) die("chroot");
    if (chdir(cwd) < 0) {
        fprintf(stderr, "vmhelper: cannot enter %s in the guest: %s\n", cwd, strerror(errno));
        return 1;
    }
    /* execvpe looks PATH up in the caller's environment: take it from the command's. */
    for (char **e = env; *e; e++)
        if (strncmp(*e, "PATH=", 5) == 0) setenv("PATH", *e + 5, 1);
    signal(SIGPIPE, SIG_DFL);
    execvpe(args[0], args, env);
    fprintf(stderr, "vm-test: cannot run %s in the guest: %s\n", args[0], strerror(errno));
    return errno == ENOENT ? 127 : 126;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "relay") == 0) return relay(argv[2], argv[3]);
    if (argc == 6 && strcmp(argv[1], "exec") == 0) return run(argv[2], argv[3], argv[4], argv[5]);
    fprintf(stderr, "usage: vmhelper relay PORT PIDFILE | vmhelper exec ROOT CWD ARGV ENV\n");
    return 2;
}

/* ecg_floor: the native floor for `rawble ecg --json` in Scripts/benchmark-ecg-vm (issue 26).
 *
 *   ecg_floor ADDRESS [--timeout S]
 *
 * A minimal Polar H10 ECG client in C on the kernel path (the kernel's L2CAP ATT socket, beside
 * bluetoothd), doing the same per-frame work as `rawble ecg --json`, the cheapest way Linux allows:
 *   connect:  socket(AF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP) bound to any adapter (LE public,
 *             cid 4), connected to ADDRESS as an LE RANDOM address on cid 4 (ATT): the kernel makes
 *             the LE connection;
 *   ATT:      Exchange MTU (232: the H10 wants at least 232), Read By Type of 0x2803 over every
 *             handle until Attribute Not Found, for the value handles of the PMD control point
 *             FB005C81-... and data FB005C82-... (their CCCDs trusted to follow them);
 *             `connected` line; Write Request 0x0002 (indications) to the control point's CCCD,
 *             0x0001 (notifications) to the data CCCD; the start-ECG command
 *             02 00 00 01 82 00 01 01 0E 00 (130 Hz, 14 bits), its Write Response and its
 *             indication F0 02 00 00 00 00; `started` line;
 *   stream:   an event loop: ONE epoll_wait (the socket and a signalfd for SIGINT/SIGTERM), ONE
 *             read of the socket and ONE write(2) of the JSON line per ECG notification (numbers
 *             formatted by hand); every indication confirmed (0x1E), other PDUs ignored;
 *   end:      SIGINT/SIGTERM: stop (03 00) to the control point, up to 2 s for its Write
 *             Response, `stopped` line, the socket closed (the kernel disconnects), exit 0.
 * stdout, one JSON line each ("t": CLOCK_MONOTONIC in seconds, as Benchmarks/Reference/
 * bleakheart_ecg.py prints them):
 *   {"event":"connected","t","mtu"}        after the MTU exchange and discovery (as rawble's)
 *   {"event":"started","t"}                the start's Write Response and indication arrived
 *   {"event":"ecg","t","deviceTime","uV":[..]}   one per ECG frame (deviceTime: the frame's
 *                                          u64 timestamp, ns)
 *   {"event":"stopped","t","samples"}
 * Any error: one line on stderr, exit 1. --timeout S (default 30) bounds each wait of the
 * start-up (the connection, each response). It trusts its peer far more than rawble does (this
 * is a benchmark floor, not a host): every read is bounds-checked so it cannot overrun, but
 * anything unexpected simply ends it with exit 1. Needs no libbluetooth headers (its own
 * struct sockaddr_l2).
 * Build: cc -O2 -o ecg_floor ecg_floor.c
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_BLUETOOTH
#define AF_BLUETOOTH 31
#endif
#define BTPROTO_L2CAP 0
#define BDADDR_LE_PUBLIC 1
#define BDADDR_LE_RANDOM 2
#define ATT_CID 4
#define MTU 232

/* The kernel's struct sockaddr_l2 (include/net/bluetooth/l2cap.h): 14 bytes. */
struct sockaddr_l2 {
    sa_family_t l2_family;
    uint16_t l2_psm;      /* little-endian */
    uint8_t l2_bdaddr[6]; /* least-significant byte first */
    uint16_t l2_cid;      /* little-endian */
    uint8_t l2_bdaddr_type;
};

static const uint8_t CONTROL_POINT_UUID[16] = {0xC8, 0xF0, 0x8D, 0x2D, 0xCD, 0x8A, 0xAD, 0x1C,
                                               0x87, 0xF3, 0xE7, 0x02, 0x81, 0x5C, 0x00, 0xFB};
static const uint8_t DATA_UUID[16] = {0xC8, 0xF0, 0x8D, 0x2D, 0xCD, 0x8A, 0xAD, 0x1C,
                                      0x87, 0xF3, 0xE7, 0x02, 0x82, 0x5C, 0x00, 0xFB};

static int sock = -1, ep = -1, sigfd = -1;
static int stop_requested = 0;
static double timeout_s = 30;
static uint8_t pdu[1024];                 /* the last PDU read */
static uint16_t cp_handle = 0, data_handle = 0;
static int start_status = -1;             /* the start indication's status, -1: not yet */
static uint64_t samples = 0;

static void die(const char *fmt, ...) {
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "ecg_floor: %s\n", text);
    exit(1);
}

static double now_mono(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void put_out(const char *line, size_t n) {
    for (size_t done = 0; done < n;) {
        ssize_t w = write(1, line + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) exit(1);
        done += (size_t)w;
    }
}

/* ---- number formatting, by hand ---- */
static char *put_u64(char *p, uint64_t v) {
    char digits[20];
    int i = 0;
    do {
        digits[i++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (i) *p++ = digits[--i];
    return p;
}

static char *put_i32(char *p, int32_t v) {
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, (uint64_t)(-(int64_t)v));
    }
    return put_u64(p, (uint64_t)v);
}

/* CLOCK_MONOTONIC as seconds with 6 decimals. */
static char *put_time(char *p) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    p = put_u64(p, (uint64_t)t.tv_sec);
    *p++ = '.';
    uint32_t us = (uint32_t)(t.tv_nsec / 1000);
    for (uint32_t d = 100000; d; d /= 10) *p++ = (char)('0' + us / d % 10);
    return p;
}

static char *put_str(char *p, const char *s) {
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

/* {"event":"NAME","t":T<rest>}\n */
static void event_line(const char *name, const char *rest) {
    char line[256];
    char *p = put_str(line, "{\"event\":\"");
    p = put_str(p, name);
    p = put_str(p, "\",\"t\":");
    p = put_time(p);
    p = put_str(p, rest);
    p = put_str(p, "}\n");
    put_out(line, (size_t)(p - line));
}

/* ---- ATT ---- */
static void send_pdu(const uint8_t *bytes, size_t n) {
    for (;;) {
        ssize_t w = write(sock, bytes, n);
        if (w < 0 && errno == EINTR) continue;
        if (w != (ssize_t)n) die("write to the L2CAP socket: %s", w < 0 ? strerror(errno) : "short");
        return;
    }
}

/* One ECG notification's value: one line, one write(2). */
static void ecg(const uint8_t *v, size_t n) {
    if (n < 10 || v[0] != 0x00 || v[9] != 0x00) return; /* not an ECG frame of type 0 */
    static char line[64 + 20 + 20 + (sizeof pdu / 3) * 9];
    char *p = put_str(line, "{\"event\":\"ecg\",\"t\":");
    p = put_time(p);
    p = put_str(p, ",\"deviceTime\":");
    uint64_t stamp = 0;
    for (int i = 8; i >= 1; i--) stamp = stamp << 8 | v[i];
    p = put_u64(p, stamp);
    p = put_str(p, ",\"uV\":[");
    size_t count = (n - 10) / 3;
    const uint8_t *s = v + 10;
    for (size_t i = 0; i < count; i++, s += 3) {
        int32_t x = (int32_t)((uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16);
        if (x & 0x800000) x -= 0x1000000;
        if (i) *p++ = ',';
        p = put_i32(p, x);
    }
    *p++ = ']';
    *p++ = '}';
    *p++ = '\n';
    samples += count;
    put_out(line, (size_t)(p - line));
}

/* What every PDU gets, whoever waits: ECG frames printed, indications confirmed (the control
 * point's start reply noted), the server's requests answered. */
static void handle(size_t n) {
    if (n == 0) return;
    uint8_t op = pdu[0];
    if (op == 0x1B) {
        if (n >= 3 && data_handle && (pdu[1] | pdu[2] << 8) == data_handle) ecg(pdu + 3, n - 3);
    } else if (op == 0x1D) {
        if (n >= 7 && (pdu[1] | pdu[2] << 8) == cp_handle && pdu[3] == 0xF0 && pdu[4] == 0x02 && pdu[5] == 0x00)
            start_status = pdu[6];
        uint8_t confirm = 0x1E;
        send_pdu(&confirm, 1);
    } else if (op == 0x02) { /* the server's own MTU exchange */
        uint8_t answer[3] = {0x03, MTU & 0xFF, MTU >> 8};
        send_pdu(answer, sizeof answer);
    } else if (!(op & 0x40) && (op == 0x04 || op == 0x06 || op == 0x08 || op == 0x0A || op == 0x0C ||
                                op == 0x0E || op == 0x10 || op == 0x12 || op == 0x16 || op == 0x18 || op == 0x20)) {
        uint8_t answer[5] = {0x01, op, 0x00, 0x00, 0x06}; /* Request Not Supported */
        send_pdu(answer, sizeof answer);
    }
}

/* Waits at most `ms` (-1: no limit) for the socket or a signal: one epoll_wait, then at most one
 * read. Returns the PDU's length (in pdu, already handled), or 0 (timeout or a signal only:
 * stop_requested is set then). */
static size_t next_pdu(int ms) {
    struct epoll_event events[2];
    int ready;
    do ready = epoll_wait(ep, events, 2, ms);
    while (ready < 0 && errno == EINTR);
    if (ready < 0) die("epoll_wait: %s", strerror(errno));
    int readable = 0;
    for (int i = 0; i < ready; i++) {
        if (events[i].data.fd == sigfd) {
            struct signalfd_siginfo info;
            if (read(sigfd, &info, sizeof info) > 0) stop_requested = 1;
        } else {
            readable = 1;
        }
    }
    if (!readable) return 0;
    ssize_t n;
    do n = read(sock, pdu, sizeof pdu);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN) return 0;
    if (n < 0) die("the link is gone: %s", strerror(errno));
    if (n == 0) die("the link is gone");
    handle((size_t)n);
    return (size_t)n;
}

static int ms_left(double deadline) {
    double left = deadline - now_mono();
    return left <= 0 ? 0 : (int)(left * 1000) + 1;
}

/* Sends a request and waits at most `seconds` for its response (opcode `answer`) or an Error
 * Response to it. Returns its length in pdu, or 0 on timeout. A signal in the start-up ends it. */
static size_t request(const uint8_t *q, size_t length, uint8_t answer, double seconds, int in_startup) {
    send_pdu(q, length);
    double deadline = now_mono() + seconds;
    for (;;) {
        int ms = ms_left(deadline);
        if (ms == 0) return 0;
        size_t n = next_pdu(ms);
        if (stop_requested && in_startup) die("interrupted during the start-up");
        if (n == 0) continue;
        if (pdu[0] == answer) return n;
        if (pdu[0] == 0x01 && n >= 5 && pdu[1] == q[0]) return n;
    }
}

static void write_request(uint16_t handle, const uint8_t *value, size_t length, const char *what) {
    uint8_t q[3 + 16];
    if (length > 16) die("value too long");
    q[0] = 0x12;
    q[1] = handle & 0xFF;
    q[2] = handle >> 8;
    memcpy(q + 3, value, length);
    size_t n = request(q, 3 + length, 0x13, timeout_s, 1);
    if (n == 0) die("%s: no response within %g s", what, timeout_s);
    if (pdu[0] != 0x13) die("%s: error 0x%02x", what, pdu[4]);
}

int main(int argc, char **argv) {
    const char *address = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--timeout") && i + 1 < argc) timeout_s = atof(argv[++i]);
        else if (argv[i][0] != '-' && !address) address = argv[i];
        else { fprintf(stderr, "usage: ecg_floor ADDRESS [--timeout S]\n"); return 64; }
    }
    unsigned b[6];
    if (!address || timeout_s <= 0 ||
        sscanf(address, "%2x:%2x:%2x:%2x:%2x:%2x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6) {
        fprintf(stderr, "usage: ecg_floor ADDRESS [--timeout S]\n");
        return 64;
    }

    /* SIGINT and SIGTERM through a signalfd, watched by the same epoll as the socket. */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0) die("sigprocmask: %s", strerror(errno));
    sigfd = signalfd(-1, &mask, SFD_CLOEXEC);
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (sigfd < 0 || ep < 0) die("signalfd/epoll: %s", strerror(errno));

    /* The kernel's ATT channel to the peer: it makes the LE connection. */
    sock = socket(AF_BLUETOOTH, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, BTPROTO_L2CAP);
    if (sock < 0) die("socket(AF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP): %s", strerror(errno));
    struct sockaddr_l2 local = {.l2_family = AF_BLUETOOTH, .l2_cid = htole16(ATT_CID), .l2_bdaddr_type = BDADDR_LE_PUBLIC};
    if (bind(sock, (struct sockaddr *)&local, sizeof local) != 0) die("bind: %s", strerror(errno));
    struct sockaddr_l2 remote = {.l2_family = AF_BLUETOOTH, .l2_cid = htole16(ATT_CID), .l2_bdaddr_type = BDADDR_LE_RANDOM};
    for (int i = 0; i < 6; i++) remote.l2_bdaddr[i] = (uint8_t)b[5 - i];
    struct epoll_event watch = {.events = EPOLLOUT, .data.fd = sock};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, sock, &watch) != 0) die("epoll_ctl: %s", strerror(errno));
    watch = (struct epoll_event){.events = EPOLLIN, .data.fd = sigfd};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, sigfd, &watch) != 0) die("epoll_ctl: %s", strerror(errno));
    if (connect(sock, (struct sockaddr *)&remote, sizeof remote) != 0) {
        if (errno != EINPROGRESS) die("connect to %s: %s", address, strerror(errno));
        double deadline = now_mono() + timeout_s;
        for (int connected = 0; !connected;) {
            int ms = ms_left(deadline);
            if (ms == 0) die("connect to %s: no connection within %g s", address, timeout_s);
            struct epoll_event events[2];
            int ready = epoll_wait(ep, events, 2, ms);
            if (ready < 0 && errno != EINTR) die("epoll_wait: %s", strerror(errno));
            for (int i = 0; i < ready; i++) {
                if (events[i].data.fd == sigfd) die("interrupted during the start-up");
                connected = 1;
            }
        }
        int error = 0;
        socklen_t length = sizeof error;
        if (getsockopt(sock, SOL_SOCKET, SO_ERROR, &error, &length) != 0) die("SO_ERROR: %s", strerror(errno));
        if (error) die("connect to %s: %s", address, strerror(error));
    }
    /* From here: blocking I/O (a read only after epoll said readable), readability watched. */
    if (fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) & ~O_NONBLOCK) != 0) die("fcntl: %s", strerror(errno));
    watch = (struct epoll_event){.events = EPOLLIN, .data.fd = sock};
    if (epoll_ctl(ep, EPOLL_CTL_MOD, sock, &watch) != 0) die("epoll_ctl: %s", strerror(errno));

    /* MTU */
    uint8_t exchange[3] = {0x02, MTU & 0xFF, MTU >> 8};
    size_t n = request(exchange, sizeof exchange, 0x03, timeout_s, 1);
    if (n == 0) die("Exchange MTU: no response within %g s", timeout_s);
    if (pdu[0] != 0x03 || n < 3) die("Exchange MTU: error 0x%02x", n >= 5 ? pdu[4] : 0);
    unsigned server_mtu = pdu[1] | pdu[2] << 8;
    unsigned mtu = server_mtu < MTU ? server_mtu : MTU;

    /* Discovery: every characteristic declaration, for the PMD control point's and data's value handles. */
    for (uint32_t from = 1; from <= 0xFFFF;) {
        uint8_t q[7] = {0x08, from & 0xFF, from >> 8, 0xFF, 0xFF, 0x03, 0x28};
        n = request(q, sizeof q, 0x09, timeout_s, 1);
        if (n == 0) die("Read By Type: no response within %g s", timeout_s);
        if (pdu[0] == 0x01) {
            if (pdu[4] == 0x0A) break; /* Attribute Not Found: the end */
            die("Read By Type: error 0x%02x", pdu[4]);
        }
        size_t size = n >= 2 ? pdu[1] : 0;
        if (size < 7) die("Read By Type: a bad response");
        uint16_t last = 0;
        for (size_t i = 2; i + size <= n; i += size) {
            last = (uint16_t)(pdu[i] | pdu[i + 1] << 8);
            uint16_t value = (uint16_t)(pdu[i + 3] | pdu[i + 4] << 8);
            if (size == 21 && !memcmp(pdu + i + 5, CONTROL_POINT_UUID, 16)) cp_handle = value;
            if (size == 21 && !memcmp(pdu + i + 5, DATA_UUID, 16)) data_handle = value;
        }
        if (last < from) die("Read By Type: handles going backwards");
        from = (uint32_t)last + 1;
    }
    if (!cp_handle || !data_handle) die("no PMD control point or data characteristic");
    char rest[64];
    snprintf(rest, sizeof rest, ",\"mtu\":%u", mtu);
    event_line("connected", rest);

    /* Subscribe, then start ECG: 130 Hz, 14-bit. */
    static const uint8_t indications[2] = {0x02, 0x00}, notifications[2] = {0x01, 0x00};
    write_request((uint16_t)(cp_handle + 1), indications, 2, "the control point's CCCD");
    write_request((uint16_t)(data_handle + 1), notifications, 2, "the data's CCCD");
    static const uint8_t start[10] = {0x02, 0x00, 0x00, 0x01, 0x82, 0x00, 0x01, 0x01, 0x0E, 0x00};
    write_request(cp_handle, start, sizeof start, "start ECG");
    double deadline = now_mono() + timeout_s;
    while (start_status < 0) {
        int ms = ms_left(deadline);
        if (ms == 0) die("start ECG: no indication within %g s", timeout_s);
        next_pdu(ms);
        if (stop_requested) die("interrupted during the start-up");
    }
    if (start_status != 0) die("start ECG: status %d", start_status);
    event_line("started", "");

    /* The stream: one epoll_wait, one read, one write per notification. */
    while (!stop_requested) next_pdu(-1);

    static const uint8_t stop[2] = {0x03, 0x00};
    uint8_t q[5] = {0x12, cp_handle & 0xFF, cp_handle >> 8, stop[0], stop[1]};
    n = request(q, sizeof q, 0x13, 2.0, 0);
    char *p = put_str(rest, ",\"stopResponse\":");
    p = put_str(p, n == 0 ? "null" : pdu[0] == 0x13 ? "true" : "false");
    p = put_str(p, ",\"samples\":");
    p = put_u64(p, samples);
    *p = 0;
    event_line("stopped", rest);
    close(sock);
    return 0;
}

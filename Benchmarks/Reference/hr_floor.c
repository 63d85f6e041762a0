/* hr_floor: the native floor for `rawble hr --json` in Scripts/benchmark-hr (issue 10).
 *
 *   hr_floor --transport tcp:HOST:PORT [--count N] [--timeout S]
 *
 * A minimal heart-rate central in C doing the same wire work as `rawble hr --json`, in the
 * same order, over H4 on TCP (TCP_NODELAY) with plain blocking reads:
 *   start-up: Reset, Set Event Mask, LE Set Event Mask, Read BD_ADDR, LE Read Buffer Size,
 *             LE Set Random Address (a random static address);
 *   active scan (legacy commands) until the first connectable device advertising 0x180D in a
 *             16-bit service UUID list; scan disabled; LE Create Connection;
 *   GATT:     Find By Type Value for 0x180D (then once more after it: Attribute Not Found),
 *             Read By Type of the service's characteristics, Find Information for the
 *             measurement's CCCD, Read By Type over every handle for 0x2A00, 0x2A29, 0x2A24,
 *             0x2A19, a Read of Body Sensor Location, the Write Request of 0x0001 to the CCCD;
 *   output:   rawble's JSON lines (`connected`, then one `measurement` per notification: time,
 *             bpm, contact, energyExpended, rrIntervals, raw), one write(2) per line;
 *   end:      after N valid measurements, Disconnect (0x13) and exit 0.
 * It trusts its peer far more than rawble does (this is a benchmark floor, not a host): lengths
 * are bounds-checked so it cannot overrun, but anything unexpected simply ends it with exit 1.
 * Build: cc -O2 -o hr_floor hr_floor.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int fd = -1;
static double deadline = 0; /* CLOCK_MONOTONIC seconds; 0: none */
static uint8_t in[1 << 16];
static size_t in_len = 0, in_off = 0;
static uint16_t conn = 0xFFFF;

static double now_mono(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *fmt, ...) {
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    char line[320];
    int n = snprintf(line, sizeof line, "{\"error\":\"%s\"}\n", text);
    if (write(1, line, (size_t)n) < 0) { /* nothing more to do */ }
    exit(1);
}

static void send_all(const uint8_t *bytes, size_t count) {
    while (count > 0) {
        ssize_t n = write(fd, bytes, count);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die("write: %s", strerror(errno));
        bytes += n;
        count -= (size_t)n;
    }
}

/* Fills the read buffer with at least `need` unread bytes (bounded by the deadline). */
static void fill(size_t need) {
    if (need > sizeof in) die("packet too long");
    if (in_off > 0 && in_len - in_off < need) {
        memmove(in, in + in_off, in_len - in_off);
        in_len -= in_off;
        in_off = 0;
    }
    while (in_len - in_off < need) {
        if (deadline > 0) {
            double left = deadline - now_mono();
            if (left <= 0) die("timed out");
            struct pollfd p = {fd, POLLIN, 0};
            if (poll(&p, 1, (int)(left * 1000) + 1) == 0) continue;
        }
        ssize_t n = read(fd, in + in_len, sizeof in - in_len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die("the controller closed the connection");
        in_len += (size_t)n;
    }
}

/* One H4 packet: its type, and a pointer to its bytes after the type (valid until the next call). */
static const uint8_t *next_packet(uint8_t *type, size_t *length) {
    fill(1);
    *type = in[in_off];
    size_t header = *type == 0x04 ? 2 : *type == 0x02 ? 4 : 0;
    if (header == 0) die("unexpected H4 packet type 0x%02x", *type);
    fill(1 + header);
    const uint8_t *h = in + in_off + 1;
    size_t payload = *type == 0x04 ? h[1] : (size_t)(h[2] | h[3] << 8);
    fill(1 + header + payload);
    h = in + in_off + 1;
    *length = header + payload;
    in_off += 1 + header + payload;
    return h;
}

/* ---- ATT over ACL: one L2CAP SDU at a time, reassembled from fragments ---- */
static uint8_t sdu[1 << 16];
static size_t sdu_len = 0, sdu_need = 0;

typedef void (*event_handler)(const uint8_t *event, size_t length);

/* Reads packets until an ATT PDU arrives; events go to `on_event`. Returns the PDU length (in sdu). */
static size_t next_att(event_handler on_event) {
    for (;;) {
        uint8_t type;
        size_t length;
        const uint8_t *p = next_packet(&type, &length);
        if (type == 0x04) {
            if (on_event) on_event(p, length);
            continue;
        }
        uint16_t handle = (uint16_t)(p[0] | p[1] << 8);
        uint8_t boundary = (handle >> 12) & 3;
        size_t data_len = length - 4;
        const uint8_t *data = p + 4;
        if ((handle & 0x0FFF) != conn) continue;
        if (boundary == 1) { /* continuation */
            if (sdu_need == 0 || sdu_len + data_len > sdu_need) { sdu_need = 0; continue; }
            memcpy(sdu + sdu_len, data, data_len);
            sdu_len += data_len;
        } else {
            if (data_len < 4) continue;
            sdu_need = 4 + (size_t)(data[0] | data[1] << 8);
            if (data_len > sdu_need) { sdu_need = 0; continue; }
            memcpy(sdu, data, data_len);
            sdu_len = data_len;
        }
        if (sdu_need > 0 && sdu_len == sdu_need) {
            sdu_need = 0;
            if ((sdu[2] | sdu[3] << 8) != 0x0004) continue; /* not the ATT channel */
            memmove(sdu, sdu + 4, sdu_len - 4);
            return sdu_len - 4;
        }
    }
}

static void send_att(const uint8_t *pdu, size_t length) {
    uint8_t packet[5 + 4 + 64];
    if (length > 64) die("ATT PDU too long");
    packet[0] = 0x02;
    packet[1] = conn & 0xFF;
    packet[2] = (conn >> 8) & 0x0F; /* first non-automatically-flushable */
    packet[3] = (uint8_t)(length + 4);
    packet[4] = 0;
    packet[5] = (uint8_t)length;
    packet[6] = 0;
    packet[7] = 0x04;
    packet[8] = 0x00;
    memcpy(packet + 9, pdu, length);
    send_all(packet, 9 + length);
}

static void ignore_event(const uint8_t *event, size_t length) {
    (void)length;
    if (event[0] == 0x05) die("disconnected");
}

/* ---- HCI commands ---- */
static uint8_t reply[256];
static size_t reply_len;

/* Sends a command and waits for its Command Complete (return parameters in `reply`) or Status. */
static void command(uint16_t opcode, const uint8_t *parameters, uint8_t length, int want_status) {
    uint8_t packet[4 + 255];
    packet[0] = 0x01;
    packet[1] = opcode & 0xFF;
    packet[2] = opcode >> 8;
    packet[3] = length;
    if (length) memcpy(packet + 4, parameters, length);
    send_all(packet, 4 + (size_t)length);
    for (;;) {
        uint8_t type;
        size_t n;
        const uint8_t *p = next_packet(&type, &n);
        if (type != 0x04 || n < 2) continue;
        if (p[0] == 0x0E && n >= 6 && (p[3] | p[4] << 8) == opcode) {
            reply_len = n - 5;
            memcpy(reply, p + 5, reply_len);
            if (reply_len > 0 && reply[0] != 0) die("command 0x%04x failed: 0x%02x", opcode, reply[0]);
            return;
        }
        if (p[0] == 0x0F && n >= 6 && (p[4] | p[5] << 8) == opcode) {
            if (p[2] != 0) die("command 0x%04x failed: 0x%02x", opcode, p[2]);
            if (want_status) return;
        }
    }
}

/* Does this AD data list 0x180D among its 16-bit service UUIDs? */
static int advertises_heart_rate(const uint8_t *ad, size_t length) {
    size_t i = 0;
    while (i < length) {
        size_t field = ad[i];
        if (field == 0 || i + 1 + field > length) return 0;
        uint8_t kind = ad[i + 1];
        if (kind == 0x02 || kind == 0x03)
            for (size_t j = i + 2; j + 1 < i + 1 + field; j += 2)
                if (ad[j] == 0x0D && ad[j + 1] == 0x18) return 1;
        i += 1 + field;
    }
    return 0;
}

/* ---- output ---- */
static const char *location_names[] = {"other", "chest", "wrist", "finger", "hand", "ear-lobe", "foot"};

static size_t put_hex(char *out, const uint8_t *bytes, size_t count) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < count; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    return 2 * count;
}

static void put_text(char *line, size_t *n, size_t size, const char *key, const uint8_t *value, size_t length) {
    *n += (size_t)snprintf(line + *n, size - *n, ",\"%s\":\"", key);
    for (size_t i = 0; i < length && *n + 8 < size; i++) {
        uint8_t c = value[i];
        if (c == '"' || c == '\\') { line[(*n)++] = '\\'; line[(*n)++] = (char)c; }
        else if (c < 0x20) *n += (size_t)snprintf(line + *n, size - *n, "\\u%04x", c);
        else line[(*n)++] = (char)c;
    }
    *n += (size_t)snprintf(line + *n, size - *n, "\"");
}

/* One measurement line, or 0 when the value does not decode. */
static int measurement(const uint8_t *v, size_t length) {
    if (length < 2) return 0;
    uint8_t flags = v[0];
    size_t offset = 1;
    unsigned bpm;
    if (flags & 1) {
        if (length < 3) return 0;
        bpm = v[1] | v[2] << 8;
        offset = 3;
    } else {
        bpm = v[1];
        offset = 2;
    }
    int energy = -1;
    if (flags & 0x08) {
        if (length < offset + 2) return 0;
        energy = v[offset] | v[offset + 1] << 8;
        offset += 2;
    }
    if (!(flags & 0x10) && length > offset) return 0;
    if ((flags & 0x10) && (length - offset) % 2) return 0;
    static const char *contact[] = {"unsupported", "unsupported", "not-detected", "detected"};
    char line[1024];
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    struct tm utc;
    gmtime_r(&t.tv_sec, &utc);
    size_t n = (size_t)snprintf(line, sizeof line,
        "{\"event\":\"measurement\",\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ\",\"bpm\":%u,\"contact\":\"%s\",",
        utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
        t.tv_nsec / 1000, bpm, contact[(flags >> 1) & 3]);
    n += energy < 0 ? (size_t)snprintf(line + n, sizeof line - n, "\"energyExpended\":null,\"rrIntervals\":[")
                    : (size_t)snprintf(line + n, sizeof line - n, "\"energyExpended\":%d,\"rrIntervals\":[", energy);
    for (size_t i = offset; (flags & 0x10) && i + 1 < length && n + 40 < sizeof line; i += 2)
        n += (size_t)snprintf(line + n, sizeof line - n, "%s%.17g", i == offset ? "" : ",", (v[i] | v[i + 1] << 8) / 1024.0);
    n += (size_t)snprintf(line + n, sizeof line - n, "],\"raw\":\"");
    if (n + 2 * length + 4 > sizeof line) return 0;
    n += put_hex(line + n, v, length);
    line[n++] = '"';
    line[n++] = '}';
    line[n++] = '\n';
    for (size_t done = 0; done < n;) {
        ssize_t w = write(1, line + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) exit(1);
        done += (size_t)w;
    }
    return 1;
}

/* An ATT request and its response (an Error Response is returned too, for the caller to judge). */
static size_t request(const uint8_t *pdu, size_t length) {
    send_att(pdu, length);
    for (;;) {
        size_t n = next_att(ignore_event);
        if (n == 0) continue;
        if (sdu[0] == 0x1B || sdu[0] == 0x1D) continue; /* no subscription yet */
        return n;
    }
}

/* Read By Type over every handle for a 16-bit UUID: the first value, or length 0. */
static size_t read_by_type(uint16_t uuid, uint8_t *value) {
    uint8_t q[] = {0x08, 0x01, 0x00, 0xFF, 0xFF, uuid & 0xFF, uuid >> 8};
    size_t n = request(q, sizeof q);
    if (sdu[0] != 0x09 || n < 2 || sdu[1] < 3 || (size_t)sdu[1] + 2 > n) return 0;
    size_t length = sdu[1] - 2;
    memcpy(value, sdu + 4, length);
    return length;
}

int main(int argc, char **argv) {
    const char *spec = NULL;
    long count = 0;
    double timeout = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--transport") && i + 1 < argc) spec = argv[++i];
        else if (!strcmp(argv[i], "--count") && i + 1 < argc) count = atol(argv[++i]);
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) timeout = atof(argv[++i]);
        else { fprintf(stderr, "usage: hr_floor --transport tcp:HOST:PORT [--count N] [--timeout S]\n"); return 64; }
    }
    if (!spec || strncmp(spec, "tcp:", 4)) { fprintf(stderr, "hr_floor: --transport tcp:HOST:PORT\n"); return 64; }
    if (timeout > 0) deadline = now_mono() + timeout;
    char host[256];
    const char *colon = strrchr(spec + 4, ':');
    if (!colon || (size_t)(colon - spec - 4) >= sizeof host) die("bad transport");
    memcpy(host, spec + 4, (size_t)(colon - spec - 4));
    host[colon - spec - 4] = 0;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
    if (getaddrinfo(host, colon + 1, &hints, &ai) != 0) die("cannot resolve %s", host);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) die("connect: %s", strerror(errno));
    freeaddrinfo(ai);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);

    /* start-up */
    command(0x0C03, NULL, 0, 0);                                            /* Reset */
    uint8_t mask[8] = {0xFF, 0xFF, 0xFB, 0xFF, 0x07, 0xF8, 0xBF, 0x3D};
    command(0x0C01, mask, 8, 0);                                            /* Set Event Mask */
    uint8_t le_mask[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00};
    command(0x2001, le_mask, 8, 0);                                         /* LE Set Event Mask */
    command(0x1009, NULL, 0, 0);                                            /* Read BD_ADDR */
    command(0x2002, NULL, 0, 0);                                            /* LE Read Buffer Size */
    uint8_t random_address[6];
    srand((unsigned)(now_mono() * 1e6));
    for (int i = 0; i < 6; i++) random_address[i] = (uint8_t)rand();
    random_address[5] |= 0xC0;                                              /* static */
    command(0x2005, random_address, 6, 0);                                  /* LE Set Random Address */

    /* scan */
    uint8_t scan_parameters[7] = {0x01, 0x10, 0x00, 0x10, 0x00, 0x01, 0x00}; /* active, own random */
    command(0x200B, scan_parameters, 7, 0);
    uint8_t enable[2] = {0x01, 0x00};
    command(0x200C, enable, 2, 0);
    uint8_t peer[6], peer_type = 0;
    for (int found = 0; !found;) {
        uint8_t type;
        size_t n;
        const uint8_t *p = next_packet(&type, &n);
        if (type != 0x04 || n < 4 || p[0] != 0x3E || p[2] != 0x02) continue;
        size_t reports = p[3], i = 4;
        for (size_t r = 0; r < reports && i + 9 <= n; r++) {
            uint8_t event_type = p[i], address_type = p[i + 1];
            const uint8_t *address = p + i + 2;
            size_t length = p[i + 8];
            if (i + 9 + length + 1 > n) break;
            if ((event_type == 0x00 || event_type == 0x01) && advertises_heart_rate(p + i + 9, length)) {
                memcpy(peer, address, 6);
                peer_type = address_type;
                found = 1;
                break;
            }
            i += 9 + length + 1;
        }
    }
    uint8_t disable[2] = {0x00, 0x00};
    command(0x200C, disable, 2, 0);

    /* connect */
    uint8_t create[25] = {0x60, 0x00, 0x30, 0x00, 0x00, peer_type, 0, 0, 0, 0, 0, 0, 0x01,
                          0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00, 0x00, 0x00, 0x00};
    memcpy(create + 6, peer, 6);
    command(0x200D, create, 25, 1);
    for (;;) {
        uint8_t type;
        size_t n;
        const uint8_t *p = next_packet(&type, &n);
        if (type == 0x04 && n >= 6 && p[0] == 0x3E && (p[2] == 0x01 || p[2] == 0x0A)) {
            if (p[3] != 0) die("connection failed: 0x%02x", p[3]);
            conn = (uint16_t)((p[4] | p[5] << 8) & 0x0FFF);
            break;
        }
    }

    /* GATT: the Heart Rate service, its characteristics, the measurement's CCCD */
    uint8_t find[] = {0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x0D, 0x18};
    size_t n = request(find, sizeof find);
    if (sdu[0] != 0x07 || n < 5) die("no Heart Rate service");
    uint16_t start = (uint16_t)(sdu[1] | sdu[2] << 8), end = (uint16_t)(sdu[3] | sdu[4] << 8);
    if (end < 0xFFFF) {
        uint8_t again[] = {0x06, (uint8_t)((end + 1) & 0xFF), (uint8_t)((end + 1) >> 8), 0xFF, 0xFF, 0x00, 0x28, 0x0D, 0x18};
        request(again, sizeof again);
    }
    uint16_t measurement_value = 0, next_declaration = end, location_value = 0;
    for (uint16_t from = start; from <= end;) {
        uint8_t q[] = {0x08, from & 0xFF, from >> 8, end & 0xFF, end >> 8, 0x03, 0x28};
        n = request(q, sizeof q);
        if (sdu[0] != 0x09 || n < 2 || sdu[1] < 7) break;
        uint16_t last = from;
        for (size_t i = 2; i + sdu[1] <= n; i += sdu[1]) {
            uint16_t declaration = (uint16_t)(sdu[i] | sdu[i + 1] << 8);
            uint16_t value = (uint16_t)(sdu[i + 3] | sdu[i + 4] << 8);
            uint16_t uuid = sdu[1] == 7 ? (uint16_t)(sdu[i + 5] | sdu[i + 6] << 8) : 0;
            if (measurement_value && next_declaration == end && declaration > measurement_value)
                next_declaration = (uint16_t)(declaration - 1);
            if (uuid == 0x2A37) measurement_value = value;
            if (uuid == 0x2A38) location_value = value;
            last = declaration;
        }
        if (last == 0xFFFF || last < from) break;
        from = (uint16_t)(last + 1);
    }
    if (!measurement_value) die("no Heart Rate Measurement");
    uint16_t cccd = 0;
    {
        uint16_t from = (uint16_t)(measurement_value + 1);
        uint8_t q[] = {0x04, from & 0xFF, from >> 8, next_declaration & 0xFF, next_declaration >> 8};
        n = request(q, sizeof q);
        if (sdu[0] == 0x05 && n >= 2 && sdu[1] == 1)
            for (size_t i = 2; i + 4 <= n; i += 4)
                if ((sdu[i + 2] | sdu[i + 3] << 8) == 0x2902) cccd = (uint16_t)(sdu[i] | sdu[i + 1] << 8);
    }
    if (!cccd) die("no CCCD");

    /* device information, then the connected line */
    char line[1024];
    size_t used = 0;
    char address[18];
    snprintf(address, sizeof address, "%02X:%02X:%02X:%02X:%02X:%02X", peer[5], peer[4], peer[3], peer[2], peer[1], peer[0]);
    used += (size_t)snprintf(line, sizeof line, "{\"event\":\"connected\",\"address\":\"%s\"", address);
    uint8_t value[256];
    size_t length;
    static const struct { uint16_t uuid; const char *key; } texts[] = {{0x2A00, "name"}, {0x2A29, "manufacturer"}, {0x2A24, "model"}};
    for (int i = 0; i < 3; i++)
        if ((length = read_by_type(texts[i].uuid, value)) > 0) put_text(line, &used, sizeof line, texts[i].key, value, length);
    int battery = (length = read_by_type(0x2A19, value)) == 1 ? value[0] : -1;
    if (location_value) {
        uint8_t q[] = {0x0A, location_value & 0xFF, location_value >> 8};
        n = request(q, sizeof q);
        if (sdu[0] == 0x0B && n == 2) {
            if (sdu[1] < 7) used += (size_t)snprintf(line + used, sizeof line - used, ",\"bodySensorLocation\":\"%s\"", location_names[sdu[1]]);
            else used += (size_t)snprintf(line + used, sizeof line - used, ",\"bodySensorLocation\":%u", sdu[1]);
        }
    }
    if (battery >= 0) used += (size_t)snprintf(line + used, sizeof line - used, ",\"battery\":%d", battery);
    used += (size_t)snprintf(line + used, sizeof line - used, "}\n");

    /* subscribe */
    uint8_t write_cccd[] = {0x12, cccd & 0xFF, cccd >> 8, 0x01, 0x00};
    n = request(write_cccd, sizeof write_cccd);
    if (sdu[0] != 0x13) die("subscription refused");
    if (write(1, line, used) < 0) return 1;

    /* measurements */
    for (long valid = 0; !count || valid < count;) {
        n = next_att(ignore_event);
        if (n >= 3 && sdu[0] == 0x1B && (sdu[1] | sdu[2] << 8) == measurement_value) {
            if (measurement(sdu + 3, n - 3)) valid++;
        } else if (n >= 3 && sdu[0] == 0x1D) {
            uint8_t confirm = 0x1E;
            send_att(&confirm, 1);
        }
    }
    uint8_t disconnect[3] = {conn & 0xFF, conn >> 8, 0x13};
    command(0x0406, disconnect, 3, 1);
    return 0;
}

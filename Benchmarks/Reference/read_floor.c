/* read_floor: the C side of Scripts/benchmark-readloop (issue 10): connects to 127.0.0.1:PORT
 * and reads with plain blocking read(2) until COUNT * SIZE bytes arrived, doing nothing with
 * them. One JSON line: reads, and this process's CPU (CLOCK_PROCESS_CPUTIME_ID, user + system)
 * from the first byte to the last, per packet.
 *   read_floor PORT COUNT [SIZE]
 * Build: cc -O2 -o read_floor read_floor.c
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: read_floor PORT COUNT [SIZE]\n"); return 64; }
    long count = atol(argv[2]), size = argc > 3 ? atol(argv[3]) : 20, total = 0, reads = 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1])), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(fd, (void *)&address, sizeof address)) { perror("read_floor"); return 69; }
    static unsigned char buffer[65536];
    double first = 0;
    while (total < count * size) {
        ssize_t n = read(fd, buffer, sizeof buffer);
        if (n <= 0) { fprintf(stderr, "read_floor: the sender closed early\n"); return 74; }
        if (reads++ == 0) first = cpu_seconds();
        total += n;
    }
    double cpu = cpu_seconds() - first;
    printf("{\"reader\":\"C read(2)\",\"reads\":%ld,\"cpuPerPacketMicros\":%.2f}\n", reads, cpu * 1e6 / (double)(count - 1));
    return 0;
}

/* paced_sender: the peer of Scripts/benchmark-readloop (issue 10). Listens on 127.0.0.1:PORT
 * (0: any; the port is printed as the first line), accepts one client and sends it COUNT
 * packets of SIZE bytes (default 20: an H4 ACL packet carrying a short Heart Rate
 * notification), deadline-paced every INTERVAL_US microseconds (default 1000), TCP_NODELAY,
 * then waits for the client to close.
 *   paced_sender PORT COUNT [SIZE] [INTERVAL_US]
 * Build: cc -O2 -o paced_sender paced_sender.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: paced_sender PORT COUNT [SIZE] [INTERVAL_US]\n"); return 64; }
    int port = atoi(argv[1]), count = atoi(argv[2]);
    int size = argc > 3 ? atoi(argv[3]) : 20, interval = argc > 4 ? atoi(argv[4]) : 1000;
    if (size < 1 || size > 4096 || count < 1 || interval < 1) { fprintf(stderr, "paced_sender: bad arguments\n"); return 64; }
    int listener = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof address;
    if (bind(listener, (void *)&address, sizeof address) || listen(listener, 1) ||
        getsockname(listener, (void *)&address, &length)) { perror("paced_sender"); return 69; }
    printf("%d\n", ntohs(address.sin_port));
    fflush(stdout);
    int client = accept(listener, 0, 0);
    if (client < 0) { perror("paced_sender: accept"); return 69; }
    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    unsigned char packet[4096];
    /* 02 (ACL) 4000 (handle 0x040) length, then L2CAP length, CID 4, ATT notification 1b 1000 ... */
    memset(packet, 0x5a, sizeof packet);
    packet[0] = 0x02; packet[1] = 0x40; packet[2] = 0x00;
    packet[3] = (unsigned char)(size - 5); packet[4] = (unsigned char)((size - 5) >> 8);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (int i = 0; i < count; i++) {
        next.tv_nsec += (long)interval * 1000;
        while (next.tv_nsec >= 1000000000L) { next.tv_nsec -= 1000000000L; next.tv_sec++; }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, 0);
        if (write(client, packet, (size_t)size) != size) { perror("paced_sender: write"); return 74; }
    }
    char sink[64];
    while (read(client, sink, sizeof sink) > 0) {}
    return 0;
}

/*
 * A program that knows nothing of Ferry, for checkpoint/restart scenarios across processes:
 * NRANKS copies form a ring over TCP on the loopback (rank R listens on BASE_PORT+R and
 * connects to the next rank's port). At each step every rank sends its value to the next
 * rank, reads the previous rank's, mixes it into its own, appends one line with the step and
 * the value to an open file (O_APPEND), and prints "step N". At the end it appends
 * "done <value>". Each rank's file depends on every message it got, so a restore that loses,
 * repeats or reorders a message in flight leaves a different file than an uninterrupted run.
 * RANK and NRANKS default to FERRY_RANK and FERRY_NRANKS. With RING_HOSTS (one IPv4 address
 * per rank, comma-separated) the ranks are on those hosts: each listens on every address and
 * connects to the next rank's host.
 * Under DMTCP the setup (listen, connect, accept) runs with checkpoints held off (DMTCP's
 * dmtcp_disable_ckpt, found at run time; nothing elsewhere): DMTCP cannot checkpoint a connection
 * its peer has not accepted yet, and closes it ("we don't yet support checkpointing non-accepted
 * connections"), which broke the ring when a checkpoint came that early (a busy machine, 2026-11-30).
 * The file is opened afresh (O_TRUNC), as a program that writes its output from its start does.
 * A checkpoint can come before the open (the job's shell, or the program's own start, on a busy
 * machine): that generation holds no copy of the file, and a restore from it runs the open again.
 * With O_APPEND alone it appended after the killed run's lines (a rehearsal, 2026-11-30; the same
 * with a sleep before the program's exec); opened afresh it writes the same file.
 * Usage: ring OUT STEPS STEP_MILLIS BASE_PORT [RANK NRANKS]; no pause once $SCENARIO_HURRY exists
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int all(int fd, void *buf, size_t n, int reading) {
    char *p = buf;
    while (n > 0) {
        ssize_t k = reading ? read(fd, p, n) : write(fd, p, n);
        if (k <= 0) {
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static const char *arg(int argc, char **argv, int i, const char *env) {
    const char *v = argc > i ? argv[i] : getenv(env);
    if (v == NULL) {
        fprintf(stderr, "ring: no argument %d and no %s\n", i, env);
        exit(2);
    }
    return v;
}

/* DMTCP's dmtcp_disable_ckpt or dmtcp_enable_ckpt where the process runs under DMTCP; a no-op elsewhere. */
static void dmtcp_call(const char *name) {
    int (*f)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, name);
    if (f != NULL) {
        f();
    }
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: ring OUT STEPS STEP_MILLIS BASE_PORT [RANK NRANKS]\n");
        return 2;
    }
    int steps = atoi(argv[2]);
    long millis = atol(argv[3]);
    int base = atoi(argv[4]);
    int rank = atoi(arg(argc, argv, 5, "FERRY_RANK"));
    int nranks = atoi(arg(argc, argv, 6, "FERRY_NRANKS"));
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644); /* afresh: see the note above */
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    dmtcp_call("dmtcp_disable_ckpt"); /* until every connection of the ring is accepted */
    int one = 1;
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    const char *hosts = getenv("RING_HOSTS");
    a.sin_addr.s_addr = htonl(hosts != NULL ? INADDR_ANY : INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)(base + rank));
    if (bind(listener, (struct sockaddr *)&a, sizeof a) != 0 || listen(listener, 1) != 0) {
        perror("ring: listen");
        return 1;
    }
    a.sin_port = htons((uint16_t)(base + (rank + 1) % nranks));
    if (hosts != NULL) { /* the next rank's host: the ((rank + 1) % nranks)-th address */
        char copy[1024];
        snprintf(copy, sizeof copy, "%s", hosts);
        char *save = NULL, *h = strtok_r(copy, ",", &save);
        for (int i = 0; h != NULL && i < (rank + 1) % nranks; i++) {
            h = strtok_r(NULL, ",", &save);
        }
        if (h == NULL || inet_pton(AF_INET, h, &a.sin_addr) != 1) {
            fprintf(stderr, "ring: RING_HOSTS names no IPv4 address for rank %d\n", (rank + 1) % nranks);
            return 2;
        }
    }
    int next = -1;
    for (int tries = 0; next < 0; tries++) { /* the next rank may not listen yet: 30 s at most */
        next = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(next, (struct sockaddr *)&a, sizeof a) != 0) {
            close(next);
            next = -1;
            if (tries == 600) {
                perror("ring: connect");
                return 1;
            }
            usleep(50000);
        }
    }
    int prev = accept(listener, NULL, NULL);
    close(listener);
    if (prev < 0) {
        perror("ring: accept");
        return 1;
    }
    dmtcp_call("dmtcp_enable_ckpt");
    uint64_t value = (uint64_t)rank + 1;
    for (int step = 0; step < steps; step++) {
        uint64_t got;
        if (all(next, &value, sizeof value, 0) != 0 || all(prev, &got, sizeof got, 1) != 0) {
            fprintf(stderr, "ring: rank %d lost its neighbours at step %d\n", rank, step);
            return 1;
        }
        value = value * 6364136223846793005ull + got + (uint64_t)step;
        char line[64];
        int n = snprintf(line, sizeof line, "step %d %016llx\n", step, (unsigned long long)value);
        if (write(fd, line, n) != n) {
            perror("write");
            return 1;
        }
        printf("step %d\n", step);
        fflush(stdout);
        const char *hurry = getenv("SCENARIO_HURRY"); /* once that file exists: no pause, the same output */
        if (hurry == NULL || access(hurry, F_OK) != 0) {
            struct timespec ts = {millis / 1000, (millis % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    char line[64];
    int n = snprintf(line, sizeof line, "done %016llx\n", (unsigned long long)value);
    write(fd, line, n);
    return 0;
}

/*
 * A process for proc-capture tests: known values at known addresses, optional busy threads,
 * and an optional writer that rewrites every page of a buffer pass after pass, so a test can
 * tell a consistent image (taken while frozen) from a torn one.
 *
 *   victim MIB THREADS [write]
 *
 * Prints "ready marker=<addr> big=<addr> pass=<addr> index=<addr> pages=<n>" once set up,
 * then "tick <n>" every 50 ms; exits 0 after reading "quit" on stdin.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile uint64_t marker[4] = {0x314b4d5952524546ULL, 0x0123456789abcdefULL, 0xfeedfacecafebeefULL, 0};
volatile uint64_t pass_no = 1;   /* pages [0, page_index) hold pass_no, the rest pass_no - 1 */
volatile uint64_t page_index = 0;
volatile uint64_t spins[64];
static unsigned char *big;
static size_t pages;

static void *spin(void *arg) {
    volatile uint64_t *c = arg;
    for (;;) (*c)++;
    return NULL;
}

static void *writer(void *arg) {
    (void) arg;
    for (;;) {
        for (size_t i = 0; i < pages; i++) {
            *(volatile uint64_t *) (big + i * 4096) = pass_no;
            page_index = i + 1;
        }
        page_index = 0;
        pass_no++;
    }
    return NULL;
}

static void *ticker(void *arg) {
    (void) arg;
    for (uint64_t n = 0;; n++) {
        printf("tick %llu\n", (unsigned long long) n);
        fflush(stdout);
        usleep(50000);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: victim MIB THREADS [write]\n");
        return 2;
    }
    size_t mib = strtoul(argv[1], NULL, 10);
    int threads = atoi(argv[2]);
    int write = argc > 3 && strcmp(argv[3], "write") == 0;
    pages = mib * 256;
    big = malloc(mib << 20);
    /* first half: a pattern; second half: written zeros (must come back as zeros, may be holes) */
    for (size_t i = 0; i < (mib << 20) / 16; i++) ((uint64_t *) big)[i] = i * 0x9E3779B97F4A7C15ULL + 1;
    memset(big + (mib << 19), 0, mib << 19);
    marker[3] = (uint64_t) (uintptr_t) big;
    pthread_t t;
    for (int i = 0; i < threads && i < 64; i++) pthread_create(&t, NULL, spin, (void *) &spins[i]);
    if (write) {
        for (size_t i = 0; i < pages; i++) *(uint64_t *) (big + i * 4096) = 0;
        pthread_create(&t, NULL, writer, NULL);
    }
    printf("ready marker=%p big=%p pass=%p index=%p pages=%zu\n", (void *) marker, (void *) big, (void *) &pass_no,
           (void *) &page_index, pages);
    fflush(stdout);
    pthread_create(&t, NULL, ticker, NULL);
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "quit", 4) == 0) return 0;
    }
    return 0;
}

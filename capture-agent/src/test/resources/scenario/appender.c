/*
 * A program that knows nothing of Ferry, for checkpoint/restart scenarios: 4 threads turn a
 * 16 MiB heap over, step by step, and after each step the main thread appends one line with
 * the step and a checksum of the whole heap to an open file (O_APPEND). At the end it appends
 * "done <checksum>". Given the same arguments, an uninterrupted run and a killed-and-resumed
 * run must leave byte-identical files.
 * The file is opened afresh (O_TRUNC), as a program that writes its output from its start does.
 * A checkpoint can come before the open (the job's shell, or the program's own start, on a busy
 * machine): that generation holds no copy of the file, and a restore from it runs the open again.
 * With O_APPEND alone it appended after the killed run's lines (a rehearsal, 2026-11-30; the same
 * with a sleep before the program's exec); opened afresh it writes the same file.
 * Usage: appender OUT STEPS [STEP_MILLIS]; no pause once the file $SCENARIO_HURRY names exists
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4
#define WORDS (16u << 20) / 8

static uint64_t *heap;
static pthread_barrier_t start, end;
static volatile int step;

static void *worker(void *arg) {
    uintptr_t id = (uintptr_t)arg;
    for (;;) {
        pthread_barrier_wait(&start);
        /* Each thread its own quarter: threads striding over the same cache lines bounced them from core to core,
           the suite's CPU spent for nothing (each word's value depends on itself and the step alone). */
        size_t from = WORDS / THREADS * id, to = id == THREADS - 1 ? WORDS : WORDS / THREADS * (id + 1);
        for (size_t i = from; i < to; i++) {
            heap[i] = heap[i] * 6364136223846793005ull + 1442695040888963407ull + (uint64_t)step;
        }
        pthread_barrier_wait(&end);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: appender OUT STEPS [STEP_MILLIS]\n");
        return 2;
    }
    int steps = atoi(argv[2]);
    long millis = argc > 3 ? atol(argv[3]) : 50;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644); /* afresh: see the note above */
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    heap = malloc(WORDS * 8);
    for (size_t i = 0; i < WORDS; i++) {
        heap[i] = i;
    }
    pthread_barrier_init(&start, NULL, THREADS + 1);
    pthread_barrier_init(&end, NULL, THREADS + 1);
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++) {
        pthread_create(&t[i], NULL, worker, (void *)i);
    }
    uint64_t sum = 0;
    for (step = 0; step < steps; step++) {
        pthread_barrier_wait(&start);
        pthread_barrier_wait(&end);
        sum = 0;
        for (size_t i = 0; i < WORDS; i++) {
            sum ^= heap[i] + i;
        }
        char line[64];
        int n = snprintf(line, sizeof line, "step %d %016llx\n", step, (unsigned long long)sum);
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
    int n = snprintf(line, sizeof line, "done %016llx\n", (unsigned long long)sum);
    write(fd, line, n);
    close(fd);
    return 0;
}

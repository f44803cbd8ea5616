/*
 * A process tree for checkpoint/restart scenarios, knowing nothing of Ferry: a parent and the
 * child it forks, joined by a pipe. The child turns a 4 MiB heap over once per step and
 * writes the step's checksum into the pipe; the parent folds each value it reads into a sum
 * and appends "step N SUM" to an open file (O_APPEND), then, once the child is done,
 * "done SUM child EXIT". The same arguments leave the same file, however often the tree was
 * killed and restored in between.
 * The file is opened afresh (O_TRUNC), as a program that writes its output from its start does.
 * A checkpoint can come before the open (the job's shell, or the program's own start, on a busy
 * machine): that generation holds no copy of the file, and a restore from it runs the open again.
 * With O_APPEND alone it appended after the killed run's lines (a rehearsal, 2026-11-30; the same
 * with a sleep before the program's exec); opened afresh it writes the same file.
 * Usage: pipetree OUT STEPS [STEP_MILLIS]; no pause once the file $SCENARIO_HURRY names exists
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORDS ((4u << 20) / 8)

static void child(int out, int steps, long millis) {
    uint64_t *heap = malloc(WORDS * 8);
    for (size_t i = 0; i < WORDS; i++) {
        heap[i] = i * 2654435761u;
    }
    for (int step = 0; step < steps; step++) {
        uint64_t sum = 0;
        for (size_t i = 0; i < WORDS; i++) {
            heap[i] = heap[i] * 6364136223846793005ull + (uint64_t)step;
            sum ^= heap[i] + i;
        }
        if (write(out, &sum, sizeof sum) != sizeof sum) {
            _exit(1);
        }
        const char *hurry = getenv("SCENARIO_HURRY"); /* once that file exists: no pause, the same output */
        if (hurry == NULL || access(hurry, F_OK) != 0) {
            struct timespec ts = {millis / 1000, (millis % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    _exit(0);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: pipetree OUT STEPS [STEP_MILLIS]\n");
        return 2;
    }
    int steps = atoi(argv[2]);
    long millis = argc > 3 ? atol(argv[3]) : 50;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644); /* afresh: see the note above */
    int p[2];
    if (fd < 0 || pipe(p) != 0) {
        perror("pipetree");
        return 1;
    }
    pid_t c = fork();
    if (c == 0) {
        close(p[0]);
        child(p[1], steps, millis);
    }
    close(p[1]);
    uint64_t v, sum = 0;
    char line[80];
    for (int step = 0; read(p[0], &v, sizeof v) == sizeof v; step++) {
        sum = sum * 31 + v;
        int n = snprintf(line, sizeof line, "step %d %016llx\n", step, (unsigned long long)sum);
        if (write(fd, line, n) != n) {
            return 1;
        }
        printf("step %d\n", step);
        fflush(stdout);
    }
    int status = 0;
    waitpid(c, &status, 0);
    int n = snprintf(line, sizeof line, "done %016llx child %d\n", (unsigned long long)sum,
                     WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    write(fd, line, n);
    return 0;
}

/*
 * A signal-mode rank for the cluster tests, the C twin of LcgRank's bash script: steps an LCG
 * from rank+1, 25 ms a step; on SIGUSR2 it saves "x step" into FERRY_CKPT_DIR/<REQUEST>/state and
 * then marks DONE there; it resumes from FERRY_RESTART_DIR/state on a restart and writes its result
 * to RESULTS/rank-R (argument 1). STEPS is set at compile time (-DSTEPS=n). The signal only sets a
 * flag: the state is saved between steps, as the bash trap runs between commands. Once RESULTS/hurry
 * exists the steps run without their pause: a test that saw what it waited for lets the job end, its
 * result the same (it depends on the steps, not on their pace).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef STEPS
#error "build with -DSTEPS=n"
#endif

static volatile sig_atomic_t requested;

static void on_usr2(int sig) {
    (void) sig;
    requested = 1;
}

/* Writes text to path whole: into a temporary name renamed over it, so a reader never sees it empty or half-written
   (a test read this rank's pid file between its creation and its write, and parsed ""). */
static int write_file(const char *path, const char *text) {
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        return -1; /* a cut name would be renamed over a file that is not path's */
    }
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        return -1;
    }
    int ok = fputs(text, f) >= 0;
    ok = fclose(f) == 0 && ok;
    return ok && rename(tmp, path) == 0 ? 0 : -1;
}

/* Saves the state into the generation the agent asked for, as the bash trap does. */
static void checkpoint(long long x, long long step) {
    const char *dir = getenv("FERRY_CKPT_DIR");
    char path[4096], g[64] = "", text[64];
    if (dir == NULL) {
        return;
    }
    snprintf(path, sizeof path, "%s/REQUEST", dir);
    FILE *r = fopen(path, "r");
    if (r == NULL || fgets(g, sizeof g, r) == NULL) {
        if (r != NULL) {
            fclose(r);
        }
        fprintf(stderr, "lcg_rank: no checkpoint request in %s\n", path);
        return;
    }
    fclose(r);
    g[strcspn(g, "\r\n")] = 0;
    snprintf(text, sizeof text, "%lld %lld\n", x, step);
    snprintf(path, sizeof path, "%s/%s/state", dir, g);
    if (write_file(path, text) != 0) {
        fprintf(stderr, "lcg_rank: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    snprintf(path, sizeof path, "%s/%s/DONE", dir, g);
    if (write_file(path, "") != 0) {
        fprintf(stderr, "lcg_rank: cannot write %s: %s\n", path, strerror(errno));
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s RESULTS\n", argv[0]);
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR2, &sa, NULL);

    const char *rank = getenv("FERRY_RANK");
    long long x = (rank != NULL ? atoll(rank) : 0) + 1, step = 0;
    const char *restart = getenv("FERRY_RESTART_DIR");
    char path[4096], text[64], hurry[4096];
    snprintf(hurry, sizeof hurry, "%s/hurry", argv[1]);
    if (restart != NULL && *restart != 0) {
        snprintf(path, sizeof path, "%s/state", restart);
        FILE *s = fopen(path, "r");
        if (s == NULL || fscanf(s, "%lld %lld", &x, &step) != 2) {
            fprintf(stderr, "lcg_rank: cannot read %s\n", path);
            return 1;
        }
        fclose(s);
    }
    snprintf(path, sizeof path, "%s/pid-%s", argv[1], rank != NULL ? rank : "0");
    snprintf(text, sizeof text, "%ld\n", (long) getpid());
    if (write_file(path, text) != 0) {
        fprintf(stderr, "lcg_rank: cannot write %s\n", path);
        return 1;
    }
    while (step < STEPS) {
        x = (x * 1103515245LL + 12345) % 2147483648LL;
        step++;
        struct timespec pause = {0, 25 * 1000 * 1000};
        while (access(hurry, F_OK) != 0 && nanosleep(&pause, &pause) != 0 && errno == EINTR) {
            if (requested) {
                break; /* the pause ends here and the state is saved */
            }
        }
        if (requested) {
            requested = 0;
            checkpoint(x, step);
        }
    }
    if (requested) {
        requested = 0;
        checkpoint(x, step);
    }
    snprintf(path, sizeof path, "%s/rank-%s", argv[1], rank != NULL ? rank : "0");
    snprintf(text, sizeof text, "%lld\n", x);
    return write_file(path, text) == 0 ? 0 : 1;
}

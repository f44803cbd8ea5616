/*
 * A real MPI rank for Ferry's tests: STEPS steps of a linear congruential generator whose
 * every step adds the sum over all ranks (MPI_Allreduce), so one rank resumed at the wrong
 * step changes every rank's result. Checkpoints through Ferry's cooperative protocol in
 * socket mode (docs/protocol.md): HELLO on FERRY_SOCKET; at each step the ranks agree
 * (MPI_Allreduce of "was I asked?") to save their state at the same step, so the snapshot
 * is consistent across nodes. Usage: lcg_allreduce RESULTS_DIR STEPS. 20 ms a step, none once
 * RESULTS_DIR/hurry exists (a test that saw what it waited for lets the job end; the result is the same).
 */
#include <mpi.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void fail(const char *what) {
    perror(what);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

int main(int argc, char **argv) {
    /* HELLO first, before anything slow (MPI_Init across hosts takes seconds): until a rank
     * says HELLO the agent takes it for a signal-mode rank, and SIGUSR2 would end it. */
    const char *ferry_rank = getenv("FERRY_RANK"), *sock = getenv("FERRY_SOCKET");
    if (!ferry_rank || !sock) {
        fprintf(stderr, "FERRY_RANK=%s FERRY_SOCKET=%s: not started by ferry rank?\n", ferry_rank ? ferry_rank : "-",
                sock ? sock : "-");
        return 2;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    strncpy(addr.sun_path, sock, sizeof addr.sun_path - 1);
    if (fd < 0 || connect(fd, (struct sockaddr *) &addr, sizeof addr) != 0) {
        perror("connect to the ferry agent");
        return 3;
    }
    dprintf(fd, "HELLO %s\n", ferry_rank);

    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || atoi(ferry_rank) != rank) {
        fprintf(stderr, "usage: %s RESULTS_DIR STEPS (and FERRY_RANK %s must be MPI's rank %d)\n", argv[0], ferry_rank, rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *results = argv[1];
    long steps = atol(argv[2]);
    FILE *agent = fdopen(dup(fd), "r");

    long long x = rank + 1;
    long step = 0;
    char path[4200], hurry[4200];
    snprintf(hurry, sizeof hurry, "%s/hurry", results);
    const char *restart = getenv("FERRY_RESTART_DIR");
    if (restart && *restart) {
        snprintf(path, sizeof path, "%s/state", restart);
        FILE *f = fopen(path, "r");
        if (!f || fscanf(f, "%lld %ld", &x, &step) != 2) fail("read the restart state");
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/pid-%d", results, rank);
    FILE *p = fopen(path, "w");
    if (!p) fail("write the pid file");
    fprintf(p, "%d\n", (int) getpid());
    fclose(p);

    while (step < steps) {
        struct pollfd pf = {fd, POLLIN, 0};
        int asked = poll(&pf, 1, 0) > 0, any = 0;
        MPI_Allreduce(&asked, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (any) { /* every rank saves the same step: wait for our own agent's request */
            char line[4200], dir[4096];
            long long g;
            if (!fgets(line, sizeof line, agent) || sscanf(line, "CHECKPOINT %lld %4095s", &g, dir) != 2) {
                fprintf(stderr, "rank %d: the agent closed the connection or sent '%s'\n", rank, line);
                MPI_Abort(MPI_COMM_WORLD, 4);
            }
            snprintf(path, sizeof path, "%s/state", dir);
            FILE *f = fopen(path, "w");
            if (!f) fail("write the checkpoint");
            fprintf(f, "%lld %ld\n", x, step);
            fflush(f);
            fsync(fileno(f));
            fclose(f);
            dprintf(fd, "DONE %lld\n", g);
        }
        long long mine = x % 1000, sum = 0;
        MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        x = (x * 1103515245LL + 12345LL + sum) % 2147483648LL;
        step++;
        if (access(hurry, F_OK) != 0) { /* RESULTS/hurry: the test saw what it waited for */
            usleep(20000);
        }
    }
    snprintf(path, sizeof path, "%s/rank-%d", results, rank);
    FILE *r = fopen(path, "w");
    if (!r) fail("write the result");
    fprintf(r, "%lld\n", x);
    fclose(r);
    MPI_Finalize();
    return 0;
}

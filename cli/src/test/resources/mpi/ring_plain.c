/*
 * An MPI program that knows nothing of Ferry, for transparent checkpoints of a whole mpirun:
 * STEPS steps of a ring (MPI_Sendrecv to the next rank, from the previous), each rank mixing
 * what it got into its value; rank 0 prints "step N" after each step; at the end every rank
 * writes its value to RESULTS_DIR/rank-R. A message lost or repeated by a restore changes the
 * results. Usage: ring_plain RESULTS_DIR STEPS STEP_MILLIS
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4) {
        fprintf(stderr, "usage: %s RESULTS_DIR STEPS STEP_MILLIS\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long steps = atol(argv[2]), millis = atol(argv[3]);
    long long value = rank + 1;
    for (long step = 0; step < steps; step++) {
        long long got;
        MPI_Sendrecv(&value, 1, MPI_LONG_LONG, (rank + 1) % size, 0, &got, 1, MPI_LONG_LONG, (rank + size - 1) % size, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        value = (value * 31 + got + step) % 1000000007LL;
        if (rank == 0) {
            printf("step %ld\n", step);
            fflush(stdout);
        }
        struct timespec ts = {millis / 1000, (millis % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/rank-%d", argv[1], rank);
    FILE *f = fopen(path, "w");
    if (f == NULL || fprintf(f, "%lld\n", value) < 0 || fclose(f) != 0) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    return 0;
}

package io.ferry.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A signal-mode rank for the cluster tests: bash stepping an LCG from rank+1, its state saved on
 * SIGUSR2, resumed from FERRY_RESTART_DIR on a restart, its result written to RESULTS/rank-R; and
 * the result of an uninterrupted run, to compare with.
 */
final class LcgRank {
    private LcgRank() {}

    /** Writes the script into {@code dir}; its one argument is the results directory. */
    static Path script(Path dir, int steps) throws IOException {
        Path script = dir.resolve("rank.sh");
        Files.writeString(script, String.join("\n",
                "#!/usr/bin/env bash",
                "trap 'g=$(cat \"$FERRY_CKPT_DIR/REQUEST\"); echo \"$x $step\" > \"$FERRY_CKPT_DIR/$g/state\"; : >"
                        + " \"$FERRY_CKPT_DIR/$g/DONE\"' USR2",
                "results=$1; x=$((FERRY_RANK + 1)); step=0",
                "if [ -n \"$FERRY_RESTART_DIR\" ]; then read -r x step < \"$FERRY_RESTART_DIR/state\"; fi",
                "echo $$ > \"$results/pid-$FERRY_RANK\"",
                "while (( step < " + steps + " )); do",
                "  (( x = (x * 1103515245 + 12345) % 2147483648, step++ ))",
                "  sleep 0.02",
                "done",
                "echo \"$x\" > \"$results/rank-$FERRY_RANK\"", ""));
        script.toFile().setExecutable(true);
        return script;
    }

    /**
     * The MPI version ({@code lcg_allreduce.c}, MPI_Allreduce every step; arguments RESULTS STEPS),
     * built with mpicc into {@code dir}; an {@link IOException} when mpicc cannot be run.
     */
    static Path mpiProgram(Path dir) throws IOException, InterruptedException {
        Path src = dir.resolve("lcg_allreduce.c");
        try (var in = LcgRank.class.getResourceAsStream("/mpi/lcg_allreduce.c")) {
            Files.copy(in, src);
        }
        Path exe = dir.resolve("lcg_allreduce");
        Process cc = new ProcessBuilder("mpicc", "-O2", "-o", exe.toString(), src.toString()).redirectErrorStream(true)
                .start();
        String out = new String(cc.getInputStream().readAllBytes());
        if (cc.waitFor() != 0) {
            throw new AssertionError("mpicc failed: " + out);
        }
        return exe;
    }

    static long uninterrupted(int rank, int steps) {
        long x = rank + 1;
        for (int i = 0; i < steps; i++) {
            x = (x * 1103515245L + 12345) % 2147483648L;
        }
        return x;
    }
}

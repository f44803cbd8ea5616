package io.ferry.cli;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A signal-mode rank for the cluster tests, stepping an LCG from rank+1, its state saved on SIGUSR2, resumed
 * from FERRY_RESTART_DIR on a restart, its result written to RESULTS/rank-R; and the result of an
 * uninterrupted run, to compare with. The rank is {@code lcg_rank.c}, built with gcc; where gcc cannot be run,
 * the same rank in bash. The C rank costs no process a step: the bash one forked a {@code sleep} every 20 ms,
 * about 3,200 processes and 80 CPU s of the suite's run on a 2-core machine. Once RESULTS/hurry exists
 * ({@link #hurry}) the steps run without their pause.
 */
final class LcgRank {
    private LcgRank() {}

    /** Builds the rank into {@code dir} (or writes the bash one there); its one argument is the results directory. */
    static Path script(Path dir, int steps) throws IOException {
        try {
            return build(dir, "/lcg/lcg_rank.c", "gcc", "-O1", "-DSTEPS=" + steps);
        } catch (IOException noCompiler) {
            return bashScript(dir, steps);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("building the rank");
        }
    }

    /** The same rank in bash, 20 ms a step: its trap saves the state between commands. */
    private static Path bashScript(Path dir, int steps) throws IOException {
        Path script = dir.resolve("rank.sh");
        Files.writeString(script, String.join("\n",
                "#!/usr/bin/env bash",
                "trap 'g=$(cat \"$FERRY_CKPT_DIR/REQUEST\"); echo \"$x $step\" > \"$FERRY_CKPT_DIR/$g/state\"; : >"
                        + " \"$FERRY_CKPT_DIR/$g/DONE\"' USR2",
                "results=$1; x=$((FERRY_RANK + 1)); step=0",
                "if [ -n \"$FERRY_RESTART_DIR\" ]; then read -r x step < \"$FERRY_RESTART_DIR/state\"; fi",
                "pid=\"$results/pid-$FERRY_RANK\"; echo $$ > \"$pid.tmp\" && mv \"$pid.tmp\" \"$pid\"",
                "while (( step < " + steps + " )); do",
                "  (( x = (x * 1103515245 + 12345) % 2147483648, step++ ))",
                "  [ -e \"$results/hurry\" ] || sleep 0.02",
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
        return build(dir, "/mpi/lcg_allreduce.c", "mpicc", "-O2");
    }

    /** Compiles the test resource {@code source} ({@code /dir/NAME.c}) into {@code dir/NAME} with {@code compiler}. */
    private static Path build(Path dir, String source, String... compiler) throws IOException, InterruptedException {
        Path src = dir.resolve(source.substring(source.lastIndexOf('/') + 1));
        try (var in = LcgRank.class.getResourceAsStream(source)) {
            Files.copy(in, src, StandardCopyOption.REPLACE_EXISTING);
        }
        return compile(src, dir, compiler);
    }

    /**
     * Compiles {@code src} ({@code NAME.c}) into {@code dir/NAME} with {@code compiler} and its options; an
     * {@link IOException} when the compiler cannot be run, an {@link AssertionError} with its output when it fails.
     */
    static Path compile(Path src, Path dir, String... compiler) throws IOException, InterruptedException {
        Path exe = dir.resolve(src.getFileName().toString().replaceFirst("\\.c$", ""));
        List<String> cmd = new ArrayList<>(List.of(compiler));
        cmd.addAll(List.of("-o", exe.toString(), src.toString()));
        Process cc = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(cc.getInputStream().readAllBytes());
        if (cc.waitFor() != 0) {
            throw new AssertionError(compiler[0] + " " + src + " failed: " + out);
        }
        return exe;
    }

    /**
     * Lets the ranks writing into {@code results} run their remaining steps without a pause, so the job ends
     * soon: for a test that has seen what it waited for (the scenario programs too, started with
     * {@link ScenarioPrograms#hurryAssignment} for the directory). A job runs long enough for its events on a busy
     * machine, and no longer than that on any machine; the result is the same (the steps decide it).
     */
    static void hurry(Path results) throws IOException {
        Files.writeString(hurryFile(results), "");
    }

    /** The file {@link #hurry} writes in {@code dir}, which the ranks look for. */
    static Path hurryFile(Path dir) {
        return dir.resolve("hurry");
    }

    static long uninterrupted(int rank, int steps) {
        long x = rank + 1;
        for (int i = 0; i < steps; i++) {
            x = (x * 1103515245L + 12345) % 2147483648L;
        }
        return x;
    }
}

package io.ferry.cli;

import io.ferry.agent.Quiesce;
import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.model.Durations;
import io.ferry.staging.internal.FileTrees;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code ferry demo}: a real job of 4 ranks under Ferry on the embedded default. Ranks 0-2
 * are a Java heat-diffusion simulation (socket mode); rank 3 is a bash script (signal mode),
 * to show the protocol is language-neutral. After three established snapshots the demo kills
 * rank 1 with SIGKILL; the job rolls back from the node-local cache and finishes; the demo
 * compares every rank's final result with an uninterrupted run's and prints the job's table.
 *
 * <p>A rank that has done its steps waits at its end, still answering checkpoints, until the demo
 * releases it: once a snapshot was established after the recovery (or after {@link #HOLD_LIMIT}).
 * On a slow or loaded machine the ranks' steps could otherwise all be done before three snapshots
 * are, and the demo would have nothing left to kill. The wait changes no result: the work of a rank
 * is its step count, and the uninterrupted reference run does not wait.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Run a 4-rank job with checkpoints, kill a rank, recover, and check the result.")
final class DemoCommand implements Callable<Integer> {
    private static final int RANKS = 4;
    /** How long the demo holds finished ranks at most, whatever happened. */
    private static final Duration HOLD_LIMIT = Duration.ofMinutes(3);

    @Option(names = "--dir", paramLabel = "DIR", description = "Working directory (default: ./ferry-demo, recreated).")
    Path dir = Path.of("ferry-demo");
    @Option(names = "--steps", defaultValue = "500", paramLabel = "N",
            description = "Simulation steps per rank (20 ms each).")
    int steps;
    @Option(names = "--interval", defaultValue = "2s", paramLabel = "DURATION")
    String interval;
    @Option(names = "--storage-only",
            description = "Only the storage pipeline: push, commit, restore and scrub images.")
    boolean storageOnly;
    @Option(names = "--image-size", paramLabel = "SIZE", defaultValue = "48MiB",
            description = "With --storage-only: image size per rank.")
    String imageSize;

    @Override
    public Integer call() throws Exception {
        Path work = dir.toAbsolutePath().normalize();
        if (storageOnly) {
            return new StorageDemo(work, RANKS, 3, imageSize).run();
        }
        prepare(work);
        Path script = writeRankScript(work);
        System.out.println("Ferry demo: 4 ranks (3 Java in socket mode, 1 bash in signal mode), " + steps
                + " steps, checkpoint every " + interval + ", automatic recovery; working in " + work);
        System.out.println("reference: running the same ranks once without Ferry, uninterrupted...");
        Map<Integer, String> reference = referenceRun(script, work.resolve("reference"));

        Path results = work.resolve("results");
        Files.createDirectories(results);
        Path release = work.resolve("release");
        FerryHome home = new FerryHome(work.resolve("home"));
        JobRunner.Spec spec = new JobRunner.Spec("demo", RANKS, Durations.parse(interval), true,
                home.store().toString(), home, KafkaAccess.EMBEDDED, HttpOptions.at(HttpOptions.DEFAULT), null, null,
                new JobRunner.Program(List.of(script.toString(), results.toString(), release.toString()),
                        Quiesce.app(Duration.ofSeconds(30), "USR2"), Map.of()));
        boolean ok;
        JobView view;
        try (JobRunner runner = new JobRunner(spec)) {
            runner.start(System.out);
            killAndRelease(runner, release);
            ok = runner.awaitFinish();
            runner.settle(Duration.ofSeconds(30));
            view = runner.view().orElseThrow();
        }
        boolean same = true;
        for (int r = 0; r < RANKS; r++) {
            String got = read(results.resolve("rank-" + r));
            boolean eq = got.equals(reference.get(r));
            same &= eq;
            System.out.printf("rank %d result %s, uninterrupted run %s: %s%n", r, got, reference.get(r),
                    eq ? "equal" : "DIFFERENT");
        }
        ListCommand.print(view, System.out);
        boolean recovered = view.recoveries() >= 1;
        boolean pass = ok && same && recovered;
        System.out.println(pass
                ? "demo OK: the job survived a SIGKILL and its final result equals an uninterrupted run's"
                : "demo FAILED: " + (!ok ? "the job failed; " : "") + (!same ? "results differ; " : "")
                + (!recovered ? "no recovery happened (the job finished before three snapshots)" : ""));
        return pass ? 0 : 1;
    }

    /**
     * Kills rank 1 once three snapshots are established, then releases the ranks waiting at their end once a
     * snapshot newer than any asked before the kill is established, or when the job has ended, or at the limit.
     */
    private static void killAndRelease(JobRunner runner, Path release) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + HOLD_LIMIT.toNanos();
        long askedBeforeKill = -1;
        while (System.nanoTime() < deadline) {
            long after = askedBeforeKill;
            Progress p = runner.read(v -> Progress.of(v, after)).orElse(Progress.NONE);
            if (p.finished()) {
                break;
            }
            if (askedBeforeKill < 0 && p.established() >= 3) {
                askedBeforeKill = p.newestAsked();
                System.out.println("demo: " + p.established() + " snapshots established; killing rank 1 with SIGKILL");
                runner.agent().orElseThrow().ranks().get(1).process().destroyForcibly();
            } else if (askedBeforeKill >= 0 && p.recovered() && p.establishedAfter() >= 1) {
                System.out.println("demo: a snapshot was established after the recovery; the ranks may finish");
                break;
            }
            Thread.sleep(50);
        }
        Files.createFile(release);
    }

    /**
     * What the demo's loop needs of the job, read under the fold's lock: whether it ended, its established
     * snapshots, the newest generation asked, whether it recovered, and the snapshots established after one.
     */
    private record Progress(boolean finished, int established, long newestAsked, boolean recovered,
                            int establishedAfter) {
        static final Progress NONE = new Progress(false, 0, -1, false, 0);

        static Progress of(JobView v, long after) {
            return new Progress(v.finished(), established(v, -1),
                    v.generations().stream().mapToLong(GenerationView::generation).max().orElse(-1),
                    v.recoveries() >= 1, established(v, after));
        }

        /** Established generations numbered above {@code after}. */
        private static int established(JobView v, long after) {
            return (int) v.generations().stream()
                    .filter(g -> g.state() == GenerationView.State.ESTABLISHED && g.generation() > after).count();
        }
    }

    private Path writeRankScript(Path work) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path script = work.resolve("rank.sh");
        Files.writeString(script, String.join("\n",
                "#!/usr/bin/env bash",
                "# Demo rank: ranks 0-2 run the Java simulation (socket mode), rank 3 this bash loop (signal mode).",
                "results=$1 release=${2:-}",
                "if [ \"$FERRY_RANK\" != 3 ]; then",
                "  exec '" + java + "' -Xmx128m -cp '" + System.getProperty("java.class.path")
                        + "' io.ferry.cli.demo.HeatRank " + steps + " \"$results\" ${release:+\"$release\"}",
                "fi",
                "x=1; step=0",
                "if [ -n \"$FERRY_RESTART_DIR\" ]; then read -r x step < \"$FERRY_RESTART_DIR/state\"; fi",
                "trap 'g=$(cat \"$FERRY_CKPT_DIR/REQUEST\"); echo \"$x $step\" > \"$FERRY_CKPT_DIR/$g/state\"; : >"
                        + " \"$FERRY_CKPT_DIR/$g/DONE\"' USR2",
                "pace=${FERRY_PACE_MS:-20}",
                "while (( step < " + steps + " )); do",
                "  (( x = (x * 1103515245 + 12345) % 2147483648, step++ ))",
                "  if (( pace > 0 )); then sleep 0.02; fi",
                "done",
                "# Done: wait, still answering checkpoints, until the demo releases the ranks.",
                "while [ -n \"$release\" ] && [ ! -e \"$release\" ]; do sleep 0.05; done",
                "echo \"$x\" > \"$results/rank-3\"", ""));
        script.toFile().setExecutable(true);
        return script;
    }

    private static Map<Integer, String> referenceRun(Path script, Path out) throws IOException, InterruptedException {
        Files.createDirectories(out);
        Process[] ps = new Process[RANKS];
        for (int r = 0; r < RANKS; r++) {
            ProcessBuilder pb = new ProcessBuilder(script.toString(), out.toString()).inheritIO();
            pb.environment().put("FERRY_RANK", Integer.toString(r));
            pb.environment().put("FERRY_PACE_MS", "0");
            pb.environment().remove("FERRY_SOCKET");
            ps[r] = pb.start();
        }
        Map<Integer, String> results = new HashMap<>();
        for (int r = 0; r < RANKS; r++) {
            if (!ps[r].waitFor(120, TimeUnit.SECONDS) || ps[r].exitValue() != 0) {
                throw new IOException("the reference run of rank " + r + " failed");
            }
            results.put(r, read(out.resolve("rank-" + r)));
        }
        return results;
    }

    private static String read(Path p) throws IOException {
        return Files.exists(p) ? Files.readString(p).trim() : "(none)";
    }

    /** Recreates the working directory, refusing to delete one that an earlier demo did not make. */
    static void prepare(Path work) throws IOException {
        Path marker = work.resolve(".ferry-demo");
        if (Files.isDirectory(work) && !Files.exists(marker)) {
            try (var s = Files.list(work)) {
                if (s.findAny().isPresent()) {
                    throw new IllegalArgumentException("refusing to use " + work
                            + ": it is not empty and was not made by ferry demo; pass --dir with a new directory");
                }
            }
        }
        FileTrees.delete(work);
        Files.createDirectories(work);
        Files.createFile(marker);
    }
}

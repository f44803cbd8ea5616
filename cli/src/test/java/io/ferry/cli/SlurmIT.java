package io.ferry.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Slurm batch script users copy, docs/slurm/ferry-job.sbatch, submitted with {@code sbatch} to a
 * real Slurm (munge, slurmctld, one slurmd per test host: {@link SlurmBed}): it starts one
 * {@code ferry agent} per node with {@code srun}, then {@code ferry run --launch 'srun ...'}, whose
 * ranks go through {@code ferry rank} (SLURM_PROCID / PMIX_RANK). The ranks are the MPI program of
 * MpiClusterIT ({@code srun --mpi=pmix}, Open MPI), or, without mpicc or Slurm's pmix plugin, a bash
 * rank in signal mode. (a) A job runs to its end, checkpointing every 2 s: Slurm says COMPLETED and
 * every rank's result is an uninterrupted run's. (b) A second job is cancelled ({@code scancel}) once
 * a generation is established; the same script submitted again resumes it from the newest
 * established generation, every rank restored; (c) then Slurm's SIGTERM before the time limit
 * ({@code scancel --signal=TERM --batch}, what {@code #SBATCH --signal=B:TERM@180} sends), sent while the
 * coordinator has been SIGKILLed and is restarting, halts it with a final checkpoint once the coordinator
 * is back, and it ends COMPLETED; a third submission resumes from that checkpoint and ends with an
 * uninterrupted run's results. Three slurmd nodes in network namespaces; on the loopback bed (no namespaces) one node.
 */
class SlurmIT {
    private static final int RANKS = 6;
    private static final int STEPS = 600;
    /**
     * The resumed job's steps: enough that it still runs while (c) kills and restarts the coordinator
     * and halts it (with {@link #STEPS} it ended on its own first, and nothing was left to halt), until
     * the halt's final checkpoint: it is asked as late as the job's forecast allows, {@link #HALT_GRACE}
     * after the SIGTERM less about 7 s. With 1,500 steps (about 40 s) the ranks ended first whenever no
     * checkpoint the coordinator asked just after the halt happened to count as the final one (a
     * generation in flight across the kill held it off).
     */
    private static final int STEPS_B = 3500;
    /** The halt's grace in (c): the coordinator's restart (about 20 s here) and the final checkpoint fit in it. */
    private static final String HALT_GRACE = "45s";

    @TempDir
    Path tmp;
    private final List<Process> started = new ArrayList<>();
    private KafkaLogin login;

    @Test
    void theBatchScriptRunsAJobUnderSlurmAndASecondSubmissionResumesACancelledOne() throws Exception {
        long t0 = System.nanoTime();
        Path root = Path.of("").toAbsolutePath().getParent(); // Failsafe runs in cli/
        Path script = root.resolve("docs/slurm/ferry-job.sbatch");
        assertTrue(Files.isExecutable(root.resolve("bin/ferry")) && Files.exists(script), root.toString());
        try (TestBed bed = TestBed.create(3);
             SlurmBed slurm = SlurmBed.start(tmp.resolve("slurm"), bed, bed.namespaces() ? 2 : RANKS)) {
            int nodes = slurm.nodes().size();
            boolean mpi = mpiUnderSrun(slurm);
            // the bash rank ignores its STEPS argument
            Path program = mpi ? LcgRank.mpiProgram(tmp) : LcgRank.script(tmp, STEPS);
            System.out.println("SlurmIT: " + nodes + " slurmd node(s) " + slurm.nodes() + (bed.namespaces()
                    ? " in network namespaces" : " on this host (" + bed.fallbackReason() + ")") + ", ranks: "
                    + (mpi ? "MPI (srun --mpi=pmix)" : "bash, signal mode (no mpicc or no pmix in srun)"));
            // bin/ferry builds the distribution when it is missing or stale: once here, not on every node at once
            assertEquals(0, new ProcessBuilder(root.resolve("bin/ferry").toString(), "--version").inheritIO()
                    .start().waitFor());

            String kafka = bed.serviceAddress() + ":" + TestBed.freePort();
            login = KafkaLogin.create(tmp.resolve("site")); // beyond loopback the broker requires SASL
            ProcessBuilder service = FerryProcess.builder(List.of("-Xmx512m"), "coordinator", "--home",
                    tmp.resolve("coord").toString(), "--listen", kafka, "--http", "off");
            Lines coordinator = start(service);
            Process coordinatorProcess = started.get(started.size() - 1);
            coordinator.await("the coordinator", l -> l.startsWith("ferry coordinator: serving jobs"));

            String net = bed.namespaces() ? bed.serviceAddress().replaceFirst("\\.1$", ".0/24") : "127.0.0.1/8";
            Map<String, String> env = new HashMap<>(Map.of(
                    "FERRY", root.toString(),
                    "FERRY_KAFKA", kafka,
                    "FERRY_STORE", tmp.resolve("store").toString(),
                    "FERRY_CACHE", tmp.resolve("cache").toString(),
                    "FERRY_INTERVAL", "2s",
                    "FERRY_HALT_GRACE", "10s",
                    "FERRY_JAVA_OPTS", "-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC", // as every other child (FerryProcess)
                    "FERRY_RUNTIME_DIR", Files.createDirectories(tmp.resolve("run")).toString()));
            // srun hands it to the agents and ferry run
            env.put(Configuration.FILE_VARIABLE, login.config().toString());
            if (mpi) {
                env.putAll(Map.of("FERRY_SRUN_ARGS", "--mpi=pmix", "OMPI_MCA_btl", "tcp,self",
                        "OMPI_MCA_btl_tcp_if_include", net, "OMPI_MCA_oob_tcp_if_include", net,
                        "OMPI_MCA_mpi_yield_when_idle", "1"));
            }
            List<String> options = List.of("--nodes=" + nodes, "--ntasks=" + RANKS);

            // (a) A job from start to end.
            Path results = Files.createDirectories(tmp.resolve("results-a"));
            env.put("FERRY_JOB", "slurm-a");
            long ta = System.nanoTime();
            String a = slurm.sbatch(withOutput(options, "a"), script, List.of(program.toString(), results.toString(),
                    Integer.toString(STEPS)), env);
            Lines outA = tail("a");
            outA.await("a snapshot", l -> l.matches(".*generation \\d+ established.*"));
            LcgRank.hurry(results); // the rest of the job only waits for its end
            Map<String, String> endA = slurm.awaitEnd(a, 150);
            assertEquals("COMPLETED", endA.get("JobState"), endA + "\n" + String.join("\n", outA.lines));
            assertEquals("0:0", endA.get("ExitCode"), endA.toString());
            outA.await("the job's end", l -> l.contains("job finished: the launcher exited 0"));
            assertTrue(outA.lines.stream().anyMatch(l -> l.matches(".*generation \\d+ established.*")), "no snapshot");
            Set<String> joined = nodesJoined(outA);
            assertEquals(new TreeSet<>(slurm.nodes()), joined, "nodes the ranks joined");
            assertResults(results, mpi, STEPS);
            System.out.printf("SlurmIT: (a) Slurm job %s COMPLETED in %.0f s on %s, %d generations established%n", a,
                    secondsSince(ta), endA.get("NodeList"),
                    outA.lines.stream().filter(l -> l.contains(" established")).count());

            // (b) A job cancelled once a snapshot is established, then submitted again: it resumes.
            Path results2 = Files.createDirectories(tmp.resolve("results-b"));
            env.put("FERRY_JOB", "slurm-b");
            long tb = System.nanoTime();
            Path programB = mpi ? program : LcgRank.script(Files.createDirectories(tmp.resolve("b")), STEPS_B);
            List<String> args = List.of(programB.toString(), results2.toString(), Integer.toString(STEPS_B));
            String b1 = slurm.sbatch(withOutput(options, "b1"), script, args, env);
            Lines outB1 = tail("b1");
            String est = outB1.await("generation 1 established", l -> l.contains("generation 1 established"));
            slurm.scancel(b1);
            Map<String, String> endB1 = slurm.awaitEnd(b1, 60);
            assertEquals("CANCELLED", endB1.get("JobState"), endB1.toString());
            long established = outB1.lines.stream().filter(l -> l.matches(".*generation \\d+ established.*"))
                    .mapToLong(Lines::generationOf).max().orElseThrow();
            try (Stream<Path> done = Files.list(results2)) {
                assertTrue(done.noneMatch(p -> p.getFileName().toString().startsWith("rank-")),
                        "finished before the cancel");
            }
            System.out.printf("SlurmIT: (b) Slurm job %s CANCELLED after %.0f s (%s; newest established seen: %d)%n",
                    b1, secondsSince(tb), est.trim(), established);

            // (c) halts while the coordinator restarts: its final checkpoint waits for it
            env.put("FERRY_HALT_GRACE", HALT_GRACE);
            String b2 = slurm.sbatch(withOutput(options, "b2"), script, args, env);
            Lines outB2 = tail("b2");
            String resume;
            try {
                resume = outB2.await("the resume", l -> l.contains("(resumed by a new ferry run)"));
            } catch (AssertionError notStarted) { // seen once: never started, a slurmd had died of a SIGSEGV
                throw new AssertionError(notStarted.getMessage() + "\nSlurm job " + b2 + ": " + slurm.job(b2)
                        + "\n" + slurm.logs(), notStarted);
            }
            long g = Lines.generationOf(resume);
            assertTrue(g >= established, "resumed from " + g + ", older than " + established + ": " + resume);
            Map<Integer, String> sources = restored(outB2, g);
            for (long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(90); sources.size() < RANKS
                    && System.nanoTime() < until; sources = restored(outB2, g)) {
                Thread.sleep(200); // each node says which ranks it restored once they run
            }
            assertEquals(RANKS, sources.size(), "every rank restored from generation " + g + ": " + sources);

            // (c) The time limit comes while the coordinator (and its broker) is down, killed and restarting: Slurm's
            // SIGTERM to the batch script (#SBATCH --signal=B:TERM@180) still halts the job with a final checkpoint
            // once the coordinator is back, and the job ends COMPLETED; the next submission resumes from that
            // checkpoint.
            outB2.await("a checkpoint after the resume", l -> l.matches(".*generation \\d+ established.*")
                    && Lines.generationOf(l) > g);
            coordinatorProcess.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
            coordinatorProcess.destroyForcibly(); // SIGKILL: no goodbye to its group, no clean broker shutdown
            assertTrue(coordinatorProcess.waitFor(30, TimeUnit.SECONDS), "the killed coordinator is gone");
            slurm.terminateBatch(b2);
            outB2.await("the script passing SIGTERM on", l -> l.contains("ferry-job.sbatch: SIGTERM"));
            start(service).await("the coordinator again", l -> l.startsWith("ferry coordinator: serving jobs"));
            long halted = Lines.generationOf(outB2.await("the halt", l -> l.contains("halted: generation")));
            Map<String, String> endB2 = slurm.awaitEnd(b2, 120);
            assertEquals("COMPLETED", endB2.get("JobState"), endB2 + "\n" + String.join("\n", outB2.lines));
            assertEquals("0:0", endB2.get("ExitCode"), endB2.toString());
            try (Stream<Path> done = Files.list(results2)) {
                assertTrue(done.noneMatch(p -> p.getFileName().toString().startsWith("rank-")),
                        "finished before the halt");
            }
            String b3 = slurm.sbatch(withOutput(options, "b3"), script, args, env);
            Lines outB3 = tail("b3");
            String again = outB3.await("the resume after the halt", l -> l.contains("(resumed by a new ferry run)"));
            assertEquals(halted, Lines.generationOf(again), "resumed from the halt's checkpoint: " + again);
            LcgRank.hurry(results2);
            Map<String, String> endB3 = slurm.awaitEnd(b3, 150);
            assertEquals("COMPLETED", endB3.get("JobState"), endB3 + "\n" + String.join("\n", outB3.lines));
            outB3.await("the job's end", l -> l.contains("job finished: the launcher exited 0"));
            assertResults(results2, mpi, STEPS_B);
            System.out.printf("SlurmIT: (b) Slurm job %s resumed from generation %d (sources by rank %s); (c) SIGTERM"
                    + " during a coordinator restart halted it at generation %d, COMPLETED; job %s resumed from there"
                    + " and COMPLETED; (b, c) took %.0f s%n", b2, g, sources, halted, b3, secondsSince(tb));
        } finally {
            for (Process p : started) {
                p.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
            System.out.printf("SlurmIT: %.0f s in all%n", secondsSince(t0));
        }
    }

    private List<String> withOutput(List<String> options, String name) {
        List<String> o = new ArrayList<>(options);
        o.add("--output=" + tmp.resolve("job-" + name + ".out"));
        o.add("--job-name=ferry-" + name);
        return o;
    }

    /** Every line the batch job writes to its output file, as it comes (tail -F, so before the file exists too). */
    private Lines tail(String name) throws IOException {
        return start(new ProcessBuilder("tail", "-n", "+1", "-F", tmp.resolve("job-" + name + ".out").toString()));
    }

    /** The nodes whose agents the ranks joined ("ranks 0-1 joined node fe-h0"). */
    private static Set<String> nodesJoined(Lines out) {
        Set<String> s = new TreeSet<>();
        for (String l : out.lines) {
            Matcher m = Pattern.compile("joined node (\\S+)").matcher(l);
            if (m.find()) {
                s.add(m.group(1));
            }
        }
        return s;
    }

    /** Rank -> source ("local", "remote") from the "node N restored generation g, sources by rank {...}" lines. */
    private static Map<Integer, String> restored(Lines out, long g) {
        Map<Integer, String> s = new TreeMap<>();
        Pattern p = Pattern.compile("(\\d+)=(\\w+)");
        for (String l : out.lines) {
            if (l.contains("restored generation " + g + ",")) {
                Matcher m = p.matcher(l.substring(l.indexOf('{')));
                while (m.find()) {
                    s.put(Integer.parseInt(m.group(1)), m.group(2));
                }
            }
        }
        return s;
    }

    /** True when srun offers pmix and mpicc is here: the ranks are then a real MPI program. */
    private static boolean mpiUnderSrun(SlurmBed slurm) throws IOException, InterruptedException {
        if (SlurmBed.which("mpicc") == null) {
            return false;
        }
        ProcessBuilder pb = new ProcessBuilder(SlurmBed.which("srun"), "--mpi=list").redirectErrorStream(true);
        pb.environment().putAll(slurm.env());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes());
        return p.waitFor() == 0 && out.contains("pmix");
    }

    /**
     * Each rank's result against an uninterrupted run's: lcg_allreduce's (the sum over ranks in every step), or the
     * bash rank's.
     */
    private static void assertResults(Path results, boolean mpi, int steps) throws IOException {
        long[] x = new long[RANKS];
        for (int r = 0; r < RANKS; r++) {
            x[r] = r + 1;
        }
        for (int s = 0; s < steps; s++) {
            long sum = 0;
            for (long v : x) {
                sum += v % 1000;
            }
            for (int r = 0; r < RANKS; r++) {
                x[r] = (x[r] * 1103515245L + 12345 + (mpi ? sum : 0)) % 2147483648L;
            }
        }
        for (int r = 0; r < RANKS; r++) {
            assertEquals(Long.toString(x[r]), Files.readString(results.resolve("rank-" + r)).trim(), "rank " + r);
        }
    }

    private static double secondsSince(long t) {
        return (System.nanoTime() - t) / 1e9;
    }

    private Lines start(ProcessBuilder pb) throws IOException {
        Process p = login.applyTo(pb).redirectErrorStream(true).start();
        started.add(p);
        return new Lines(p, "p" + started.size());
    }
}

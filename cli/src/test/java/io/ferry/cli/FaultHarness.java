package io.ferry.cli;

import io.ferry.cli.FaultCluster.Daemon;
import io.ferry.staging.Progress;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.staging.VerifyReport;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The crash and fault harness (issue 13). One cluster on loopback, as on a site: a
 * {@code ferry coordinator} with its embedded broker, and two {@code ferry agent}s (n0, n1);
 * for the separate broker's fault, a second one whose coordinator and agents (m0, m1) share a
 * broker alone in its JVM ({@link BrokerProcess}); the clusters are {@link FaultCluster}s.
 * Then {@code -Dferry.faults.runs} (default: one run of each of its kinds of fault, the quick form
 * {@code mvn -B verify} runs; 30 or more for the soak, docs/testing.md) jobs one after another, each a 2-rank
 * {@code ferry run --auto-recover} across both nodes, each with one fault chosen from the run's
 * seed ({@code -Dferry.faults.seed}, default 1; {@code -Dferry.faults.only=RANK_KILLED,...} picks the
 * kinds): a rank, an agent or the coordinator (and the
 * broker inside it) SIGKILLed at a seeded time, or a process halted at a named point of a
 * checkpoint ({@link io.ferry.model.CrashPoint}: images captured, a pack written, a manifest
 * written, before and after the commit marker). A dead agent or coordinator is started again
 * after a seeded pause, with the same home, as a service manager would.
 *
 * <p>After each run: the job finished with the result of an uninterrupted run (no wrong result),
 * within four minutes (no hang); every generation reported established has its commit marker
 * and a manifest for every rank on the store (no snapshot lost); every generation a node
 * restored was established (no snapshot without a commit marker used); and the whole store
 * verifies. The table of what happened is printed at the end, then every problem.
 *
 * <p>The kinds of fault are shared among three test classes, each with its own cluster, so that the
 * suite's test JVMs run them at once: {@link FaultHarnessAgentsIT}, {@link FaultHarnessCoordinatorIT}
 * and {@link FaultHarnessJobIT}; a class none of whose kinds {@code ferry.faults.only} names is skipped.
 */
abstract class FaultHarness {
    private static final int RANKS = 2;
    private static final int STEPS = 200;
    /**
     * Steps of a job whose fault is on the coordinator or the broker: a restarted coordinator serves
     * again after several seconds on a loaded 2-core machine, so a job of {@link #STEPS} often ended
     * before it was back, and the run said nothing of checkpointing after the fault.
     */
    private static final int STEPS_LONG = 1000;
    private static final Pattern ESTABLISHED = Pattern.compile("generation (\\d+) established on");
    private static final Pattern RESTORED = Pattern.compile("node (\\S+) restored generation (\\d+)");
    private static final Pattern ANY_GENERATION = Pattern.compile("generation (\\d+)");

    /** What a run does to the cluster; the crash points are those of {@link io.ferry.model.CrashPoint}. */
    enum Fault {
        RANK_KILLED(null), AGENT_KILLED(null), COORDINATOR_KILLED(null), ONE_NODE_RUN_KILLED(null),
        AGENT_AT_CAPTURE("agent.captured"), AGENT_AT_PACK("agent.pack-written"),
        AGENT_AT_MANIFEST("agent.manifest-written"),
        COORDINATOR_BEFORE_MARKER("coordinator.before-marker"), COORDINATOR_AT_MARKER("coordinator.marker-written"),
        /**
         * CheckpointRequested logged, its capture commands not sent: the restarted coordinator must fail it at its
         * deadline.
         */
        COORDINATOR_AT_REQUEST("coordinator.checkpoint-requested"),
        /**
         * A bit flipped (or the file cut short) in a rank's cached images from the newest established generation on,
         * then the rank killed.
         */
        CACHE_ROT(null),
        /** A bit flipped (or the object cut short) in a pack on the store, then a rank killed. */
        STORE_ROT(null),
        /**
         * The site's separate Kafka broker SIGKILLed and started again (a second cluster whose coordinator uses it).
         */
        BROKER_KILLED(null);

        final String crashPoint;

        Fault(String crashPoint) {
            this.crashPoint = crashPoint;
        }

        boolean onAgent() {
            return this == AGENT_KILLED || name().startsWith("AGENT_AT");
        }

        boolean onCoordinator() {
            return name().startsWith("COORDINATOR");
        }
    }


    @TempDir
    Path tmp;

    /** The kinds of fault this class runs, in the order of its quick form. */
    private final List<Fault> kinds;

    FaultHarness(Fault... kinds) {
        this.kinds = List.of(kinds);
    }

    @Test
    void seededFaultsLoseNoSnapshotAndChangeNoResult() throws Exception {
        String onlyProperty = System.getProperty("ferry.faults.only", "");
        List<Fault> only = onlyProperty.isBlank() ? kinds
                : Arrays.stream(onlyProperty.split(",")).map(String::trim).map(Fault::valueOf)
                .filter(kinds::contains).toList();
        Assumptions.assumeFalse(only.isEmpty(), "ferry.faults.only names none of " + kinds);
        int runs = Integer.getInteger("ferry.faults.runs", only.size()); // every kind once, in order
        long seed = Long.getLong("ferry.faults.seed", 1);
        String name = getClass().getSimpleName();
        String kafka = "127.0.0.1:" + TestBed.freePort();
        FaultCluster embedded = FaultCluster.embedded(tmp, kafka);
        // The site's own Kafka, apart from the coordinator: a broker alone in its JVM, started on first use.
        FaultCluster separate = FaultCluster.separate(tmp, "127.0.0.1:" + TestBed.freePort());
        Map<Fault, FaultTable.Tally> tallies = new EnumMap<>(Fault.class);
        List<String> problems = new ArrayList<>();
        Path script = LcgRank.script(tmp, STEPS);
        Path longScript = LcgRank.script(Files.createDirectories(tmp.resolve("long")), STEPS_LONG);
        try {
            for (int i = 0; i < runs; i++) {
                Random rnd = new Random(seed * 1_000_003 + i);
                Fault fault = only.get((int) ((seed - 1 + i) % only.size()));
                FaultTable.Tally t = tallies.computeIfAbsent(fault, f -> new FaultTable.Tally());
                t.runs++;
                long t0 = System.nanoTime();
                FaultCluster cluster = fault == Fault.BROKER_KILLED ? separate : embedded;
                cluster.startOnce();
                boolean serviceDown = fault.onCoordinator() || fault == Fault.BROKER_KILLED;
                String outcome = run(i, fault, rnd, cluster, serviceDown ? longScript : script,
                        serviceDown ? STEPS_LONG : STEPS, t);
                System.out.printf(Locale.ROOT, "%s run %d (%s, %.0f s): %s%n", name, i, fault,
                        (System.nanoTime() - t0) / 1e9, outcome);
                if (!outcome.equals("ok")) {
                    problems.add("run " + i + " (" + fault + ", seed " + seed + "): " + outcome);
                }
            }
        } finally {
            embedded.stop();
            separate.stop();
        }
        System.out.println(FaultTable.of(tallies));
        assertTrue(problems.isEmpty(), String.join("\n", problems));
    }


    /** One job with one fault; "ok" or what went wrong. */
    private String run(int i, Fault fault, Random rnd, FaultCluster cluster, Path script, int steps, FaultTable.Tally t)
            throws Exception {
        Daemon coordinator = cluster.coordinator();
        List<Daemon> agents = cluster.agents();
        Daemon target = fault == Fault.BROKER_KILLED ? cluster.broker() : fault.onCoordinator() ? coordinator
                : fault.onAgent() ? agents.get(rnd.nextInt(agents.size())) : null;
        if (fault.crashPoint != null) { // armed: it halts the first time it reaches the point
            Files.writeString(target.crashFile(), fault.crashPoint + "@1");
        }
        Path results = Files.createDirectories(tmp.resolve("results-" + i));
        Path store = tmp.resolve("store-" + i);
        String job = "faults-" + i;
        // The one-node job is `ferry run` alone (its own broker, coordinator and agent in one process), as on a
        // workstation or a single node: it is killed whole, with its ranks, and the same command is typed again.
        List<String> where = fault == Fault.ONE_NODE_RUN_KILLED
                ? List.of("--home", tmp.resolve("home-" + i).toString(), "--http", "off")
                : List.of("--kafka", cluster.kafka(), "--nodes", cluster.nodes());
        List<String> args = new ArrayList<>(List.of("run", "--job", job, "--ranks", Integer.toString(RANKS)));
        args.addAll(where);
        // A short capture timeout: a generation whose captures were never sent (COORDINATOR_AT_REQUEST) fails soon.
        args.addAll(List.of("--interval", "1s", "--capture-timeout", "10s", "--auto-recover", "--store",
                store.toString(),
                "--", script.toString(),
                results.toString()));
        // (the one-node run holds a broker too: 256 MiB is too little for it and a push's buffers)
        ProcessBuilder command = FerryProcess.builder(List.of(fault == Fault.ONE_NODE_RUN_KILLED ? "-Xmx768m"
                : "-Xmx256m"), args.toArray(String[]::new)).redirectErrorStream(true);
        Process run = command.start();
        Lines out = new Lines(run, "run " + i);
        List<String> printed = new CopyOnWriteArrayList<>();

        boolean injected = false;
        int linesAtFault = -1; // of out's lines, when the fault happened
        long fireAt = Long.MAX_VALUE;
        boolean rot = fault == Fault.CACHE_ROT || fault == Fault.STORE_ROT;
        int rotRank = rnd.nextInt(RANKS);
        long rotGeneration = -1;
        String rotWhat = null;
        Rot.Damage cacheRot = null;
        int linesAtRot = 0;
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(4);
        Long newestBeforeFault = null; // the newest generation any line named when the fault happened
        boolean hurried = false;
        int lookedAt = 0; // of out's lines after the fault, those already looked at for a newer established generation
        while (run.isAlive() && System.nanoTime() < deadline) {
            if (injected && !hurried && linesAtFault >= 0) {
                // Once a generation asked for after the fault is established, the job has come through it: the rest
                // of its steps need not take 25 ms each (a long job gave a slow restart room, not a test of its own).
                int at = Math.min(linesAtFault, out.lines.size());
                if (newestBeforeFault == null) {
                    List<String> before = new ArrayList<>(printed);
                    before.addAll(List.copyOf(out.lines).subList(0, at));
                    newestBeforeFault = generations(before, ANY_GENERATION, 1).stream().max(Long::compare).orElse(-1L);
                }
                long floor = newestBeforeFault;
                int from = Math.max(at, lookedAt);
                List<String> fresh = out.since(from);
                lookedAt = from + fresh.size();
                if (generations(fresh, ESTABLISHED, 1).stream().anyMatch(g -> g > floor)) {
                    LcgRank.hurry(results);
                    hurried = true;
                }
            }
            if (fault.crashPoint == null && !injected && fireAt == Long.MAX_VALUE && ranksStarted(results)
                    && (!rot || !generations(out.lines, ESTABLISHED, 1).isEmpty())) {
                // rot: once something is established
                fireAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300 + rnd.nextInt(3000));
            }
            if (!injected && System.nanoTime() >= fireAt) {
                injected = true;
                linesAtFault = out.lines.size();
                if (rot) {
                    rotGeneration = generations(out.lines, ESTABLISHED, 1).stream().max(Long::compare).orElseThrow();
                    linesAtRot = out.lines.size();
                    if (fault == Fault.CACHE_ROT) {
                        cacheRot = Rot.inCache(tmp, store, job, rotGeneration, rotRank, rnd);
                        rotWhat = cacheRot == null ? null : cacheRot.what();
                    } else {
                        rotWhat = Rot.inStore(store, rnd);
                    }
                    long pid = Long.parseLong(Files.readString(results.resolve("pid-" + rotRank)).trim());
                    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
                } else if (fault == Fault.RANK_KILLED) {
                    long pid = Long.parseLong(Files.readString(results.resolve("pid-" + rnd.nextInt(RANKS))).trim());
                    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
                } else if (fault == Fault.ONE_NODE_RUN_KILLED) {
                    run.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
                    run.destroyForcibly();
                    run.waitFor();
                    printed.addAll(out.lines);
                    Thread.sleep(rnd.nextInt(2000));
                    run = command.start(); // the same command again: it resumes from the newest established snapshot
                    out = new Lines(run, "run " + i + " again");
                    linesAtFault = 0;
                    lookedAt = 0;
                } else {
                    target.kill();
                }
            }
            if (target != null && !target.process.isAlive()) {
                injected = true;
                linesAtFault = linesAtFault < 0 ? out.lines.size() : linesAtFault;
                Thread.sleep(rnd.nextInt(2000)); // a service manager's restart delay
                target.start();
            }
            Thread.sleep(50);
        }
        if (fault.crashPoint != null) {
            Files.deleteIfExists(target.crashFile()); // not reached: disarmed, so that it does not fire in a later run
        }
        if (injected) {
            t.injected++;
        }
        printed.addAll(out.lines);
        if (!injected) { // a run whose fault never happened proves nothing: it fails, saying so
            run.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
            run.destroyForcibly();
            return "the fault never happened (" + (fault.crashPoint != null ? "crash point " + fault.crashPoint
                    + " not reached" : "not fired") + "): the run proves nothing:\n" + String.join("\n", printed);
        }
        t.recoveries += (int) printed.stream().filter(l -> l.contains("recovering: ")).count();
        if (run.isAlive()) {
            run.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
            run.destroyForcibly();
            t.hangs++;
            return "hang: ferry run did not finish in 4 minutes:\n" + String.join("\n", printed);
        }
        List<String> wrong = new ArrayList<>();
        if (run.exitValue() != 0) {
            wrong.add("ferry run exited with " + run.exitValue());
        }
        for (int r = 0; r < RANKS; r++) {
            Path result = results.resolve("rank-" + r);
            String got = Files.exists(result) ? Files.readString(result).trim() : "(none)";
            if (!got.equals(Long.toString(LcgRank.uninterrupted(r, steps)))) {
                wrong.add("rank " + r + " ended with " + got + ", an uninterrupted run with "
                        + LcgRank.uninterrupted(r, steps));
            }
        }
        if (!wrong.isEmpty()) {
            t.wrong++;
            return String.join("; ", wrong) + ":\n" + String.join("\n", printed);
        }
        Set<Long> established = generations(printed, ESTABLISHED, 1);
        t.established += established.size();
        t.afterFault += generations(out.lines.subList(Math.max(0, linesAtFault), out.lines.size()), ESTABLISHED, 1)
                .size();
        List<String> lost = new ArrayList<>();
        for (long g : established) {
            if (!Files.isRegularFile(store.resolve("ferry/v1/jobs/" + job + "/" + g + "/SNAPSHOT"))) {
                lost.add("generation " + g + " was reported established but has no commit marker");
            }
            for (int r = 0; r < RANKS; r++) {
                if (!Files.isRegularFile(store.resolve("ferry/v1/jobs/" + job + "/" + g + "/" + r + ".manifest"))) {
                    lost.add("generation " + g + " has no manifest of rank " + r);
                }
            }
        }
        for (long g : generations(printed, RESTORED, 2)) {
            // The commit marker is what makes a snapshot established; the line saying so may be lost with a killed run.
            if (!established.contains(g)
                    && !Files.isRegularFile(store.resolve("ferry/v1/jobs/" + job + "/" + g + "/SNAPSHOT"))) {
                lost.add("generation " + g + " was restored but has no commit marker");
            }
        }
        if (cacheRot != null) {
            // The rollback that follows the kill: the damaged rank must come from another source than its own cache.
            t.rotted++;
            List<String> all = List.copyOf(printed);
            String caught = Rot.caught(all.subList(Math.min(linesAtRot, all.size()), all.size()), cacheRot, rotRank);
            System.out.println(getClass().getSimpleName() + " run " + i + ": " + rotWhat + " (rank " + rotRank
                    + ", generation " + rotGeneration + "): " + caught);
            if (caught.startsWith("caught") || caught.startsWith("not exercised")) {
                t.rotCaught += caught.startsWith("caught") ? 1 : 0;
            } else {
                lost.add("damage not caught: " + rotWhat + ": " + caught);
            }
        }
        try (Store s = Stores.open(store.toUri(), Map.of());
             StagingPipeline p = Staging.pipeline(s, StagingConfig.defaults(), Clock.systemUTC())) {
            VerifyReport v = p.verify(Progress.NONE);
            if (fault == Fault.STORE_ROT && rotWhat != null) {
                // Restores came from the caches; the store's own check must find the damaged pack, and only it.
                t.rotted++;
                String pack = rotWhat.substring(rotWhat.lastIndexOf(' ') + 1);
                boolean named = v.problems().stream().anyMatch(x -> (x.key() + " " + x.detail()).contains(pack));
                System.out.println(getClass().getSimpleName() + " run " + i + ": " + rotWhat + ": verify found "
                        + v.problems());
                if (named) {
                    t.rotCaught++;
                } else {
                    lost.add("store verify did not find the damaged pack " + pack + ": " + v.problems());
                }
            } else if (!v.ok()) {
                lost.add("the store does not verify: " + v.problems());
            }
        }
        if (!lost.isEmpty()) {
            t.lost++;
            return String.join("; ", lost) + ":\n" + String.join("\n", printed);
        }
        return "ok";
    }

    private static boolean ranksStarted(Path results) {
        for (int r = 0; r < RANKS; r++) {
            if (!Files.exists(results.resolve("pid-" + r))) {
                return false;
            }
        }
        return true;
    }

    private static Set<Long> generations(List<String> lines, Pattern p, int group) {
        Set<Long> out = new TreeSet<>();
        for (String l : lines) {
            Matcher m = p.matcher(l);
            if (m.find()) {
                out.add(Long.parseLong(m.group(group)));
            }
        }
        return out;
    }
}

package io.ferry.cli;

import io.ferry.staging.internal.FileTrees;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Cluster mode with real processes: a `ferry coordinator` (embedded broker listening on the
 * test bed's bridge), three `ferry agent`s, each on its own test host (a network namespace,
 * or a separate process on loopback where namespaces are refused) with its own cache, and a
 * `ferry run --kafka --nodes` that submits a 6-rank job. A rank is SIGKILLed, then a whole
 * node is lost (its agent and ranks killed, its cache removed); the job finishes with the
 * result of an uninterrupted run.
 */
class ClusterIT {
    private static final int RANKS = 6;
    private static final int STEPS = 700;

    @TempDir
    Path tmp;
    private final List<Process> started = new ArrayList<>();
    private KafkaLogin login;

    @Test
    void aJobAcrossThreeNodesSurvivesARankKillAndALostNode() throws Exception {
        try (TestBed bed = TestBed.create(3)) {
            System.out.println("ClusterIT: " + (bed.namespaces() ? "3 test hosts in network namespaces"
                    : "agents as separate processes on loopback (" + bed.fallbackReason() + ")"));
            String kafka = bed.serviceAddress() + ":" + TestBed.freePort();
            login = KafkaLogin.create(tmp.resolve("site")); // beyond loopback the broker requires SASL
            Lines coordinator = start(FerryProcess.builder(List.of("-Xmx512m"), "coordinator", "--home",
                    tmp.resolve("coord").toString(), "--listen", kafka, "--http", "off", "--heartbeat-timeout", "5s"));
            coordinator.await("the coordinator", l -> l.startsWith("ferry coordinator: serving jobs"));
            List<Lines> agents = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                List<String> cmd = FerryProcess.builder(List.of("-Xmx256m"), "agent", "--kafka", kafka, "--node",
                        "n" + i,
                        "--home", tmp.resolve("n" + i).toString(), "--heartbeat", "1s").command();
                agents.add(start(bed.onHost(i, cmd)));
            }
            for (int i = 0; i < 3; i++) {
                agents.get(i).await("agent n" + i, l -> l.startsWith("ferry agent n"));
            }
            Path results = tmp.resolve("results");
            Files.createDirectories(results);
            Path script = LcgRank.script(tmp, STEPS);
            Lines run = start(FerryProcess.builder(List.of("-Xmx256m"), "run", "--kafka", kafka, "--job", "wide",
                    "--ranks", Integer.toString(RANKS), "--nodes", "n0,n1,n2", "--interval", "1s", "--auto-recover",
                    "--store", tmp.resolve("store").toString(),
                    // caches keep every generation (the dry run at the end plans the newest established)
                    "--set", "cache.keep-generations=1000", "--", script.toString(), results.toString()));

            run.await("generation 1 established", l -> l.contains("generation 1 established"));
            kill(Long.parseLong(Files.readString(results.resolve("pid-4")).trim()));
            String restored = run.await("rank 4 restored on n2", l -> l.contains("node n2 restored generation"));
            assertTrue(restored.contains("4=local") && restored.contains("5=local"), restored);
            long g = Lines.generationOf(restored);
            run.await("a snapshot after the rollback", l -> l.matches(".*generation (\\d+) established.*")
                    && Lines.generationOf(l) > g);


            // Node n1 is lost: its agent and ranks die, its cache is gone.
            ProcessHandle n1 = started.get(2).toHandle();
            n1.descendants().forEach(ProcessHandle::destroyForcibly);
            n1.destroyForcibly();
            FileTrees.delete(tmp.resolve("n1").resolve("cache"));
            run.await("n1's ranks moved", l -> l.contains("ranks placed anew: node n1 lost"));
            String moved = run.await("n2 restoring n1's ranks", l -> l.contains("node n2 restored generation")
                    && l.contains("2=remote"));
            assertTrue(moved.contains("3=remote") && moved.contains("4=local") && moved.contains("5=local"),
                    "n1's ranks come from the store, n2's own from its cache: " + moved);
            // Each node reports its own restore: n0's line may come after n2's, so it is waited for, not looked up.
            String n0 = run.await("n0 rolled back",
                    l -> l.contains("node n0 restored generation " + Lines.generationOf(moved)));
            assertTrue(n0.contains("0=local") && n0.contains("1=local"), n0);
            LcgRank.hurry(results); // the rest of the job only waits for its end

            Process runProcess = started.get(started.size() - 1);
            assertTrue(runProcess.waitFor(4, TimeUnit.MINUTES), "ferry run did not finish: " + run.lines);
            assertEquals(0, runProcess.exitValue(), String.join("\n", run.lines));
            for (int r = 0; r < RANKS; r++) {
                assertEquals(Long.toString(LcgRank.uninterrupted(r, STEPS)),
                        Files.readString(results.resolve("rank-" + r)).trim(), "rank " + r);
            }
            assertTrue(run.lines.stream().anyMatch(l -> l.contains("job finished: every rank exited 0")),
                    run.lines.toString());

            // The restart plan across nodes: each node's agent checks its own cache. n1's ranks live on n2 now;
            // their images of the generation restored after the move are in no cache (n1's is gone): remote,
            // unless a newer one was captured on n2 since.
            FerryProcess.Result plan = FerryProcess.run(
                    login.applyTo(FerryProcess.builder(List.of("-Xmx256m"), "restart",
                    "wide", "--dry-run", "--json", "--kafka", kafka)));
            assertEquals(0, plan.exit(), plan.err());
            Matcher p = Pattern.compile(
                    "\\{\"rank\":(\\d),\"node\":\"(n\\d)\",\"generation\":(\\d+),\"source\":\"(\\w+)\"}")
                    .matcher(plan.out());
            List<String> ranks = new ArrayList<>();
            while (p.find()) {
                boolean movedAndNotCapturedSince = Long.parseLong(p.group(3)) == Lines.generationOf(moved);
                String expected = (p.group(1).equals("2") || p.group(1).equals("3"))
                        && movedAndNotCapturedSince ? "remote" : "local";
                assertEquals(expected, p.group(4), "rank " + p.group(1) + " in " + plan.out());
                ranks.add(p.group(1) + "@" + p.group(2));
            }
            assertEquals(List.of("0@n0", "1@n0", "2@n2", "3@n2", "4@n2", "5@n2"), ranks, plan.out() + plan.err());
        } finally {
            for (Process p : started) {
                p.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
    }

    private static void kill(long pid) {
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    }


    private Lines start(ProcessBuilder pb) throws IOException {
        Process p = login.applyTo(pb).redirectErrorStream(true).start();
        started.add(p);
        return new Lines(p, "p" + started.size());
    }
}

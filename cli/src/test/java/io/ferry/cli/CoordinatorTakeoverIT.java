package io.ferry.cli;

import io.ferry.staging.Repository;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two `ferry coordinator`s in one group share the jobs by partition of the events topic. A job
 * whose partition the second one owns runs; the second coordinator dies as by SIGKILL with a
 * generation in flight (every rank's image staged, no commit marker: its crash point
 * {@code coordinator.before-marker}, armed once generation 1 is established, and the store
 * looked at to see it so); the first takes the job over once the
 * group's session times out, replays it from the log, establishes every snapshot that was
 * captured, goes on checkpointing, and the job finishes with the result of an uninterrupted run.
 */
class CoordinatorTakeoverIT {
    private static final int RANKS = 2;
    private static final int STEPS = 1000;
    private static final int EVENTS_PARTITIONS = 8;

    @TempDir
    Path tmp;
    private final List<Process> started = new ArrayList<>();

    @Test
    void theOtherCoordinatorTakesOverADeadOnesJobAndFinishesItsSnapshotInFlight() throws Exception {
        try {
            String kafka = "127.0.0.1:" + TestBed.freePort();
            Lines a = start(FerryProcess.builder(List.of("-Xmx384m"), "coordinator", "--home",
                    tmp.resolve("a").toString(),
                    "--listen", kafka, "--http", "off", "--takeover-after", "6s"));
            a.await("coordinator a", l -> l.startsWith("ferry coordinator: serving jobs"));
            Path crashB = tmp.resolve("crash-b"); // armed below ({@link io.ferry.model.CrashPoint})
            Lines b = start(FerryProcess.builder(List.of("-Xmx384m", "-Dferry.crash-file=" + crashB), "coordinator",
                    "--home", tmp.resolve("b").toString(), "--kafka", kafka, "--http", "off", "--takeover-after",
                    "6s"));
            Process bProcess = started.get(started.size() - 1);
            b.await("coordinator b", l -> l.startsWith("ferry coordinator: serving jobs"));
            Set<Integer> ofB = partitions(b.await("b's share", l -> l.contains("took on events partitions")));
            a.await("a hands them over", l -> l.contains("gave up events partitions"));
            String job = null;
            for (int i = 0; job == null; i++) { // a job whose events land on a partition b owns
                String name = "take-" + i;
                if (ofB.contains(
                        Utils.toPositive(Utils.murmur2(name.getBytes(StandardCharsets.UTF_8))) % EVENTS_PARTITIONS)) {
                    job = name;
                }
            }
            int partition = Utils.toPositive(Utils.murmur2(job.getBytes(StandardCharsets.UTF_8))) % EVENTS_PARTITIONS;

            Lines agent = start(FerryProcess.builder(List.of("-Xmx256m"), "agent", "--kafka", kafka, "--node", "n0",
                    "--home", tmp.resolve("n0").toString(), "--heartbeat", "1s", "--peer-listen", "off"));
            agent.await("agent n0", l -> l.startsWith("ferry agent n0"));
            Path results = Files.createDirectories(tmp.resolve("results"));
            Lines run = start(FerryProcess.builder(List.of("-Xmx256m"), "run", "--kafka", kafka, "--job", job,
                    "--ranks", Integer.toString(RANKS), "--nodes", "n0", "--interval", "1s", "--auto-recover",
                    "--store", tmp.resolve("store").toString(), "--", LcgRank.script(tmp, STEPS).toString(),
                    results.toString()));
            Process runProcess = started.get(started.size() - 1);
            run.await("generation 1 established", l -> l.contains("generation 1 established"));
            int aSoFar = a.lines.size();
            // b halts (as SIGKILL: no goodbye to the group, its session has to time out) when it next has
            // every rank of a generation staged and is about to write the commit marker.
            Files.writeString(crashB, "coordinator.before-marker");
            assertTrue(bProcess.waitFor(2, TimeUnit.MINUTES), "b never reached its crash point: " + b.lines);
            assertEquals(137, bProcess.exitValue(), String.join("\n", b.lines));
            b.await("b's crash point", l -> l.contains("crash point coordinator.before-marker@1 reached"));
            // In flight at the kill: on the store, a generation after 1 with every rank's manifest and no marker
            // (two where the next one was staged too before b reached the marker, as on a loaded machine). Only b
            // could write their markers, and a cannot have taken the partition before b's session timed out.
            List<Long> inFlight;
            try (Store s = Stores.open(tmp.resolve("store").toUri(), Map.of())) {
                List<Repository.GenerationListing> gens = new Repository(s, Clock.systemUTC()).listGenerations(job);
                inFlight = gens.stream().filter(x -> !x.committed() && x.ranks().equals(List.of(0, 1)))
                        .map(Repository.GenerationListing::generation).toList();
                assertFalse(inFlight.isEmpty(), "a generation staged by every rank, with no commit marker: " + gens);
                assertTrue(inFlight.get(0) >= 2, "the generations in flight come after generation 1: " + gens);
            }
            long g = inFlight.get(inFlight.size() - 1);
            assertTrue(a.lines.subList(aSoFar, a.lines.size()).stream()
                    .noneMatch(l -> l.contains("took on events partitions")),
                    "a took the job over before the store was looked at: " + a.lines);
            String took = a.awaitAfter(aSoFar, "a takes the job over", l -> l.contains("took on events partitions"));
            assertTrue(partitions(took).contains(partition),
                    took + " should include " + job + "'s partition " + partition);
            run.await("a generation established by a after the one in flight",
                    l -> l.matches(".*generation \\d+ established.*") && Lines.generationOf(l) > g + 1);
            LcgRank.hurry(results); // the rest of the job only waits for its end

            assertTrue(runProcess.waitFor(4, TimeUnit.MINUTES), "ferry run did not finish: " + run.lines);
            assertEquals(0, runProcess.exitValue(), String.join("\n", run.lines));
            for (int r = 0; r < RANKS; r++) {
                assertEquals(Long.toString(LcgRank.uninterrupted(r, STEPS)),
                        Files.readString(results.resolve("rank-" + r)).trim(), "rank " + r);
            }
            // Every captured generation was established: the one in flight when b died too, by a.
            Set<Long> captured = generations(run.lines, "captured");
            Set<Long> established = generations(run.lines, "established on");
            assertEquals(captured, established, String.join("\n", run.lines));
            assertTrue(captured.containsAll(inFlight) && established.containsAll(inFlight),
                    "generations " + inFlight + ", in flight at the kill");
            assertTrue(established.stream().anyMatch(x -> x > g + 1),
                    "a went on checkpointing the job: " + established);
        } finally {
            for (Process p : started) {
                p.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
    }

    private static Set<Integer> partitions(String line) {
        Matcher m = Pattern.compile("partitions \\[([0-9, ]*)]").matcher(line);
        assertTrue(m.find(), line);
        Set<Integer> out = new TreeSet<>();
        for (String p : m.group(1).split(",\\s*")) {
            out.add(Integer.parseInt(p.trim()));
        }
        return out;
    }

    private static Set<Long> generations(List<String> lines, String what) {
        Set<Long> out = new TreeSet<>();
        Pattern p = Pattern.compile("generation (\\d+) " + what);
        for (String l : lines) {
            Matcher m = p.matcher(l);
            if (m.find()) {
                out.add(Long.parseLong(m.group(1)));
            }
        }
        return out;
    }

    private Lines start(ProcessBuilder pb) throws IOException {
        Process p = pb.redirectErrorStream(true).start();
        started.add(p);
        return new Lines(p, "p" + started.size());
    }
}

package io.ferry.cli;

import io.ferry.staging.internal.FileTrees;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A power cut of the embedded broker's own disk. A crash of its host loses what the page cache
 * held: partly written segments, indexes never synced. The topics the coordinator's decisions
 * rest on are fsynced at each write (a single broker's {@code flush.messages=1}); heartbeats and
 * consumer offsets are not. Here the broker's directory ({@code <home>/kafka}) sits on
 * durablefs, which keeps at a cut exactly what was fsynced. A one-node {@code ferry run} (broker,
 * coordinator, agent and two signal-mode ranks in one process) establishes a few generations on a
 * POSIX store on another disk; the power goes (durablefs cuts, then every process of the run is
 * SIGKILLed); what durablefs kept becomes the broker's directory. The same {@code ferry run} again
 * must start its broker on that directory, find in its log every generation it saw established
 * before the cut, resume from the newest, number new generations above it (dropping a newer one
 * its node's cache held: the job left that history), and end with the result of an
 * uninterrupted run.
 */
class BrokerPowerCutIT {
    private static final int STEPS = 600;

    @TempDir
    Path tmp;
    private DurableFs durablefs;

    @BeforeEach
    void needsFuse() throws Exception {
        durablefs = DurableFs.in(tmp.resolve("durablefs"));
    }

    @AfterEach
    void unmount() throws Exception {
        if (durablefs != null) {
            durablefs.close();
        }
    }

    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void aRunWhoseBrokerLostItsUnsyncedTailResumesFromTheNewestEstablishedGeneration() throws Exception {
        Path home = tmp.resolve("home");
        Path brokerDir = Files.createDirectories(home.resolve("kafka"));
        Path backing = tmp.resolve("kafka-kept");
        Process fs = durablefs.mount(backing, brokerDir, tmp.resolve("durablefs.log"), 0);
        Path results = Files.createDirectories(tmp.resolve("results"));
        Path script = LcgRank.script(tmp, STEPS);
        List<String> run = List.of("run", "--job", "powercut", "--ranks", "2", "--interval", "1s", "--auto-recover",
                "--http",
                "off", "--home", home.toString(), "--store", tmp.resolve("store").toString(), "--", script.toString(),
                results.toString());
        Process first = FerryProcess.builder(List.of("-Xmx384m"), run.toArray(String[]::new)).redirectErrorStream(true)
                .start();
        long newest;
        try {
            Lines lines = new Lines(first, "first");
            // The cut comes right after a capture: that generation's images are in the node's cache, its events
            // only in the broker's page cache, and it is seldom established yet.
            lines.await("a fourth generation captured",
                    l -> l.matches(".*generation \\d+ captured.*") && Lines.generationOf(l) >= 3);
            DurableFs.cut(fs); // the power goes: the broker's disk keeps what was fsynced, nothing more
            newest = lines.lines.stream().filter(l -> l.matches(".*generation \\d+ established.*"))
                    .mapToLong(Lines::generationOf).max().orElseThrow();
        } finally { // and every process of the run dies where it stands
            first.descendants().forEach(ProcessHandle::destroyForcibly);
            first.destroyForcibly();
            first.waitFor();
        }
        DurableFs.awaitUnmounted(brokerDir);
        String cut = Files.readString(tmp.resolve("durablefs.log")).trim();
        System.out.println("[power-cut] " + cut);
        assertTrue(Files.isDirectory(backing), "durablefs wrote what it kept: " + cut);
        assertTrue(!cut.contains("; 0 live files"), "the cut lost the broker's unsynced writes: " + cut);
        System.out.println("[power-cut] kept: " + kept(backing));
        FileTrees.delete(brokerDir);
        Files.move(backing, brokerDir);

        long marked = markers(tmp.resolve("store/ferry/v1/jobs/powercut")).stream().mapToLong(Long::longValue).max()
                .orElse(-1);
        List<Long> leftOver = generations(home.resolve("cache/powercut")).stream().filter(g -> g > marked).toList();
        System.out.println("[power-cut] established before the cut " + newest + ", newest marker " + marked
                + ", in the node's cache above it " + leftOver);

        Process again = FerryProcess.builder(List.of("-Xmx384m"), run.toArray(String[]::new)).redirectErrorStream(true)
                .start();
        try {
            Lines lines = new Lines(again, "again");
            String resumed = lines.await("the resume",
                    l -> l.contains("recovering: all ranks roll back to generation"));
            // What the broker acknowledged before the cut was fsynced (flush.messages=1 on a single broker), so the
            // log still knows every generation the first run saw established: none is learnt again from the store.
            assertEquals(List.of(),
                    lines.lines.stream().filter(l -> l.contains("found established on the store")).toList(),
                    "the established generations' events survived the cut");
            assertTrue(Lines.generationOf(resumed) >= newest, "resumed from generation " + newest
                    + ", established before the cut, or a newer one: " + resumed);
            for (long g : leftOver) { // the history the job left: never taken for the new generation of its number
                lines.await("generation " + g + " dropped from the cache",
                        l -> l.contains("generation " + g + " of powercut dropped"));
            }
            Resumed.goesOnExactly(again, lines, newest, results, STEPS);
        } finally {
            again.descendants().forEach(ProcessHandle::destroyForcibly);
            again.destroyForcibly();
        }
    }

    /** Generations with a commit marker under a job's directory of a POSIX store. */
    private static List<Long> markers(Path job) throws IOException {
        return generations(job).stream().filter(g -> Files.isRegularFile(job.resolve(g + "/SNAPSHOT"))).toList();
    }

    /** The generations (numbered directories) under {@code dir}, ascending; none if it is not there. */
    private static List<Long> generations(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.matches("\\d+")).map(Long::parseLong).sorted()
                    .toList();
        }
    }

    /** Each partition directory the cut kept, with the bytes of its segments ({@code .log} files): what survived. */
    private static String kept(Path brokerDir) throws IOException {
        Map<String, Long> bytes = new TreeMap<>();
        try (Stream<Path> files = Files.walk(brokerDir)) {
            for (Path f : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".log"))::iterator) {
                bytes.merge(brokerDir.relativize(f.getParent()).toString(), Files.size(f), Long::sum);
            }
        }
        return bytes.toString();
    }
}

package io.ferry.cli;

import io.ferry.staging.internal.FileTrees;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The store's commit markers are the truth for established generations, whatever the event log
 * lost. A one-node {@code ferry run} (embedded broker, coordinator, agent and two signal-mode
 * ranks in one process) is SIGKILLed with every process of it, as a power cut would, once a few
 * generations are established; then its event log is lost whole (the embedded broker's
 * directory removed: the extreme of a log that lost its tail, since the broker does not flush
 * each write). The same {@code ferry run} again, on the same store, finds the newest established
 * generation by its marker, resumes from it instead of starting over, numbers its new generations
 * above it (before, it numbered them from 0 again, as markers on the store already named), and
 * ends with the result of an uninterrupted run.
 */
class LostLogIT {
    private static final int STEPS = 600;

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void aRunAfterItsLogWasLostResumesFromTheNewestMarkerOnTheStore() throws Exception {
        Path results = Files.createDirectories(tmp.resolve("results"));
        Path script = LcgRank.script(tmp, STEPS);
        List<String> run = List.of("run", "--job", "lostlog", "--ranks", "2", "--interval", "1s", "--auto-recover",
                "--http",
                "off", "--home", tmp.resolve("home").toString(), "--store", tmp.resolve("store").toString(), "--",
                script.toString(), results.toString());
        Process first = FerryProcess.builder(List.of("-Xmx384m"), run.toArray(String[]::new)).redirectErrorStream(true)
                .start();
        long newest;
        try {
            Lines lines = new Lines(first, "first");
            String third = lines.await("three established generations",
                    l -> l.matches(".*generation \\d+ established.*") && Lines.generationOf(l) >= 2);
            newest = Lines.generationOf(third);
        } finally { // the power goes: every process of the run at once
            first.descendants().forEach(ProcessHandle::destroyForcibly);
            first.destroyForcibly();
            first.waitFor();
        }
        FileTrees.delete(tmp.resolve("home").resolve("kafka"));

        Process again = FerryProcess.builder(List.of("-Xmx384m"), run.toArray(String[]::new)).redirectErrorStream(true)
                .start();
        try {
            Lines lines = new Lines(again, "again");
            lines.await("generation " + newest + " found on the store",
                    l -> l.contains("generation " + newest + " found established on the store"));
            String resumed = lines.await("the resume",
                    l -> l.contains("recovering: all ranks roll back to generation"));
            assertTrue(Lines.generationOf(resumed) >= newest,
                    "resumed from the newest marker or a newer one: " + resumed);
            Resumed.goesOnExactly(again, lines, newest, results, STEPS);
        } finally {
            again.descendants().forEach(ProcessHandle::destroyForcibly);
            again.destroyForcibly();
        }
    }
}

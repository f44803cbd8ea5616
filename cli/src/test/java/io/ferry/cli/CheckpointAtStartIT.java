package io.ferry.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ferry checkpoint J} sent the moment {@code ferry run} says where its log is ({@code run.properties} in its
 * home) is taken. The run file was written as soon as the embedded broker served, before the coordinator had placed
 * its reader of the commands topic at the topic's end: a checkpoint sent in between said "requested" and was read
 * past (found once the tests' own commands ran in their JVM, faster than a child JVM starts: {@link InProcessFerry}).
 */
class CheckpointAtStartIT {
    private static final int STEPS = 1500;
    @TempDir
    Path tmp;

    @Test
    void aCheckpointAskedAsSoonAsTheRunFileAppearsIsTaken() throws Exception {
        // Twice, the second time with this JVM's Kafka clients loaded by the first: asked as fast as a warm process can.
        for (String job : List.of("first", "second")) {
            Path results = Files.createDirectories(tmp.resolve(job));
            Path home = tmp.resolve(job + "-home");
            Process run = FerryProcess.builder(List.of("-Xmx384m"), "run", "--job", job, "--ranks", "1", "--interval",
                    "0", "--home", home.toString(), "--http", "off", "--", LcgRank.script(results, STEPS).toString(),
                    results.toString()).redirectErrorStream(true).start();
            Lines out = new Lines(run, job);
            try {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                while (!Files.exists(home.resolve("run.properties")) && System.nanoTime() < deadline
                        && run.isAlive()) {
                    Thread.sleep(5);
                }
                FerryProcess.Result checkpoint = FerryProcess.run("checkpoint", job, "--home", home.toString());
                assertEquals(0, checkpoint.exit(), checkpoint.out() + checkpoint.err());
                // No interval: generation 0 can only come from the request.
                out.await(job + "'s generation 0 established", l -> l.contains("generation 0 established on the"));
                LcgRank.hurry(results);
                assertTrue(run.waitFor(5, TimeUnit.MINUTES), "ferry run did not finish");
                assertEquals(0, run.exitValue(), String.join("\n", out.lines));
            } finally {
                run.destroyForcibly();
            }
        }
    }
}

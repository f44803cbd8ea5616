package io.ferry.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An outage of the event log is not the loss of a node. A site's Kafka (a broker alone in its
 * JVM) is frozen with SIGSTOP for more than three heartbeat timeouts while a job runs; a
 * coordinator that read the silence as every node gone would roll the job back (or end it) the
 * moment the log answered again. Here nothing is rolled back, checkpointing resumes, and the job
 * finishes with the result of an uninterrupted run.
 */
class LogOutageIT {
    private static final int RANKS = 2;
    private static final int STEPS = 2500;
    private static final int TIMEOUT_SECONDS = 6;
    private static final int OUTAGE_SECONDS = 20;

    @TempDir
    Path tmp;
    private final Children children = new Children();

    @AfterEach
    void stopAll() {
        children.stopAll();
    }

    @Test
    void aFrozenBrokerEndsNoJobAndStartsNoRollback() throws Exception {
        String kafka = "127.0.0.1:" + TestBed.freePort();
        ProcessBuilder brokerPb = FerryProcess.builder(List.of("-Xmx384m"), tmp.resolve("kafka").toString(), kafka);
        brokerPb.command().set(brokerPb.command().indexOf(Main.class.getName()), BrokerProcess.class.getName());
        Lines broker = children.start(brokerPb);
        Process brokerProcess = children.last();
        broker.await("the broker serves", l -> l.startsWith("broker serving"));
        Lines coordinator = children.start(FerryProcess.builder(List.of("-Xmx384m"), "coordinator", "--home",
                tmp.resolve("service").toString(), "--kafka", kafka, "--http", "off",
                "--heartbeat-timeout", TIMEOUT_SECONDS + "s"));
        coordinator.await("the coordinator serves", l -> l.startsWith("ferry coordinator: serving jobs"));
        children.agent(kafka, "n0", tmp.resolve("n0"));
        Path results = Files.createDirectories(tmp.resolve("results"));
        // A checkpoint every 8 s: the broker is frozen between two, while the coordinator appends nothing
        // (an append caught by the freeze blocks the coordinator itself, which its lease covers, see
        // CoordinatorStallIT).
        Lines run = children.start(FerryProcess.builder(List.of("-Xmx256m"), "run", "--kafka", kafka, "--job", "outage",
                "--ranks", Integer.toString(RANKS), "--nodes", "n0", "--interval", "8s", "--auto-recover",
                "--store", tmp.resolve("store").toString(), "--", LcgRank.script(tmp, STEPS).toString(),
                results.toString()));
        Process runProcess = children.last();
        long before = Lines.generationOf(run.await("generation 1 established",
                l -> l.matches(".*generation \\d+ established.*")));

        int coordinatorSeen = coordinator.lines.size();
        signal(brokerProcess.pid(), "STOP");
        coordinator.awaitAfter(coordinatorSeen, "the coordinator sees the log away",
                l -> l.contains("the event log does not answer"));
        Thread.sleep(OUTAGE_SECONDS * 1000L); // the outage itself: what is observed is what follows it
        int seen = run.lines.size();
        signal(brokerProcess.pid(), "CONT");
        coordinator.awaitAfter(coordinatorSeen, "the coordinator sees the log back", l -> l.contains("answers again"));
        long after = Lines.generationOf(run.awaitAfter(seen, "a generation established after the outage",
                l -> l.matches(".*generation \\d+ established.*") && Lines.generationOf(l) > before));
        // One more, a checkpoint interval (longer than a heartbeat timeout) later: a node wrongly taken for lost
        // would have been said by then. The rest of the job only waits for its end.
        run.awaitAfter(seen, "a second generation established after the outage",
                l -> l.matches(".*generation \\d+ established.*") && Lines.generationOf(l) > after);
        LcgRank.hurry(results);

        assertTrue(runProcess.waitFor(5, TimeUnit.MINUTES), "ferry run did not finish: " + run.lines);
        assertEquals(0, runProcess.exitValue(), String.join("\n", run.lines));
        assertTrue(run.lines.stream().noneMatch(l -> l.contains("recovering") || l.contains("no heartbeat")
                || l.contains("lost")), "the outage was taken for a lost node: " + run.lines);
        for (int r = 0; r < RANKS; r++) {
            assertEquals(Long.toString(LcgRank.uninterrupted(r, STEPS)),
                    Files.readString(results.resolve("rank-" + r)).trim(),
                    "rank " + r);
        }
    }

    private static void signal(long pid, String sig) {
        try {
            new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).start().waitFor();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

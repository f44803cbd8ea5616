package io.ferry.coordinator;

import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import io.ferry.model.LaunchSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A coordinator started over a log that an earlier one left mid-decision (it crashed between an
 * append and the commands or reactions that append guards) finishes what the folded state says is
 * in flight: nothing waits for an event it would only have acted on live. Each history here is
 * what the crashed coordinator had logged, appended to a real broker before the new one starts.
 */
class DecisionsFromStateIT {
    @TempDir
    Path tmp;

    private static void await(String what, BooleanSupplier cond) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(50);
        }
    }

    /**
     * Crashed after logging CheckpointRequested, before sending the capture commands: they are
     * sent again, and with no agent to answer them (n0 only beats here) the generation still fails
     * at its deadline.
     */
    @Test
    void aGenerationWhoseCaptureCommandsWereNeverSentFailsAtItsDeadlineAndCheckpointingGoesOn() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             KafkaConsumer<byte[], byte[]> agentView = log.reader(KafkaLog.COMMANDS, true)) {
            log.append(new Event.JobStarted("lost", 1, 1000, true, tmp.resolve("store").toUri().toString(), "login",
                    "block:n0", new LaunchSpec(List.of("sim"), "app", 2000, "USR2", Map.of())));
            log.append(new Event.CheckpointRequested("lost", 0, "interval"));
            ScheduledExecutorService beats = beating(log, "lost", "n0");
            try (Coordinator c = new Coordinator(log, Clock.systemUTC(), Duration.ofSeconds(30)).start()) {
                assertTrue(c.awaitLive(Duration.ofSeconds(30)));
                List<Command> toN0 = new ArrayList<>();
                await("a capture of the next generation", () -> {
                    toN0.addAll(commands(agentView, "n0"));
                    return toN0.contains(new Command.Capture("lost", 1));
                });
                assertEquals(new Command.Capture("lost", 0), toN0.get(0),
                        "the capture commands the crashed coordinator never sent are sent first: " + toN0);
                GenerationView g0 = c.query(j -> j.get("lost").orElseThrow().generations.get(0L));
                assertEquals(GenerationView.State.FAILED, g0.state(), "no agent answered it: it fails at its deadline");
                assertTrue(g0.failure.contains("no capture reported within the capture timeout"), g0.failure);
            } finally {
                beats.shutdownNow();
            }
        }
    }

    /** Crashed after the launcher's exit was logged, before it rolled the job back. */
    @Test
    void aLauncherExitFoldedDuringTheReplayIsActedOn() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers())) {
            log.append(new Event.JobStarted("mpi", 2, 0, true, tmp.resolve("store").toUri().toString(), "login",
                    "launcher:", LaunchSpec.of(List.of("./sim"))));
            log.append(new Event.LauncherRequested("mpi", 1, -1, "start"));
            log.append(new Event.RanksJoined("mpi", -1, "n1", "0-1"));
            log.append(new Event.LauncherExited("mpi", 1, 3));
            ScheduledExecutorService beats = beating(log, "mpi", "n1");
            try (Coordinator c = new Coordinator(log, Clock.systemUTC(), Duration.ofSeconds(30)).start()) {
                assertTrue(c.awaitLive(Duration.ofSeconds(30)));
                await("the rollback the exit called for",
                        () -> c.query(j -> j.get("mpi").orElseThrow().recoveries) >= 1);
                await("the launcher asked for again",
                        () -> c.query(j -> j.get("mpi").orElseThrow().launchAttempt()) >= 2);
                assertTrue((boolean) c.query(j -> j.get("mpi").orElseThrow().success().isEmpty()), "the job goes on");
            } finally {
                beats.shutdownNow();
            }
        }
    }

    /**
     * Crashed after logging the start's placement, before sending every launch (n0's went out and was answered, n1's
     * not): n1 runs nothing of the job and sends no heartbeat of it. Its launch is sent again, half a heartbeat
     * timeout after the replay, before n1 could be taken for lost; no checkpoint is asked before it (its capture
     * would reach n1 before its launch), and the placement stays.
     */
    @Test
    void aStartWhoseLaunchANodeNeverGotIsSentToItAgainNotTakenForANodeLoss() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             KafkaConsumer<byte[], byte[]> agentView = log.reader(KafkaLog.COMMANDS, true)) {
            log.append(new Event.JobStarted("half", 2, 1000, true, tmp.resolve("store").toUri().toString(), "login",
                    "block:n0,n1", LaunchSpec.of(List.of("./sim"))));
            log.append(new Event.JobPlaced("half", "block:n0,n1", Event.JobPlaced.START));
            log.append(new Event.ImagesRestored("half", -1, "n0", Map.of()));
            ScheduledExecutorService beats = beating(log, "half", "n0");
            Duration timeout = Duration.ofSeconds(6);
            try (Coordinator c = new Coordinator(log, Clock.systemUTC(), timeout).start()) {
                assertTrue(c.awaitLive(Duration.ofSeconds(30)));
                long live = System.nanoTime();
                List<Command> toN1 = new ArrayList<>();
                List<Command> toN0 = new ArrayList<>();
                await("n1's launch sent again", () -> {
                    toN0.addAll(commands(agentView, "n0"));
                    toN1.addAll(commands(agentView, "n1"));
                    return toN1.stream().anyMatch(Command.Launch.class::isInstance);
                });
                assertTrue(System.nanoTime() - live < timeout.toNanos(), "before n1's heartbeat timeout");
                Command.Launch again = (Command.Launch) toN1.get(0);
                assertEquals(-1, again.generation(), "from the beginning: " + again);
                assertEquals("1", again.ranks(), "n1's own rank: " + again);
                assertTrue(toN0.stream().noneMatch(Command.Launch.class::isInstance), "n0 answered its launch: " + toN0);
                assertTrue(toN0.stream().noneMatch(Command.Capture.class::isInstance),
                        "no checkpoint before n1 was sent its launch: " + toN0);
                assertEquals("block:n0,n1", c.query(j -> j.get("half").orElseThrow().placement.toString()),
                        "no node taken for lost");
                assertEquals(0, (int) c.query(j -> j.get("half").orElseThrow().recoveries), "no rollback");
            } finally {
                beats.shutdownNow();
            }
        }
    }

    /** A node's heartbeats, as its agent sends them, every half second. */
    private static ScheduledExecutorService beating(KafkaLog log, String job, String node) {
        ScheduledExecutorService beats = Executors.newSingleThreadScheduledExecutor();
        beats.scheduleAtFixedRate(() -> log.offer(new Event.Heartbeat(job, node)), 0, 500, TimeUnit.MILLISECONDS);
        return beats;
    }

    private static List<Command> commands(KafkaConsumer<byte[], byte[]> c, String node) {
        List<Command> out = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
            if (node.equals(new String(r.key(), StandardCharsets.UTF_8))) {
                out.add(EventCodec.decodeCommand(r.value()));
            }
        }
        return out;
    }
}

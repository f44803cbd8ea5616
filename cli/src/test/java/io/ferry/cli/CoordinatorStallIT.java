package io.ferry.cli;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import io.ferry.model.LaunchSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A `ferry coordinator` process frozen (SIGSTOP, as a long GC pause or a VM frozen for
 * migration freezes it) for longer than the heartbeat timeout, while the job's node and its
 * `ferry run` go on beating into the log. Thawed (SIGCONT), it must not take its own stall for
 * their silence: it reads what the log got meanwhile before deciding anything. It still acts
 * afterwards: once the `ferry run` really falls silent, the job ends.
 */
class CoordinatorStallIT {
    private static final String JOB = "stall";
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    /** The rank named by the next {@link #judged} order: one the job does not have. */
    private int probe = 100;

    @TempDir
    Path tmp;

    @Test
    void aCoordinatorThawedAfterAStallLongerThanTheHeartbeatTimeoutReadsTheHeartbeatsItMissedBeforeDeciding()
            throws Exception {
        String kafka = "127.0.0.1:" + TestBed.freePort();
        Process coordinator = FerryProcess.builder(List.of("-Xmx384m"), "coordinator", "--home",
                tmp.resolve("c").toString(),
                "--listen", kafka, "--http", "off", "--heartbeat-timeout", TIMEOUT.toSeconds() + "s",
                "--takeover-after", "30s").redirectErrorStream(true).start();
        ScheduledExecutorService beats = Executors.newScheduledThreadPool(1);
        AtomicBoolean runBeats = new AtomicBoolean(true);
        List<Event> events = new CopyOnWriteArrayList<>();
        AtomicBoolean reading = new AtomicBoolean(true);
        Thread reader = null;
        try {
            Lines out = new Lines(coordinator, "coordinator");
            out.await("the coordinator", l -> l.startsWith("ferry coordinator: serving jobs"));
            try (KafkaLog log = new KafkaLog(kafka)) {
                reader = new Thread(() -> {
                    try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.EVENTS, true)) {
                        while (reading.get()) {
                            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) {
                                Event e = EventCodec.decode(r.value());
                                if (e.job().equals(JOB)) {
                                    events.add(e);
                                }
                            }
                        }
                    }
                });
                reader.start();
                log.append(new Event.JobStarted(JOB, 2, 0, true, tmp.resolve("store").toUri().toString(), "login",
                        "launcher:", LaunchSpec.of(List.of("./sim"))));
                await("the launch request", () -> events.stream().anyMatch(e -> e instanceof Event.LauncherRequested));
                // Act as the `ferry run --launch` holding the launcher (its heartbeat) and as node n1's agent.
                log.append(new Event.RanksJoined(JOB, -1, "n1", "0-1"));
                beats.scheduleAtFixedRate(() -> {
                    log.append(new Event.Heartbeat(JOB, "n1"));
                    if (runBeats.get()) {
                        log.append(new Event.Heartbeat(JOB, Event.Heartbeat.LAUNCHER));
                    }
                }, 0, 250, TimeUnit.MILLISECONDS);
                assertEquals(List.of(), judged(log, out), "the coordinator has read the join and judges the job");
                // Silence can only be judged once the heartbeat timeout has passed since the coordinator knew of
                // the node: waiting it out (and half as much again) is the scenario, not a guess at the machine's pace.
                Thread.sleep(TIMEOUT.toMillis() * 3 / 2);
                assertEquals(List.of(), judged(log, out), "nothing to decide while everyone beats");

                signal("STOP", coordinator);
                // The fault itself: frozen for 2.5 heartbeat timeouts, well under the group's session (30 s).
                Thread.sleep(TIMEOUT.toMillis() * 5 / 2);
                int sinceThaw = out.lines.size();
                signal("CONT", coordinator);
                out.awaitAfter(sinceThaw, "the coordinator saying it noticed its stall",
                        l -> l.contains("ferry coordinator: stalled for"));
                // Decisions resume once it has read the log promptly for a while: judged() returns only after a tick
                // of the thawed coordinator that was free to decide, with every decision it took by then.
                assertEquals(List.of(), judged(log, out), "a stall of the coordinator's own is not its nodes' silence: "
                        + String.join("\n", out.lines));

                runBeats.set(false); // now the `ferry run` really is gone
                await("the job ended for the silent ferry run",
                        () -> events.stream().anyMatch(e -> e instanceof Event.JobFinished));
                Event.JobFinished f = (Event.JobFinished) events.stream().filter(e -> e instanceof Event.JobFinished)
                        .findFirst().orElseThrow();
                assertTrue(f.detail().contains("sent no heartbeat"), f.detail());
            }
        } finally {
            beats.shutdownNow();
            reading.set(false);
            if (reader != null) {
                reader.join(5000);
            }
            signal("CONT", coordinator);
            coordinator.destroyForcibly();
        }
    }

    /** What the coordinator decided on its own for the job: recoveries and ends. */
    private static List<Event> decisions(List<Event> events) {
        return events.stream().filter(e -> e instanceof Event.RecoveryStarted || e instanceof Event.JobFinished)
                .toList();
    }

    /**
     * Waits for a tick of the coordinator that began after this call and was free to decide, and
     * returns every decision in the log by the end of that tick. A chaos order for a rank the job
     * does not have changes nothing and is answered on the coordinator's output; commands are read
     * only while it may decide, each read followed by a tick. The first answer is an iteration that
     * began after the call; the second, sent after it, is read only once that iteration's tick is over,
     * and the tick appends its decisions before it returns: so reading the events topic to its end
     * from then sees them.
     */
    private List<Event> judged(KafkaLog log, Lines out) throws InterruptedException {
        for (int round = 0; round < 2; round++) {
            int rank = probe++;
            int from = out.lines.size();
            log.send(KafkaLog.COORDINATOR, new Command.KillRank(JOB, rank));
            out.awaitAfter(from, "the coordinator to take the order for rank " + rank,
                    l -> l.contains("chaos: no running job " + JOB + " with rank " + rank));
        }
        return decisions(logged(log));
    }

    /** The job's events in the events topic, up to its end now. */
    private static List<Event> logged(KafkaLog log) {
        List<Event> all = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.EVENTS, true)) {
            var ends = KafkaLog.ends(c);
            while (!KafkaLog.reached(c, ends)) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) {
                    Event e = EventCodec.decode(r.value());
                    if (e.job().equals(JOB)) {
                        all.add(e);
                    }
                }
            }
        }
        return all;
    }

    private static void signal(String sig, Process p) throws Exception {
        new ProcessBuilder("kill", "-" + sig, Long.toString(p.pid())).inheritIO().start().waitFor();
    }

    private static void await(String what, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(100);
        }
    }
}

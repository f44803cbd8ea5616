package io.ferry.coordinator;

import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.LaunchSpec;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A run's start that is not launched at once. A coordinator that stops after the start was folded but
 * before it was launched leaves it to the coordinator that takes the job over: that one starts it once
 * its replay ends, instead of waiting a heartbeat timeout for nodes that run nothing of the job to be
 * taken for lost. And a DMTCP start waiting for its lead's agent waits a heartbeat timeout at most.
 */
class StartTakeoverIT {
    /** Longer than the test waits for the launches: a launch for a lost node would come too late to pass. */
    private static final Duration HEARTBEAT_TIMEOUT = Duration.ofSeconds(90);

    @TempDir
    Path tmp;

    /**
     * A DMTCP job on two nodes waits, before launching, to hear the agent of rank 0's node (its DMTCP
     * lead). Its coordinator stops while it waits; the next one replays the start, waits for the lead
     * as well, and launches both nodes' ranks, naming the lead, once that agent is heard.
     */
    @Test
    void aStartWaitingForItsDmtcpLeadWhenItsCoordinatorStopsIsLaunchedByTheNextOne() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             KafkaConsumer<byte[], byte[]> agentView = log.reader(KafkaLog.COMMANDS, true)) {
            String store = tmp.resolve("store").toUri().toString();
            LaunchSpec dmtcp = new LaunchSpec(List.of("sim"), "dmtcp", 60_000, "USR2", Map.of());
            try (Coordinator first = new Coordinator(log, Clock.systemUTC(), HEARTBEAT_TIMEOUT).start()) {
                assertTrue(first.awaitLive(Duration.ofSeconds(30)));
                log.append(new Event.JobStarted("early", 4, 0, true, store, "login", "block:n3,n1", dmtcp));
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (!first.query(j -> j.get("early").map(v -> v.startDeferredSinceMillis >= 0).orElse(false))) {
                    assertTrue(System.nanoTime() < deadline, "the start never waited for n3's agent");
                    Thread.sleep(20);
                }
                assertEquals(List.of(), SentLaunches.poll(agentView), "launched before n3's agent was heard");
            }
            try (Coordinator second = new Coordinator(log, Clock.systemUTC(), HEARTBEAT_TIMEOUT).start()) {
                assertTrue(second.awaitLive(Duration.ofSeconds(30)));
                log.append(new Event.AgentPresent("n3", "00000000000000c3", "h3", "/f", 1000, 9, false,
                        "10.0.0.3:4000"));
                List<Command.Launch> early = new ArrayList<>();
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (early.size() < 2) {
                    assertTrue(System.nanoTime() < deadline, "the job was never launched: " + early);
                    SentLaunches.poll(agentView).stream().filter(l -> l.job().equals("early")).forEach(early::add);
                }
                for (Command.Launch l : early) {
                    assertEquals("start", l.cause(), "a start, not a lost node's ranks moved: " + l);
                    assertEquals("n3=10.0.0.3:4000", l.lead(), "rank 0 is on n3: " + l);
                    assertEquals(-1, l.generation(), l.toString());
                }
                assertEquals(List.of("n1", "n3"), early.stream().map(Command.Launch::node).sorted().toList());
                // The placement is logged before the launches go out, and folded once the coordinator reads it back,
                // a moment after the test may have seen the launches (a rehearsal asked before it had).
                long folded = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (!second.query(j -> j.get("early").map(v -> v.launched).orElse(false))) {
                    assertTrue(System.nanoTime() < folded,
                            "the start's placement is in the log: a third coordinator would not launch it again");
                    Thread.sleep(20);
                }
            }
            // A third coordinator finds the start decided and launches nothing more.
            try (Coordinator third = new Coordinator(log, Clock.systemUTC(), HEARTBEAT_TIMEOUT).start()) {
                assertTrue(third.awaitLive(Duration.ofSeconds(30)));
                Ticks.await(third, log, "early", "n3");
                List<Command.Launch> again = SentLaunches.allSent(agentView); // all the third sent by its tick
                assertTrue(again.stream().noneMatch(l -> l.job().equals("early")), "launched twice: " + again);
            }
        }
    }

    /**
     * The wait for a DMTCP lead is bounded: a start whose rank 0 agent is not heard within the
     * heartbeat timeout launches anyway, each node's ranks then a computation of their own (no lead),
     * rather than never.
     */
    @Test
    void aStartWhoseDmtcpLeadIsNeverHeardLaunchesAfterTheHeartbeatTimeoutWithoutALead() throws Exception {
        Duration timeout = Duration.ofSeconds(3);
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             KafkaConsumer<byte[], byte[]> agentView = log.reader(KafkaLog.COMMANDS, true);
             Coordinator c = new Coordinator(log, Clock.systemUTC(), timeout).start()) {
            assertTrue(c.awaitLive(Duration.ofSeconds(30)));
            LaunchSpec dmtcp = new LaunchSpec(List.of("sim"), "dmtcp", 60_000, "USR2", Map.of());
            long appended = System.currentTimeMillis(); // the wait begins once the coordinator folds the start
            log.append(new Event.JobStarted("unheard", 4, 0, true, tmp.resolve("store").toUri().toString(), "login",
                    "block:n5,n6", dmtcp));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            List<Command.Launch> launched = new ArrayList<>();
            while (launched.size() < 2) {
                assertTrue(System.nanoTime() < deadline, "never launched: " + launched);
                SentLaunches.poll(agentView).stream().filter(l -> l.job().equals("unheard")).forEach(launched::add);
            }
            long waited = System.currentTimeMillis() - appended;
            assertTrue(waited >= timeout.toMillis(), "launched " + waited + " ms after the start, before the timeout");
            for (Command.Launch l : launched) {
                assertEquals("start", l.cause(), l.toString());
                assertEquals("", l.lead(), "no lead heard: each node its own computation: " + l);
            }
        }
    }
}

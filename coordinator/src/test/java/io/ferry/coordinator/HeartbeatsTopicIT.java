package io.ferry.coordinator;

import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.EpochHeader;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LoopbackLogin;
import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import io.ferry.model.LaunchSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 40, point 6: heartbeats live in {@code ferry.heartbeats}, where they expire, and the
 * coordinator judges liveness from that topic, read live; heartbeats an older agent still
 * appends to {@code ferry.events} count as before. A site's events topic that would drop events
 * stops the coordinator at start. The nodes' staging progress goes there too.
 */
class HeartbeatsTopicIT {
    private static final Duration TIMEOUT = Duration.ofSeconds(6);

    @TempDir
    Path tmp;

    /**
     * Commands carry the newest epoch the coordinator heard of their node's agent: once n1's agent
     * said it is present at epoch 7, the captures sent to n1 name epoch 7, so an older agent of
     * the name (cut off, then back) leaves them to the newer one.
     */
    @Test
    void commandsToANodeCarryTheNewestEpochHeardOfItsAgent() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             KafkaConsumer<byte[], byte[]> agentView = log.reader(KafkaLog.COMMANDS, true);
             Coordinator c = new Coordinator(log, Clock.systemUTC(), TIMEOUT).start()) {
            assertTrue(c.awaitLive(Duration.ofSeconds(30)));
            log.append(new Event.JobStarted("fenced", 1, 0, true, tmp.resolve("store").toUri().toString(), "n1"));
            log.append(new Event.AgentPresent("n1", "00000000000000a1", "h", "/old", 1000, 3, false));
            log.append(new Event.AgentPresent("n1", "00000000000000b2", "h", "/new", 1000, 7, false));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            List<Long> stamped = new ArrayList<>();
            while (!stamped.contains(7L)) {
                assertTrue(System.nanoTime() < deadline, "no command to n1 named epoch 7: " + stamped);
                log.send(KafkaLog.COORDINATOR, new Command.RequestCheckpoint("fenced"));
                for (ConsumerRecord<byte[], byte[]> r : agentView.poll(Duration.ofMillis(300))) {
                    if (new String(r.key(), StandardCharsets.UTF_8).equals("n1")) {
                        stamped.add(EpochHeader.of(r));
                    }
                }
            }
            for (int i = 0; i < stamped.size(); i++) {
                long e = stamped.get(i);
                assertTrue(e == -1 || e == 3 || e == 7, "only epochs heard: " + stamped);
                assertTrue(i == 0 || e >= stamped.get(i - 1),
                        "none before an agent was heard, then the newest heard, never an older one again: " + stamped);
            }
        }
    }

    /**
     * A DMTCP job on several nodes is one DMTCP computation: every node's launch names rank 0's
     * node as its lead, at the peer address its agent's presence gave (known before any job ran
     * there), and carries one launch id shared by that start's launches. A job of another method,
     * or on one node, has no lead.
     */
    @Test
    void theLaunchesOfADmtcpJobOnSeveralNodesNameRank0sAgentAsTheirLead() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             KafkaConsumer<byte[], byte[]> agentView = log.reader(KafkaLog.COMMANDS, true);
             Coordinator c = new Coordinator(log, Clock.systemUTC(), TIMEOUT).start()) {
            assertTrue(c.awaitLive(Duration.ofSeconds(30)));
            String store = tmp.resolve("store").toUri().toString();
            log.append(new Event.AgentPresent("n1", "00000000000000a1", "h1", "/f", 1000, 7, false, "10.0.0.1:4000"));
            // heard once a command to n1 carries its epoch
            log.append(new Event.JobStarted("probe", 1, 0, true, store, "login", "block:n1",
                    LaunchSpec.of(List.of("sim"))));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            for (boolean heard = false; !heard; ) {
                assertTrue(System.nanoTime() < deadline, "n1's presence was never heard");
                log.send(KafkaLog.COORDINATOR, new Command.RequestCheckpoint("probe"));
                for (ConsumerRecord<byte[], byte[]> r : agentView.poll(Duration.ofMillis(300))) {
                    heard |= EpochHeader.of(r) == 7;
                }
            }
            LaunchSpec dmtcp = new LaunchSpec(List.of("sim"), "dmtcp", 60_000, "USR2", Map.of());
            log.append(new Event.JobStarted("wide", 4, 0, true, store, "login", "block:n1,n2", dmtcp));
            log.append(new Event.JobStarted("narrow", 2, 0, true, store, "login", "block:n1", dmtcp));
            log.append(new Event.JobStarted("cooperative", 4, 0, true, store, "login", "block:n1,n2",
                    LaunchSpec.of(List.of("sim"))));
            Map<String, List<Command.Launch>> byJob = new TreeMap<>();
            while (byJob.values().stream().mapToInt(List::size).sum() < 5) {
                assertTrue(System.nanoTime() < deadline, "launches so far: " + byJob);
                SentLaunches.poll(agentView).stream().filter(l -> !l.job().equals("probe"))
                        .forEach(l -> byJob.computeIfAbsent(l.job(), k -> new ArrayList<>()).add(l));
            }
            List<Command.Launch> wide = byJob.get("wide");
            assertEquals(2, wide.size(), byJob.toString());
            for (Command.Launch l : wide) {
                assertEquals("n1=10.0.0.1:4000", l.lead(), "rank 0 is on n1: " + l);
            }
            assertTrue(wide.get(0).launchId() > 0 && wide.get(0).launchId() == wide.get(1).launchId(),
                    "one id for one start: " + wide);
            assertEquals("", byJob.get("narrow").get(0).lead(), "one node: its own computation");
            byJob.get("cooperative").forEach(l -> assertEquals("", l.lead(), "not DMTCP: " + l));

            // A job started before its rank 0's agent was heard (agents started a moment before it): its launch waits
            // for the agent's presence, instead of making each node's ranks a computation of their own.
            log.append(new Event.JobStarted("early", 4, 0, true, store, "login", "block:n3,n1", dmtcp));
            long quiet = System.nanoTime() + Duration.ofSeconds(2).toNanos();
            while (System.nanoTime() < quiet) {
                List<Command.Launch> early = SentLaunches.poll(agentView);
                assertTrue(early.stream().noneMatch(l -> l.job().equals("early")), "launched unheard: " + early);
            }
            log.append(new Event.AgentPresent("n3", "00000000000000c3", "h3", "/f", 1000, 9, false, "10.0.0.3:4000"));
            List<Command.Launch> early = new ArrayList<>();
            while (early.size() < 2) {
                assertTrue(System.nanoTime() < deadline + Duration.ofSeconds(30).toNanos(), "launches: " + early);
                SentLaunches.poll(agentView).stream().filter(l -> l.job().equals("early")).forEach(early::add);
            }
            for (Command.Launch l : early) {
                assertEquals("n3=10.0.0.3:4000", l.lead(), "rank 0 is on n3, heard after the start: " + l);
            }
        }
    }

    @Test
    void heartbeatsOnTheirOwnTopicKeepNodesAliveAndOldOnesInTheEventsStillCount() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             KafkaProducer<byte[], byte[]> raw = new KafkaProducer<>(
                     LoopbackLogin.clientConfig(kafka.bootstrapServers(), Map.of(
                             ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                             ProducerConfig.ACKS_CONFIG, "all")),
                     new ByteArraySerializer(), new ByteArraySerializer());
             KafkaConsumer<byte[], byte[]> agentView = log.reader(KafkaLog.COMMANDS, true);
             Coordinator c = new Coordinator(log, Clock.systemUTC(), TIMEOUT).start()) {
            assertTrue(c.awaitLive(Duration.ofSeconds(30)));
            log.append(new Event.JobStarted("beats", 3, 0, true, tmp.resolve("store").toUri().toString(), "login",
                    "block:a,old,gone", LaunchSpec.of(List.of("sim"))));
            List<Command.Launch> launches = new ArrayList<>();

            // "a" and "gone" beat on the heartbeats topic, "old" on the events topic as an older agent does:
            // for two timeouts, none may be taken for lost.
            long until = System.nanoTime() + 2 * TIMEOUT.toNanos();
            while (System.nanoTime() < until) {
                beat(raw, KafkaLog.HEARTBEATS, "a");
                beat(raw, KafkaLog.HEARTBEATS, "gone");
                beat(raw, KafkaLog.EVENTS, "old");
                launches.addAll(SentLaunches.poll(agentView));
                Thread.sleep(300); // the nodes' heartbeat cadence
            }
            // Judged by a tick after the window, with every command it sent by then read.
            Ticks.await(c, log, "beats", "a");
            launches.addAll(SentLaunches.allSent(agentView));
            assertTrue(launches.stream()
                    .noneMatch(l -> l.cause().contains("lost") || l.cause().contains("no heartbeat")),
                    "a beating node was taken for lost: " + launches);
            assertFalse(Ticks.decided(c, "beats"), "nothing decided while every node beats: " + launches);

            long silentFrom = System.nanoTime();
            String cause = null;
            while (cause == null && System.nanoTime() - silentFrom < Duration.ofSeconds(40).toNanos()) {
                beat(raw, KafkaLog.HEARTBEATS, "a");
                beat(raw, KafkaLog.EVENTS, "old");
                for (Command.Launch l : SentLaunches.poll(agentView)) {
                    if (!l.cause().equals("start")) {
                        cause = l.cause();
                    }
                }
                Thread.sleep(300);
            }
            double seconds = (System.nanoTime() - silentFrom) / 1e9;
            assertTrue(cause != null && cause.contains("node gone"), "not the silent node's loss: " + cause);
            assertTrue(seconds < TIMEOUT.toSeconds() + 5, "seen after " + seconds + " s: " + cause);
        }
    }

    /**
     * A node's staging progress goes where heartbeats go: folded live (the generation's share read
     * so far, which its forecasts again are made from), never written to the history a restarted
     * coordinator replays (it was 84% of a long job's events).
     */
    @Test
    void stagingProgressIsFoldedLiveAndNeverReplayed() throws Exception {
        long raw = 100L << 20;
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers())) {
            Coordinator c = new Coordinator(log, Clock.systemUTC()).start();
            assertTrue(c.awaitLive(Duration.ofSeconds(30)));
            log.append(new Event.JobStarted("prog", 1, 0, true, tmp.resolve("store").toUri().toString(), "n0"));
            log.send(KafkaLog.COORDINATOR, new Command.RequestCheckpoint("prog"));
            await(() -> c.query(j -> j.get("prog").map(v -> v.nextGeneration() > 0).orElse(false)));
            log.append(new Event.ImageCaptured("prog", 0, 0, "n0", raw, 0.1));
            log.append(new Event.StagingProgress("prog", 0, "n0", raw * 2 / 5, raw, raw / 10, raw / 5));
            await(() -> c.query(j -> read(j, raw) >= 0.4));
            c.close();

            List<String> events = types(log, KafkaLog.EVENTS);
            assertTrue(events.contains("ImageCaptured") && !events.contains("StagingProgress"), events.toString());
            assertTrue(types(log, KafkaLog.HEARTBEATS).contains("StagingProgress"));

            Coordinator again = new Coordinator(log, Clock.systemUTC()).start();
            assertTrue(again.awaitLive(Duration.ofSeconds(30)));
            assertEquals(0.0, again.query(j -> read(j, raw)), "progress is not history: a replay folds none");
            again.close();
        }
    }

    /** The share of generation 0's raw bytes its nodes have reported read, 0 where none. */
    private static double read(Jobs jobs, long raw) {
        GenerationView g = jobs.get("prog").map(v -> v.generations.get(0L)).orElse(null);
        return g == null || g.stagingSoFar == null ? 0 : g.stagingSoFar.readShare(raw);
    }

    /** The event types in {@code topic}, from its start to its end. */
    private static List<String> types(KafkaLog log, String topic) {
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = log.reader(topic, true)) {
            Map<TopicPartition, Long> end = KafkaLog.ends(c);
            while (!KafkaLog.reached(c, end)) {
                c.poll(Duration.ofMillis(200))
                        .forEach(r -> out.add(EventCodec.decode(r.value()).getClass().getSimpleName()));
            }
        }
        return out;
    }

    private static void await(BooleanSupplier cond) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!cond.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "condition not met in 30 s");
            Thread.sleep(50);
        }
    }

    private static void beat(KafkaProducer<byte[], byte[]> p, String topic, String node) throws Exception {
        p.send(new ProducerRecord<>(topic, "beats".getBytes(StandardCharsets.UTF_8),
                EventCodec.encode(new Event.Heartbeat("beats", node)))).get();
    }
}

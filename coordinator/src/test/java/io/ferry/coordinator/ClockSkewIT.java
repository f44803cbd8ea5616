package io.ferry.coordinator;

import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LoopbackLogin;
import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import io.ferry.model.LaunchSpec;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
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

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Liveness on the coordinator's clock. Two nodes send heartbeats as agents whose clocks are a
 * minute fast and a minute slow do: each record carries its sender's time (Kafka's CreateTime,
 * set here explicitly on a real producer to the broker in this JVM, since this test's processes
 * share one clock). Judged by those times, the slow node would look silent at once and the fast
 * one alive a minute after it stopped. Judged by when they arrive, no node is lost while both
 * beat, and the fast one's silence is seen within the timeout and 5 s.
 */
class ClockSkewIT {
    private static final Duration TIMEOUT = Duration.ofSeconds(6);
    private static final long SKEW_MILLIS = 60_000;

    @TempDir
    Path tmp;

    @Test
    void heartbeatsCountWhenTheyArriveNotByTheirSendersClocks() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             KafkaProducer<byte[], byte[]> skewed = new KafkaProducer<>(
                     LoopbackLogin.clientConfig(kafka.bootstrapServers(), Map.of(
                             ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                             ProducerConfig.ACKS_CONFIG, "all")),
                     new ByteArraySerializer(), new ByteArraySerializer());
             KafkaConsumer<byte[], byte[]> agentView = log.reader(KafkaLog.COMMANDS, true);
             Coordinator c = new Coordinator(log, Clock.systemUTC(), TIMEOUT).start()) {
            assertTrue(c.awaitLive(Duration.ofSeconds(30)));
            log.append(new Event.JobStarted("skew", 2, 0, true, tmp.resolve("store").toUri().toString(), "login",
                    "block:fast,slow", LaunchSpec.of(List.of("sim"))));
            List<Command.Launch> launches = new ArrayList<>();

            // Both beat for two timeouts: neither may be taken for lost.
            long until = System.nanoTime() + 2 * TIMEOUT.toNanos();
            while (System.nanoTime() < until) {
                beat(skewed, "fast", +SKEW_MILLIS);
                beat(skewed, "slow", -SKEW_MILLIS);
                launches.addAll(SentLaunches.poll(agentView));
                Thread.sleep(300); // the nodes' heartbeat cadence
            }
            // Judged by a tick after the window, with every command it sent by then read.
            Ticks.await(c, log, "skew", "fast");
            launches.addAll(SentLaunches.allSent(agentView));
            assertTrue(launches.stream()
                    .noneMatch(l -> l.cause().contains("lost") || l.cause().contains("no heartbeat")),
                    "a beating node was taken for lost: " + launches);
            assertFalse(Ticks.decided(c, "skew"), "nothing decided while every node beats: " + launches);

            // The fast node falls silent; the slow one beats on.
            long silentFrom = System.nanoTime();
            String cause = null;
            while (cause == null && System.nanoTime() - silentFrom < Duration.ofSeconds(40).toNanos()) {
                beat(skewed, "slow", -SKEW_MILLIS);
                for (Command.Launch l : SentLaunches.poll(agentView)) {
                    if (l.cause().contains("fast")) {
                        cause = l.cause();
                    }
                }
                Thread.sleep(300);
            }
            double seconds = (System.nanoTime() - silentFrom) / 1e9;
            assertTrue(cause != null && cause.contains("node fast"), "the fast node's silence was never acted on");
            System.out.printf("the fast node's silence acted on after %.1f s (timeout %d s): %s%n", seconds,
                    TIMEOUT.toSeconds(), cause);
            assertTrue(seconds < TIMEOUT.toSeconds() + 5, "seen after " + seconds + " s: " + cause);
        }
    }

    /** A heartbeat of {@code node} stamped with its sender's clock, {@code skewMillis} off this machine's. */
    private static void beat(KafkaProducer<byte[], byte[]> p, String node, long skewMillis) throws Exception {
        p.send(new ProducerRecord<>(KafkaLog.HEARTBEATS, null, System.currentTimeMillis() + skewMillis,
                "skew".getBytes(StandardCharsets.UTF_8), EventCodec.encode(new Event.Heartbeat("skew", node)))).get();
    }
}

package io.ferry.benchmarks;

import io.ferry.coordinator.Coordinator;
import io.ferry.eventlog.EmbeddedAuth;
import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaClientSettings;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LogSettings;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What jobs with owners cost a user's command: the time from a {@code ferry run}'s start event
 * appended until it is in {@code ferry.events}, for a user's login (through its request topic and
 * the coordinator's relay) and for an operator's (written directly, as every login did before
 * owners), interleaved on one embedded broker with Kafka's authorizer on and a live coordinator.
 * Prints the median and 90th percentile of each and their ratio.
 *   java ... io.ferry.benchmarks.RequestRelayBenchmark [SAMPLES] [WORK_DIR]
 */
public final class RequestRelayBenchmark {
    private RequestRelayBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int samples = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        Path work = args.length > 1 ? Path.of(args[1]) : Files.createTempDirectory("ferry-relay");
        Map<String, String> users = Map.of("alice", "alice-password-1", "agents", "agents-password-2");
        EmbeddedAuth auth = new EmbeddedAuth(users, Map.of()).operatedBy(Set.of("agents"));
        System.out.println("load average: " + Machine.loadAverage());
        try (EmbeddedKafka kafka = EmbeddedKafka.start(work.resolve("kafka"),
                EmbeddedKafka.Options.defaults().auth(auth));
             KafkaLog service = new KafkaLog(kafka.bootstrapServers());
             Coordinator coordinator = new Coordinator(service, Clock.systemUTC()).start();
             KafkaLog user = login(kafka, "alice", users);
             KafkaLog operator = login(kafka, "agents", users);
             KafkaConsumer<byte[], byte[]> events = service.reader(KafkaLog.EVENTS, false)) {
            if (!coordinator.awaitLive(Duration.ofSeconds(60))) {
                throw new IllegalStateException("the coordinator did not serve within 60 s");
            }
            double[] relayed = new double[samples];
            double[] direct = new double[samples];
            for (int i = -10; i < samples; i++) { // ten of each first, unmeasured: warm-up
                double r = appendAndAwait(user, events, "u" + (i + 10));
                double d = appendAndAwait(operator, events, "o" + (i + 10));
                if (i >= 0) {
                    relayed[i] = r;
                    direct[i] = d;
                }
            }
            Arrays.sort(relayed);
            Arrays.sort(direct);
            System.out.printf(Locale.ROOT, "%d starts each; append to in ferry.events, ms: user (relayed) median %.1f,"
                            + " p90 %.1f; operator (direct) median %.1f, p90 %.1f; relayed / direct %.2fx (median)%n",
                    samples, pct(relayed, 0.5), pct(relayed, 0.9), pct(direct, 0.5), pct(direct, 0.9),
                    pct(relayed, 0.5) / pct(direct, 0.5));
        }
    }

    /** Appends a start of {@code job} with {@code log} and reads {@code events} until it is there: milliseconds. */
    private static double appendAndAwait(KafkaLog log, KafkaConsumer<byte[], byte[]> events, String job) {
        long t0 = System.nanoTime();
        log.append(new Event.JobStarted(job, 1, 3_600_000, false, "file:///nowhere", "n1"));
        long deadline = t0 + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : events.poll(Duration.ofMillis(5))) {
                if (EventCodec.decode(r.value()) instanceof Event.JobStarted s && s.job().equals(job)) {
                    return (System.nanoTime() - t0) / 1e6;
                }
            }
        }
        throw new IllegalStateException("the start of " + job + " was not in ferry.events within 30 s");
    }

    private static KafkaLog login(EmbeddedKafka kafka, String user, Map<String, String> users) throws Exception {
        return new KafkaLog(kafka.bootstrapServers(), new KafkaClientSettings(Map.of("security.protocol",
                "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + user
                        + "\" password=\"" + users.get(user) + "\";")), LogSettings.EMBEDDED);
    }

    private static double pct(double[] sorted, double q) {
        return sorted[Math.min(sorted.length - 1, (int) Math.floor(q * sorted.length))];
    }
}

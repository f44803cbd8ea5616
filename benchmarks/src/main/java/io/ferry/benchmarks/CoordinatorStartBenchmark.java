package io.ferry.benchmarks;

import io.ferry.coordinator.Coordinator;
import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaClientSettings;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LoopbackLogin;
import io.ferry.eventlog.LogSettings;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import io.ferry.model.LaunchSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * How long a coordinator takes from its start to serving, over the history of a long job on many
 * nodes: the history is simulated (events written straight into an embedded broker's topics, as
 * the agents and the coordinator would have written them), the broker is closed, then started
 * again over the same log, and a real {@link Coordinator} is started on it and timed until it is
 * live (caught up with the log: where `ferry coordinator` prints "serving jobs").
 *
 * <p>The job: {@code nodes} nodes, one rank each, a checkpoint every {@code intervalMinutes};
 * each generation is what the agents and the coordinator append: {@code CheckpointRequested},
 * an {@code ImageCaptured} and an {@code ImageStaged} per rank, ten {@code StagingProgress} per
 * node, {@code SnapshotEstablished}; every node sends a heartbeat every 5 s. {@code layout}
 * says where the heartbeats are: {@code events} (every heartbeat of the history in {@code
 * ferry.events}, as Ferry wrote them before {@code ferry.heartbeats}; the coordinator replays
 * them all), or {@code heartbeats} (in {@code ferry.heartbeats}, only the last
 * {@link KafkaLog#HEARTBEAT_RETENTION}, which is what its retention leaves; never replayed), or
 * {@code live} (the staging progress there too, as agents send it now: the last hour of it).
 *
 * <p>Scaling: the history is {@code hours} long, not 30 days; a replay is linear in the events it
 * folds, so the figure for 30 days is projected, and said as such: the coordinator's start on the
 * same broker before the history was written (joining its group, with nothing to replay) plus
 * the rest of the measured start times 30 days / {@code hours}.
 *
 * <p>Usage: {@code CoordinatorStartBenchmark LAYOUT NODES HOURS INTERVAL_MINUTES WORK_DIR}.
 */
public final class CoordinatorStartBenchmark {
    static final String JOB = "month";
    static final long HEARTBEAT_MILLIS = 5_000;
    static final int PROGRESS_PER_NODE = 10;

    private CoordinatorStartBenchmark() {}

    public static void main(String[] args) throws Exception {
        if (args[0].equals("restart")) {
            restart(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]), Path.of(args[4]),
                    args.length > 5 && args[5].equals("cold"));
            return;
        }
        String layout = args[0];
        if (!List.of("events", "heartbeats", "live").contains(layout)) {
            throw new IllegalArgumentException("layout must be events, heartbeats or live, got " + layout);
        }
        int nodes = Integer.parseInt(args[1]);
        double hours = Double.parseDouble(args[2]);
        long interval = Long.parseLong(args[3]) * 60_000;
        Path work = Path.of(args[4]);
        Files.createDirectories(work);
        Path kafkaDir = work.resolve("kafka-" + layout);

        long end = System.currentTimeMillis();
        long begin = end - (long) (hours * 3_600_000);
        long[] written;
        double empty;
        long w0 = System.nanoTime();
        try (EmbeddedKafka k = EmbeddedKafka.start(kafkaDir);
             KafkaLog log = new KafkaLog(k.bootstrapServers(), KafkaClientSettings.NONE, LogSettings.EMBEDDED)) {
            // What a start costs with nothing to replay (joining the group, the first poll): not scaled below.
            long e0 = System.nanoTime();
            try (Coordinator c = new Coordinator(log, Clock.systemUTC())) {
                c.start();
                if (!c.awaitLive(Duration.ofMinutes(5))) {
                    throw new IllegalStateException("the coordinator did not start on an empty log within 5 minutes");
                }
                empty = (System.nanoTime() - e0) / 1e9;
            }
            w0 = System.nanoTime();
            written = writeHistory(k.bootstrapServers(), log, layout, nodes, begin, end, interval, work);
        }
        double writeSeconds = (System.nanoTime() - w0) / 1e9;
        System.out.printf("layout %s: %d nodes, %.1f h of history, a checkpoint every %d min: wrote %,d records to %s"
                        + " and %,d to %s in %.1f s%n", layout, nodes, hours, interval / 60_000, written[0],
                KafkaLog.EVENTS, written[1], KafkaLog.HEARTBEATS, writeSeconds);

        // The measured start: broker over its log, Ferry's client, the coordinator until it is live.
        long t0 = System.nanoTime();
        try (EmbeddedKafka k = EmbeddedKafka.start(kafkaDir)) {
            long t1 = System.nanoTime();
            try (KafkaLog log = new KafkaLog(k.bootstrapServers(), KafkaClientSettings.NONE, LogSettings.EMBEDDED)) {
                long t2 = System.nanoTime();
                try (Coordinator c = new Coordinator(log, Clock.systemUTC())) {
                    c.start();
                    if (!c.awaitLive(Duration.ofMinutes(30))) {
                        throw new IllegalStateException("the coordinator did not catch up within 30 minutes");
                    }
                    long t3 = System.nanoTime();
                    double replay = (t3 - t2) / 1e9;
                    double total = (t3 - t0) / 1e9;
                    long generations = c.query(j -> j.get(JOB).map(v -> (long) v.generations().size()).orElse(0L));
                    System.out.printf("layout %s: broker start %.2f s, connect %.2f s,"
                                    + " coordinator start to live %.2f s; from start to serving %.2f s"
                                    + " (%,d events folded, %,.0f events/s; %d generations)%n",
                            layout, (t1 - t0) / 1e9, (t2 - t1) / 1e9, replay, total, written[0], written[0] / replay,
                            generations);
                    double days = 30;
                    double scale = days * 24 / hours;
                    double folding = Math.max(0, replay - empty);
                    System.out.printf("layout %s: coordinator start to live on an empty log %.2f s;"
                                    + " folding %,d events took the other %.2f s (%,.0f events/s)%n", layout, empty,
                            written[0], folding, written[0] / Math.max(folding, 1e-3));
                    System.out.printf("layout %s: projected for %.0f days (x%.0f the events, folded at that rate,"
                                    + " plus the empty start): %,.0f events, %.0f s from coordinator start to live%n",
                            layout, days, scale, written[0] * scale, empty + folding * scale);
                    // The replay's end snapshots the folded state when it folded enough: what the next start loads.
                    long w = System.nanoTime();
                    boolean snapshot = awaitSnapshot(log, Duration.ofMinutes(2));
                    System.out.printf("layout %s: %s%n", layout, snapshot
                            ? String.format("snapshot of the folded state written %.1f s after live",
                                    (System.nanoTime() - w) / 1e9)
                            : "no snapshot written (fewer events than the coordinator's snapshot interval)");
                }
            }
        }
    }

    /**
     * A restart over the log a first run left (and its snapshot): {@code tail} more generations
     * are written first, as a coordinator that was down would find them, then the start is timed
     * as in the first run, in this new JVM. Warm (as the first run's measured start, whose JVM had
     * started the broker before): the broker is started and stopped once before the timed start,
     * writing the tail; {@code cold}: the timed start is the JVM's first, as a service's after a crash.
     */
    private static void restart(String layout, int nodes, int tail, Path work, boolean cold) throws Exception {
        Path kafkaDir = work.resolve("kafka-" + layout);
        long tailEvents = 0;
        if (cold && tail > 0) {
            throw new IllegalArgumentException("a cold restart writes no tail (its JVM would start the broker first)");
        }
        if (!cold) {
            try (EmbeddedKafka k = EmbeddedKafka.start(kafkaDir);
                 KafkaLog log = new KafkaLog(k.bootstrapServers(), KafkaClientSettings.NONE, LogSettings.EMBEDDED)) {
                long end = System.currentTimeMillis();
                long[] n = writeTail(k.bootstrapServers(), layout, nodes, tail, end);
                tailEvents = n[0];
            }
        }
        long t0 = System.nanoTime();
        try (EmbeddedKafka k = EmbeddedKafka.start(kafkaDir)) {
            long t1 = System.nanoTime();
            try (KafkaLog log = new KafkaLog(k.bootstrapServers(), KafkaClientSettings.NONE, LogSettings.EMBEDDED);
                 Coordinator c = new Coordinator(log, Clock.systemUTC())) {
                long t2 = System.nanoTime();
                c.start();
                if (!c.awaitLive(Duration.ofMinutes(30))) {
                    throw new IllegalStateException("the coordinator did not catch up within 30 minutes");
                }
                long t3 = System.nanoTime();
                long generations = c.query(j -> j.get(JOB).map(v -> (long) v.generations().size()).orElse(0L));
                System.out.printf("restart %s (%s JVM), %,d events written after the snapshot: broker start %.2f s,"
                                + " connect %.2f s, coordinator start to live %.2f s; from start to serving %.2f s"
                                + " (%,d events folded; %d generations)%n", layout, cold ? "cold" : "warm", tailEvents,
                        (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t3 - t2) / 1e9, (t3 - t0) / 1e9, c.foldedEvents(),
                        generations);
            }
        }
    }

    /** Whether a snapshot index is (or comes) on the snapshots topic within {@code patience}. */
    private static boolean awaitSnapshot(KafkaLog log, Duration patience) {
        long deadline = System.nanoTime() + patience.toNanos();
        try (var c = log.reader(KafkaLog.SNAPSHOTS, true)) {
            while (System.nanoTime() < deadline) {
                for (var r : c.poll(Duration.ofMillis(500))) {
                    String key = r.key() == null ? "" : new String(r.key(), StandardCharsets.UTF_8);
                    if (key.startsWith("events-") && !key.contains("/") && r.value() != null) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** {@code generations} more generations of the job, numbered after any of the history, ending at {@code end}. */
    private static long[] writeTail(String bootstrap, String layout, int nodes, int generations, long end) {
        List<String> names = nodeNames(nodes);
        byte[] key = JOB.getBytes(StandardCharsets.UTF_8);
        long[] count = new long[2];
        try (KafkaProducer<byte[], byte[]> p = producer(bootstrap)) {
            BiConsumer<Long, Event> event = (ts, e) -> {
                p.send(new ProducerRecord<>(KafkaLog.EVENTS, null, ts, key, EventCodec.encode(e)));
                count[0]++;
            };
            BiConsumer<Long, Event> progress = !layout.equals("live") ? event : (ts, e) -> {
                p.send(new ProducerRecord<>(KafkaLog.HEARTBEATS, null, ts, key, EventCodec.encode(e)));
                count[1]++;
            };
            long first = 1_000_000; // above any generation of a history (4,320 in 30 days at one every 10 minutes)
            for (int i = 0; i < generations; i++) {
                generation(event, progress, first + i, end - (generations - i) * 15_000L, names);
            }
            p.flush();
        }
        return count;
    }

    private static List<String> nodeNames(int nodes) {
        List<String> names = new ArrayList<>();
        for (int n = 0; n < nodes; n++) {
            names.add(String.format("n%05d", n));
        }
        return names;
    }

    private static KafkaProducer<byte[], byte[]> producer(String bootstrap) {
        return new KafkaProducer<>(LoopbackLogin.clientConfig(bootstrap,
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                        ProducerConfig.ACKS_CONFIG, "1", ProducerConfig.LINGER_MS_CONFIG, "20",
                        ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(1 << 20),
                        ProducerConfig.BUFFER_MEMORY_CONFIG, Long.toString(256L << 20))),
                new ByteArraySerializer(), new ByteArraySerializer());
    }

    /** Writes the history; returns {records in ferry.events, records in ferry.heartbeats}. */
    private static long[] writeHistory(String bootstrap, KafkaLog log, String layout, int nodes, long begin, long end,
                                       long interval, Path work) throws Exception {
        List<String> names = nodeNames(nodes);
        byte[] key = JOB.getBytes(StandardCharsets.UTF_8);
        long[] count = new long[2];
        try (KafkaProducer<byte[], byte[]> p = producer(bootstrap)) {
            BiConsumer<Long, Event> event = (ts, e) -> {
                p.send(new ProducerRecord<>(KafkaLog.EVENTS, null, ts, key, EventCodec.encode(e)));
                count[0]++;
            };
            event.accept(begin, new Event.JobStarted(JOB, nodes, interval, true,
                    work.resolve("store").toUri().toString(), "login", "block:" + String.join(",", names),
                    LaunchSpec.of(List.of("sim"))));
            byte[][] beats = new byte[nodes][];
            for (int n = 0; n < nodes; n++) {
                beats[n] = EventCodec.encode(new Event.Heartbeat(JOB, names.get(n)));
            }
            String beatTopic = layout.equals("events") ? KafkaLog.EVENTS : KafkaLog.HEARTBEATS;
            long beatsFrom = layout.equals("events") ? begin : end - KafkaLog.HEARTBEAT_RETENTION.toMillis();
            BiConsumer<Long, Event> progress = !layout.equals("live") ? event : (ts, e) -> {
                if (ts >= beatsFrom) { // older progress has expired with the topic's retention
                    p.send(new ProducerRecord<>(KafkaLog.HEARTBEATS, null, ts, key, EventCodec.encode(e)));
                    count[1]++;
                }
            };
            long g = 0;
            long nextCheckpoint = begin + interval;
            for (long t = begin; t < end; t += HEARTBEAT_MILLIS) {
                if (t >= beatsFrom) {
                    for (int n = 0; n < nodes; n++) {
                        p.send(new ProducerRecord<>(beatTopic, null, t + n % HEARTBEAT_MILLIS, key, beats[n]));
                        count[beatTopic.equals(KafkaLog.EVENTS) ? 0 : 1]++;
                    }
                }
                if (t >= nextCheckpoint) {
                    generation(event, progress, g++, t, names);
                    nextCheckpoint += interval;
                }
            }
            p.flush();
        }
        return count;
    }

    /** One generation of the job as its agents and the coordinator append it, all ranks captured and staged. */
    private static void generation(BiConsumer<Long, Event> event, BiConsumer<Long, Event> progress, long g, long t,
                                   List<String> names) {
        int nodes = names.size();
        long raw = ClusterScaleBenchmark.RAW_BYTES;
        event.accept(t, new Event.CheckpointRequested(JOB, g, "interval"));
        for (int n = 0; n < nodes; n++) {
            event.accept(t + 300, new Event.ImageCaptured(JOB, g, n, names.get(n), raw, 0.25));
        }
        for (int i = 1; i <= PROGRESS_PER_NODE; i++) {
            for (int n = 0; n < nodes; n++) {
                long read = raw * i / PROGRESS_PER_NODE;
                long written = ClusterScaleBenchmark.STORED_BYTES * i / PROGRESS_PER_NODE;
                progress.accept(t + 300 + i * 1000L, new Event.StagingProgress(JOB, g, names.get(n), read, raw,
                        read / 3, written));
            }
        }
        for (int n = 0; n < nodes; n++) {
            event.accept(t + 12_000,
                    new Event.ImageStaged(JOB, g, n, "remote", raw, ClusterScaleBenchmark.STORED_BYTES, 10.0));
        }
        event.accept(t + 12_500, new Event.SnapshotEstablished(JOB, g, "remote", 12.5));
    }
}

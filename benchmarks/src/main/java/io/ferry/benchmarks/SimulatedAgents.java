package io.ferry.benchmarks;

import io.ferry.compression.Digests;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LoopbackLogin;
import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import io.ferry.model.ImageRef;
import io.ferry.model.Manifest;
import io.ferry.model.ManifestCodec;
import io.ferry.staging.Repository;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongFunction;

import static io.ferry.benchmarks.ClusterScaleBenchmark.AGENTS_WRITE_MANIFESTS;
import static io.ferry.benchmarks.ClusterScaleBenchmark.HEARTBEAT_MILLIS;
import static io.ferry.benchmarks.ClusterScaleBenchmark.JOB;
import static io.ferry.benchmarks.ClusterScaleBenchmark.MANIFEST_IN_EVENT;
import static io.ferry.benchmarks.ClusterScaleBenchmark.RAW_BYTES;
import static io.ferry.benchmarks.ClusterScaleBenchmark.STORED_BYTES;

/**
 * The simulated agents of {@link ClusterScaleBenchmark}: the agents of a set of nodes, on one
 * thread with one producer (acks=all, idempotent, batched, asynchronous). Each node answers
 * every {@link Command.Capture} with one {@link Event.ImageCaptured} per rank, then, rank after
 * rank, {@link Event.ImageStaged} (with its manifest's digest, as agents send it, unless
 * {@code -Dscale.manifestInEvent=false}), and sends a heartbeat every
 * {@code -Dscale.heartbeatMillis} (to {@code ferry.heartbeats}). The events are written as {@link EventCodec}
 * writes them ({@link #checkEncodings} checks it at start), kept cheap: they stand in for thousands of
 * processes elsewhere.
 */
final class SimulatedAgents {

    private final KafkaLog log;
    private final List<Integer> mine;
    private final Path store;
    private final List<String> nodeNames;
    private final int perNode;
    private final LongFunction<ClusterScaleBenchmark.GenStats> stats;
    private final AtomicLong heartbeats;
    private final BooleanSupplier running;
    private final KafkaProducer<byte[], byte[]> producer;
    private final Set<String> names = new HashSet<>();
    private final ArrayDeque<Long> captures = new ArrayDeque<>();
    private final Map<Long, Integer> captureCommands = new HashMap<>();
    private final byte[] key = JOB.getBytes(StandardCharsets.UTF_8);

    SimulatedAgents(KafkaLog log, String bootstrap, List<Integer> mine, List<String> nodeNames, int perNode, Path store,
                    LongFunction<ClusterScaleBenchmark.GenStats> stats, AtomicLong heartbeats,
                    BooleanSupplier running) {
        this.log = log;
        this.mine = mine;
        this.nodeNames = nodeNames;
        this.perNode = perNode;
        this.store = store;
        this.stats = stats;
        this.heartbeats = heartbeats;
        this.running = running;
        mine.forEach(n -> names.add(nodeNames.get(n)));
        this.producer = new KafkaProducer<>(LoopbackLogin.clientConfig(bootstrap,
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
                ProducerConfig.LINGER_MS_CONFIG, "5", ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(256 << 10),
                ProducerConfig.BUFFER_MEMORY_CONFIG, Long.toString(64L << 20),
                ProducerConfig.MAX_BLOCK_MS_CONFIG, "600000")),
                new ByteArraySerializer(), new ByteArraySerializer());
    }

    /** Answers capture commands and beats until told to stop; on the caller's thread. */
    void run() {
        try (KafkaConsumer<byte[], byte[]> commands = log.reader(KafkaLog.COMMANDS, false); producer) {
            long nextHeartbeat = 0;
            while (running.getAsBoolean()) {
                for (ConsumerRecord<byte[], byte[]> r : commands.poll(Duration.ofMillis(50))) {
                    String node = new String(r.key(), StandardCharsets.UTF_8);
                    if (!names.contains(node)) {
                        continue;
                    }
                    Command c = EventCodec.decodeCommand(r.value());
                    if (c instanceof Command.Capture cap) {
                        // every node of this thread gets the same command; answer once all have it
                        int n = captureCommands.merge(cap.generation(), 1, Integer::sum);
                        if (n == mine.size()) {
                            captures.add(cap.generation());
                        }
                    }
                }
                long now = System.currentTimeMillis();
                if (now >= nextHeartbeat) {
                    for (int n : mine) {
                        send(KafkaLog.HEARTBEATS, now, heartbeat(nodeNames.get(n)));
                        heartbeats.incrementAndGet();
                    }
                    nextHeartbeat = now + HEARTBEAT_MILLIS;
                }
                Long g = captures.poll();
                if (g != null) {
                    answer(g);
                }
            }
        } catch (Exception e) {
            e.printStackTrace();
        }
    }

    /** Every node of this thread captures all its ranks, then stages them one after another. */
    private void answer(long g) throws IOException {
        ClusterScaleBenchmark.GenStats s = stats.apply(g);
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        Path dir = store.resolve(Repository.manifestKey(new ImageRef(JOB, g, 0))).getParent();
        Files.createDirectories(dir);
        for (int n : mine) {
            String node = nodeNames.get(n);
            for (int r = n * perNode; r < (n + 1) * perNode; r++) {
                long ts = System.currentTimeMillis();
                send(ts, captured(g, r, node, 0.2 + 0.05 * rnd.nextDouble()));
                s.firstAppend.accumulate(ts);
                s.lastAppend.accumulate(ts);
                s.appended.increment();
            }
        }
        for (int n : mine) {
            for (int r = n * perNode; r < (n + 1) * perNode; r++) {
                if (AGENTS_WRITE_MANIFESTS) {
                    Files.write(dir.resolve(r + ".manifest"), manifest(g, r));
                }
                long ts = System.currentTimeMillis();
                send(ts, staged(g, r, 0.01 + 0.01 * rnd.nextDouble(),
                        MANIFEST_IN_EVENT ? Digests.sha256Hex(manifest(g, r)) : ""));
                s.lastAppend.accumulate(ts);
                s.lastStaged.accumulate(ts);
                s.appended.increment();
                s.staged.increment();
            }
            if (!running.getAsBoolean()) {
                return;
            }
        }
        producer.flush();
    }

    private void send(long ts, byte[] value) {
        send(KafkaLog.EVENTS, ts, value);
    }

    /** Heartbeats go to their own topic, as {@link KafkaLog#append} routes an agent's. */
    private void send(String topic, long ts, byte[] value) {
        producer.send(new ProducerRecord<>(topic, null, ts, key, value), (md, e) -> {
            if (e != null) {
                System.err.println("append failed: " + e);
            }
        });
    }

    /** The manifest the benchmark writes for a rank (empty: byte counts are fake). */
    static byte[] manifest(long g, int rank) {
        return ManifestCodec.encode(new Manifest(new ImageRef(JOB, g, rank), 4 << 20, List.of()));
    }

    // The agents' events, written as EventCodec writes them (checked against it at start): the
    // simulated agents stand in for thousands of processes elsewhere, so they are kept cheap here.
    static byte[] captured(long g, int rank, String node, double seconds) {
        return ("{\"job\":\"" + JOB + "\",\"generation\":" + g + ",\"rank\":" + rank + ",\"node\":\"" + node
                + "\",\"bytes\":" + RAW_BYTES + ",\"seconds\":" + seconds
                + ",\"expectedWrittenBytes\":-1,\"type\":\"ImageCaptured\",\"v\":1}")
                .getBytes(StandardCharsets.UTF_8);
    }

    static byte[] staged(long g, int rank, double seconds, String manifest) {
        return ("{\"job\":\"" + JOB + "\",\"generation\":" + g + ",\"rank\":" + rank + ",\"tier\":\"remote\""
                + ",\"rawBytes\":" + RAW_BYTES + ",\"storedBytes\":" + STORED_BYTES + ",\"seconds\":" + seconds
                + ",\"manifest\":\"" + manifest + "\",\"type\":\"ImageStaged\",\"v\":1}")
                .getBytes(StandardCharsets.UTF_8);
    }

    static byte[] heartbeat(String node) {
        return ("{\"job\":\"" + JOB + "\",\"node\":\"" + node + "\",\"type\":\"Heartbeat\",\"v\":1}")
                .getBytes(StandardCharsets.UTF_8);
    }

    static void checkEncodings() {
        check(captured(3, 17, "n00001", 0.2345), EventCodec.encode(
                new Event.ImageCaptured(JOB, 3, 17, "n00001", RAW_BYTES, 0.2345)));
        String digest = Digests.sha256Hex(manifest(3, 17));
        check(staged(3, 17, 0.0125, digest), EventCodec.encode(
                new Event.ImageStaged(JOB, 3, 17, "remote", RAW_BYTES, STORED_BYTES, 0.0125, digest)));
        check(staged(3, 17, 0.0125, ""), EventCodec.encode(
                new Event.ImageStaged(JOB, 3, 17, "remote", RAW_BYTES, STORED_BYTES, 0.0125)));
        check(heartbeat("n00001"), EventCodec.encode(new Event.Heartbeat(JOB, "n00001")));
    }

    private static void check(byte[] ours, byte[] codec) {
        if (!Arrays.equals(ours, codec)) {
            throw new AssertionError("simulated encoding differs: " + new String(ours, StandardCharsets.UTF_8)
                    + " vs " + new String(codec, StandardCharsets.UTF_8));
        }
    }
}

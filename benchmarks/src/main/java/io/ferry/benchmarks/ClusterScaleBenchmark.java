package io.ferry.benchmarks;

import io.ferry.coordinator.Coordinator;
import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.coordinator.Jobs;
import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LogReplay;
import io.ferry.model.Command;
import io.ferry.model.DaemonThreads;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import io.ferry.model.ImageRef;
import io.ferry.model.LaunchSpec;
import io.ferry.staging.Repository;
import io.ferry.staging.internal.FileTrees;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.ref.Reference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;

/**
 * The real coordinator, through a real (embedded, single-node KRaft) broker, driven by
 * simulated agents: a few threads, each with its own Kafka producer (acks=all, idempotent,
 * batched, asynchronous), stand in for the agents of thousands of nodes. Each simulated node
 * answers every {@link Command.Capture} of its own with one {@link Event.ImageCaptured} per
 * rank, then, rank after rank, {@link Event.ImageStaged}; every node sends a heartbeat on an
 * interval ({@link SimulatedAgents}). Each rank's manifest is real, in the job's {@code file:}
 * store (each ImageStaged carries its digest, as agents send it; with
 * {@code -Dscale.manifestInEvent=false} the coordinator reads them all to write the commit marker): written before
 * the generation is requested
 * (thousands of agents write them on their own nodes, not on the benchmark's cores), or by
 * the simulated agents just before each ImageStaged with {@code -Dscale.agentsWriteManifests=true}.
 * Byte counts are fake and small: this measures the coordinator, not staging. The first
 * generations ({@code -Dscale.warmUp=N}, default 1) warm the JIT compilers and are printed, not counted.
 *
 * <p>Measured per generation: events appended and their rate (first to last append, by log
 * time), the rate at which the coordinator folded them (its own event listener, first to last
 * event of the generation), and the delay from the last {@code ImageStaged} (log time) to
 * {@code SnapshotEstablished} (log time). After the run: the heap the coordinator holds for the
 * job (used heap after full GCs with the coordinator and its folded state alive, minus the same
 * after it is closed and dropped; everything it retains is counted: its state, its Kafka
 * consumers' buffers, its opened store), and a replay: a fresh coordinator folding the whole
 * log from the beginning, timed to live.
 *
 * <p>Usage: {@code ClusterScaleBenchmark RANKS_PER_NODE NODES [GENERATIONS] [WORK_DIR]}.
 */
public final class ClusterScaleBenchmark {
    static final String JOB = "scale";
    static final long RAW_BYTES = 1 << 20;
    static final long STORED_BYTES = 300_000;
    static final long HEARTBEAT_MILLIS = Long.getLong("scale.heartbeatMillis", 5000);
    static final int AGENT_THREADS = Integer.getInteger("scale.agentThreads", 4);
    static final int WARM_UP = Integer.getInteger("scale.warmUp", 1);
    static final boolean AGENTS_WRITE_MANIFESTS = Boolean.getBoolean("scale.agentsWriteManifests");
    /**
     * Whether each ImageStaged carries its manifest's digest (as agents send it); false: the coordinator
     * reads every manifest.
     */
    static final boolean MANIFEST_IN_EVENT = Boolean.parseBoolean(System.getProperty("scale.manifestInEvent", "true"));
    static final long GENERATION_TIMEOUT_MILLIS = Long.getLong("scale.generationTimeoutSeconds", 1800) * 1000;

    public static void main(String[] args) throws Exception {
        int perNode = args.length > 0 ? Integer.parseInt(args[0]) : 16;
        int nodes = args.length > 1 ? Integer.parseInt(args[1]) : 2048;
        int generations = args.length > 2 ? Integer.parseInt(args[2]) : 8;
        Path work = args.length > 3 ? Path.of(args[3]) : Files.createTempDirectory("ferry-scale");
        Files.createDirectories(work);
        SimulatedAgents.checkEncodings();
        ScaleResult.Result r = new ClusterScaleBenchmark(perNode, nodes, generations, work).run();
        r.print();
        // the work dir is left to the caller (run-scale.sh: rm -rf, much faster than a walk here)
        System.exit(0); // the broker's and Kafka clients' threads
    }

    private final int perNode;
    private final int nodes;
    private final int ranks;
    private final int generations;
    private final Path work;
    private final List<String> nodeNames = new ArrayList<>();

    ClusterScaleBenchmark(int perNode, int nodes, int generations, Path work) {
        this.perNode = perNode;
        this.nodes = nodes;
        this.ranks = perNode * nodes;
        this.generations = generations;
        this.work = work;
        for (int i = 0; i < nodes; i++) {
            nodeNames.add(String.format("n%05d", i));
        }
    }

    /** What one generation's agents did, by log (record) time. */
    static final class GenStats {
        final LongAccumulator firstAppend = new LongAccumulator(Math::min, Long.MAX_VALUE);
        final LongAccumulator lastAppend = new LongAccumulator(Math::max, 0);
        final LongAccumulator lastStaged = new LongAccumulator(Math::max, 0);
        final LongAdder appended = new LongAdder();
        final LongAdder staged = new LongAdder();
        // the coordinator's fold, by its listener (nanoTime)
        final LongAccumulator firstFold = new LongAccumulator(Math::min, Long.MAX_VALUE);
        final LongAccumulator lastFold = new LongAccumulator(Math::max, 0);
        final LongAdder folded = new LongAdder();
        final LongAccumulator lastStagedFoldWall = new LongAccumulator(Math::max, 0);
        volatile long requestedAt;
        volatile long establishedAt;
    }

    private final Map<Long, GenStats> stats = new ConcurrentHashMap<>();
    private final AtomicLong heartbeats = new AtomicLong();
    private volatile boolean agentsRunning = true;

    GenStats stats(long g) {
        return stats.computeIfAbsent(g, x -> new GenStats());
    }

    ScaleResult.Result run() throws Exception {
        Path store = work.resolve("store");
        Files.createDirectories(store);
        System.out.printf("work dir %s; %d nodes x %d ranks = %,d ranks; %d agent threads; heartbeat every %d ms; %s%n",
                work, nodes, perNode, ranks, AGENT_THREADS, HEARTBEAT_MILLIS, MANIFEST_IN_EVENT
                        ? "each ImageStaged carries its manifest's digest"
                        : "the coordinator reads every manifest (-Dscale.manifestInEvent=false)");
        try (EmbeddedKafka kafka = EmbeddedKafka.start(work.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers())) {
            long heapBefore = Machine.usedHeapAfterGc();
            // Generous: a coordinator that falls behind the log would otherwise take old heartbeats for silence.
            Coordinator coordinator = new Coordinator(log, Clock.systemUTC(), Duration.ofHours(1));
            Coordinator[] live = {coordinator}; // dropped before the heap is measured
            coordinator.onEvent(this::folded);
            coordinator.start();
            if (!coordinator.awaitLive(Duration.ofSeconds(60))) {
                throw new IllegalStateException("coordinator not live");
            }
            List<Thread> agents = new ArrayList<>();
            for (int t = 0; t < AGENT_THREADS; t++) {
                List<Integer> mine = new ArrayList<>();
                for (int n = t; n < nodes; n += AGENT_THREADS) {
                    mine.add(n);
                }
                SimulatedAgents a = new SimulatedAgents(log, kafka.bootstrapServers(), mine, nodeNames, perNode, store,
                        this::stats, heartbeats, () -> agentsRunning);
                Thread th = DaemonThreads.start("sim-agents-" + t, a::run);
                agents.add(th);
            }
            Observer observer = new Observer(log);
            Thread obs = DaemonThreads.start("observer", observer::run);
            Thread.sleep(1000); // the agents' command readers are positioned
            long t0 = System.nanoTime();
            log.append(new Event.JobStarted(JOB, ranks, 0, false, store.toUri().toString(), "login",
                    "block:" + String.join(",", nodeNames), LaunchSpec.of(List.of("true"))));
            // wait until the coordinator has launched the job on every node (it sends one command per node)
            awaitFor("job known", () -> live[0].query(j -> j.get(JOB).map(v -> v.ranks() == ranks).orElse(false)),
                    600_000);
            Thread.sleep(2000);
            System.out.printf("job started and launched in %.1f s%n", (System.nanoTime() - t0) / 1e9);
            List<ScaleResult.GenRow> rows = new ArrayList<>();
            long coordinatorThread = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().equals("ferry-coordinator")).findFirst().orElseThrow().getId();
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            for (long g = 0; g < generations; g++) {
                long tw = System.nanoTime();
                writeManifests(store, g); // what thousands of agents do on their own nodes: not on these 2 cores
                System.out.printf("generation %d: %,d manifests written beforehand in %.1f s%n", g, ranks,
                        (System.nanoTime() - tw) / 1e9);
                Thread.sleep(500);
                long before = heartbeats.get();
                long cpu0 = threads.getThreadCpuTime(coordinatorThread);
                long tg = System.nanoTime();
                log.send(KafkaLog.COORDINATOR, new Command.RequestCheckpoint(JOB));
                GenStats s = stats(g);
                long gen = g;
                boolean done = awaitFor("generation " + g + " established", () -> s.establishedAt > 0,
                        GENERATION_TIMEOUT_MILLIS);
                if (!done) {
                    System.out.printf("generation %d NOT established within %d s: %,d of %,d events folded; stopping%n",
                            g, GENERATION_TIMEOUT_MILLIS / 1000, s.folded.sum(), 2L * ranks);
                    printPartial(s, g);
                    break;
                }
                long hb = heartbeats.get() - before;
                long cpuNanos = threads.getThreadCpuTime(coordinatorThread) - cpu0;
                double appendS = (s.lastAppend.get() - s.firstAppend.get()) / 1000.0;
                double foldS = (s.lastFold.get() - s.firstFold.get()) / 1e9;
                long ev = s.appended.sum();
                ScaleResult.GenRow row = new ScaleResult.GenRow(g, ev, appendS, ev / appendS, foldS,
                        s.folded.sum() / foldS,
                        (s.establishedAt - s.lastStaged.get()) / 1000.0, (s.establishedAt - s.requestedAt) / 1000.0, hb,
                        (s.lastStagedFoldWall.get() - s.lastStaged.get()) / 1000.0, cpuNanos / 1000.0 / (ev + hb),
                        g < WARM_UP);
                rows.add(row);
                System.out.printf("generation %d: %,d events appended in %.2f s, folded at %,.0f/s,"
                        + " staged->established %.3f s,"
                        + " request->established %.2f s (wall %.1f s)%n", gen, ev, appendS, row.foldRate(),
                        row.delaySeconds(), row.requestToEstablished(), (System.nanoTime() - tg) / 1e9);
                if (g == generations - 1) {
                    printMarkerRead(store, g, ranks);
                }
                if (g >= 2 && g < generations - 1) {
                    FileTrees.delete(store.resolve("ferry/v1/jobs/" + JOB + "/" + (g - 2))); // keeps the disk in bounds
                }
            }
            GenerationView last = coordinator.query(j -> j.get(JOB).flatMap(JobView::newestEstablished).orElse(null));
            System.out.println("coordinator's newest established: " + (last == null ? "none" : last.generation()));
            agentsRunning = false;
            for (Thread t : agents) {
                t.join(30_000);
            }
            observer.stop = true;
            obs.join(10_000);
            long withState = Machine.usedHeapAfterGc();
            coordinator.close();
            coordinator = null;
            live[0] = null;
            long without = Machine.usedHeapAfterGc();
            long heap = withState - without;
            System.out.printf("heap: %,d before the coordinator, %,d with it and its state, %,d after it was closed%n",
                    heapBefore, withState, without);

            // The folded state alone, measured without anything else moving: the log folded into a Jobs here.
            // Small states are below the heap's noise (the broker and clients allocate meanwhile): fold
            // several copies side by side, so that the difference is well above it, and divide.
            int copies = Math.max(1, 262_144 / ranks);
            long foldBase = Machine.usedHeapAfterGc();
            Jobs[] folded = new Jobs[copies];
            for (int k = 0; k < copies; k++) {
                folded[k] = new Jobs();
            }
            try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.EVENTS, true)) {
                LogReplay.records(c, LogReplay.NO_LIMIT, r -> {
                    for (Jobs f : folded) { // each copy its own events, as a coordinator has
                        f.apply(EventCodec.decode(r.value()), r.timestamp());
                    }
                });
            }
            long stateBytes = (Machine.usedHeapAfterGc() - foldBase) / copies;
            System.out.printf("folded state (Jobs) alone: %,d bytes = %.1f bytes per rank"
                    + " (%d generations; mean of %d copies)%n", stateBytes,
                    (double) stateBytes / ranks, folded[0].get(JOB).map(v -> v.generations().size()).orElse(0), copies);
            Reference.reachabilityFence(folded);

            // Replay: a fresh coordinator folds the whole log from its beginning.
            long replayEvents;
            try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.EVENTS, true)) {
                replayEvents = KafkaLog.ends(c).values().stream().mapToLong(Long::longValue).sum();
            }
            long replayBase = Machine.usedHeapAfterGc();
            Coordinator replay = new Coordinator(log, Clock.systemUTC(), Duration.ofHours(1));
            long tr = System.nanoTime();
            replay.start();
            if (!replay.awaitLive(Duration.ofHours(2))) {
                throw new IllegalStateException("replay did not finish");
            }
            double replayS = (System.nanoTime() - tr) / 1e9;
            long replayHeap = Machine.usedHeapAfterGc() - replayBase;
            Long established = replay.query(j -> j.get(JOB).flatMap(JobView::newestEstablished)
                    .map(GenerationView::generation).orElse(-1L));
            System.out.printf("replay: %,d events to live in %.1f s; newest established %d%n", replayEvents, replayS,
                    established);
            replay.close();
            if (rows.isEmpty()) {
                throw new IllegalStateException("no generation was established");
            }
            return new ScaleResult.Result(perNode, nodes, ranks, rows, heap, stateBytes, replayS, replayEvents,
                    replayHeap, Runtime.getRuntime().availableProcessors(), Machine.loadAverage(),
                    Runtime.getRuntime().maxMemory());
        }
    }

    private void printPartial(GenStats s, long g) {
        double foldS = (s.lastFold.get() - s.firstFold.get()) / 1e9;
        System.out.printf("  partial: %,d appended, %,d folded in %.1f s = %,.0f events/s%n", s.appended.sum(),
                s.folded.sum(), foldS, s.folded.sum() / foldS);
    }

    /** The coordinator's listener: called on its thread after each live event is folded. */
    private void folded(Event e) {
        long g;
        if (e instanceof Event.ImageCaptured c) {
            g = c.generation();
        } else if (e instanceof Event.ImageStaged s) {
            g = s.generation();
        } else {
            return;
        }
        GenStats s = stats(g);
        long now = System.nanoTime();
        s.firstFold.accumulate(now);
        s.lastFold.accumulate(now);
        s.folded.increment();
        if (e instanceof Event.ImageStaged) {
            s.lastStagedFoldWall.accumulate(System.currentTimeMillis());
        }
    }

    /** Reads the events topic for the coordinator's own events: when each generation was requested and established. */
    private final class Observer {
        private final KafkaLog log;
        volatile boolean stop;
        private static final byte[] REQUESTED = "\"type\":\"CheckpointRequested\"".getBytes(StandardCharsets.UTF_8);
        private static final byte[] ESTABLISHED = "\"type\":\"SnapshotEstablished\"".getBytes(StandardCharsets.UTF_8);

        Observer(KafkaLog log) {
            this.log = log;
        }

        void run() {
            try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.EVENTS, true)) {
                while (!stop) {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) {
                        byte[] v = r.value();
                        if (contains(v, REQUESTED)) {
                            Event.CheckpointRequested q = (Event.CheckpointRequested) EventCodec.decode(v);
                            stats(q.generation()).requestedAt = r.timestamp();
                        } else if (contains(v, ESTABLISHED)) {
                            Event.SnapshotEstablished q = (Event.SnapshotEstablished) EventCodec.decode(v);
                            stats(q.generation()).establishedAt = r.timestamp();
                        }
                    }
                }
            }
        }
    }

    static boolean contains(byte[] hay, byte[] needle) {
        // the type is written last: look from the end
        outer:
        for (int i = hay.length - needle.length; i >= 0; i--) {
            for (int k = 0; k < needle.length; k++) {
                if (hay[i + k] != needle[k]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    /** Every rank's manifest of generation {@code g}, written (not fsynced) with a few threads. */
    /** What one rank's restart reads of the commit marker (its head and its rank's shard), against the whole marker. */
    private static void printMarkerRead(Path store, long g, int ranks) throws IOException {
        Path head = store.resolve(Repository.markerKey(JOB, g));
        long whole = Files.size(head);
        long shard = 0;
        for (int i = 0; Files.exists(store.resolve(Repository.markerShardKey(JOB, g, i))); i++) {
            long n = Files.size(store.resolve(Repository.markerShardKey(JOB, g, i)));
            shard = Math.max(shard, n);
            whole += n;
        }
        try (Store st = Stores.open(store.toUri(), Map.of())) {
            long t = System.nanoTime();
            String d = new Repository(st, Clock.systemUTC()).committed(JOB, g).orElseThrow().manifestSha256(ranks - 1);
            System.out.printf("commit marker of generation %d: %,d B in all; one rank's digest (%s...) read in %.1f ms"
                    + " from the head (%,d B) and its shard (%,d B)%n", g, whole, d.substring(0, 8),
                    (System.nanoTime() - t) / 1e6, Files.size(head), shard);
        }
    }

    void writeManifests(Path store, long g) throws Exception {
        if (AGENTS_WRITE_MANIFESTS) {
            return;
        }
        Path dir = store.resolve(Repository.manifestKey(new ImageRef(JOB, g, 0))).getParent();
        Files.createDirectories(dir);
        IntStream.range(0, ranks).parallel().forEach(r -> {
            try {
                Files.write(dir.resolve(r + ".manifest"), SimulatedAgents.manifest(g, r));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    static boolean awaitFor(String what, BooleanSupplier cond, long timeoutMillis)
            throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (!cond.getAsBoolean()) {
            if (System.currentTimeMillis() > deadline) {
                return false;
            }
            Thread.sleep(5);
        }
        return true;
    }
}

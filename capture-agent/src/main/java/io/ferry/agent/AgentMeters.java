package io.ferry.agent;

import io.ferry.model.Event;
import io.ferry.staging.OpenedStore;
import io.ferry.stores.StoreHealth;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToDoubleFunction;

/**
 * A node agent's Micrometer meters: raw and stored bytes per tier and capture and staging
 * histograms (from the events the agent reports), objects, bytes, retries and the circuit of
 * each job's store (read from the store when scraped), and the node cache's occupancy (from
 * the agent's cache reports). Byte counters and histograms carry no job label (a long-lived
 * agent serves an unbounded number of jobs); the store and per-job cache meters carry one and
 * are removed when the job leaves the node. Thread-safe.
 */
public final class AgentMeters {
    /** Histogram buckets in seconds; the coordinator's {@code CoordinatorMeters} uses the same, so panels line up. */
    static final double[] SECONDS_BUCKETS = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
            600, 1800, 3600};

    private final MeterRegistry registry;
    private final Timer capture;
    private final Timer staging;
    private final Map<String, Counter> bytes = new ConcurrentHashMap<>();
    private final AtomicLong cacheCapacity = new AtomicLong();
    private final AtomicLong cacheFree = new AtomicLong();
    /** The meters of each job on this node (store, cache), removed with it. */
    private final Map<String, List<Meter>> perJob = new ConcurrentHashMap<>();
    private final Map<String, long[]> cacheOfJob = new ConcurrentHashMap<>();

    public AgentMeters(MeterRegistry registry) {
        this.registry = registry;
        this.capture = histogram("ferry.agent.capture", "Rank images captured on this node: the rank's stall.");
        this.staging = histogram("ferry.agent.staging",
                "Rank images staged from this node to the store: time to push.");
        for (String tier : new String[]{"local", "partner", "remote"}) {
            bytes("raw", tier);
            bytes("stored", tier);
        }
        Gauge.builder("ferry.agent.cache.capacity", cacheCapacity, AtomicLong::get).baseUnit("bytes")
                .description("Size of the file system holding this node's cache (as last reported).")
                .register(registry);
        Gauge.builder("ferry.agent.cache.free", cacheFree, AtomicLong::get).baseUnit("bytes")
                .description("Bytes still usable on the file system holding this node's cache (as last reported).")
                .register(registry);
    }

    /** Observes an event this node's agent reports. */
    void observe(Event e) {
        if (e instanceof Event.ImageCaptured c) {
            capture.record(seconds(c.seconds()));
            bytes("raw", "local").increment(c.bytes());
            bytes("stored", "local").increment(c.bytes()); // the cache holds images as captured
        } else if (e instanceof Event.PartnerCopied p) {
            bytes("raw", "partner").increment(p.bytes());
            bytes("stored", "partner").increment(p.bytes());
        } else if (e instanceof Event.ImageStaged s) {
            staging.record(seconds(s.seconds()));
            bytes("raw", s.tier()).increment(s.rawBytes());
            bytes("stored", s.tier()).increment(s.storedBytes());
        } else if (e instanceof Event.CacheReported c) {
            cacheCapacity.set(c.capacityBytes());
            cacheFree.set(c.freeBytes());
            long[] held = cacheOfJob.computeIfAbsent(c.job(), job -> {
                long[] h = new long[2];
                Tags tags = Tags.of("job", job);
                add(job, Gauge.builder("ferry.agent.cache.job", h, a -> a[0]).baseUnit("bytes").tags(tags)
                        .description("Bytes the job's generations take in this node's cache.").register(registry));
                add(job, Gauge.builder("ferry.agent.cache.generations", h, a -> a[1]).tags(tags)
                        .description("Generations of the job this node's cache holds.").register(registry));
                return h;
            });
            held[0] = c.jobBytes();
            held[1] = c.generations();
        }
    }

    /**
     * A job's cache usage after a removal by the reclaimer (the job does not run here): the gauges
     * follow it, and go once the job holds nothing here, as they would with the job.
     */
    void reclaimed(Event.CacheReported c) {
        observe(c);
        if (c.jobBytes() == 0 && c.generations() == 0) {
            closed(c.job());
        }
    }

    /** The job's store, opened on this node: its meters read it until {@link #closed(String)}. */
    void opened(String job, OpenedStore store) {
        closed(job);
        Tags tags = Tags.of("job", job, "store", store.store().uri().toString());
        counter(job, "ferry.agent.store.objects.written", null, tags, store, s -> s.stats().objectsWritten(),
                "Objects written to the store (chunks, packs, manifests), each once however many tries it took.");
        counter(job, "ferry.agent.store.written", "bytes", tags, store, s -> s.stats().bytesWritten(),
                "Bytes of the objects written to the store.");
        counter(job, "ferry.agent.store.objects.read", null, tags, store, s -> s.stats().objectsRead(),
                "Objects (or ranges of them) read from the store: restores, checks.");
        counter(job, "ferry.agent.store.read", "bytes", tags, store, s -> s.stats().bytesRead(),
                "Bytes read from the store.");
        if (!store.store().health().equals(StoreHealth.NONE)) { // a remote store, behind retries and a breaker
            counter(job, "ferry.agent.store.retries", null, tags, store, s -> s.store().health().retries(),
                    "Tries after the first of the store's calls.");
            counter(job, "ferry.agent.store.failed.calls", null, tags, store, s -> s.store().health().failed(),
                    "Store calls that failed after their last try.");
            counter(job, "ferry.agent.store.rejected.calls", null, tags, store, s -> s.store().health().rejected(),
                    "Store calls refused untried while the circuit was open.");
            add(job, Gauge.builder("ferry.agent.store.circuit", store, s -> circuit(s.store().health().circuit()))
                    .tags(tags)
                    .description("The store's circuit breaker: 0 closed, 1 half-open (probing), 2 open (down).")
                    .strongReference(true).register(registry));
        }
    }

    /** The job left this node (or its store was reopened): its store and cache meters go. */
    void closed(String job) {
        List<Meter> gone = perJob.remove(job);
        if (gone != null) {
            gone.forEach(registry::remove);
        }
        cacheOfJob.remove(job);
    }

    /** 0 closed, 1 half-open, 2 open; Resilience4j's forced and disabled states count as open and closed. */
    static double circuit(String state) {
        return switch (state) {
            case "HALF_OPEN" -> 1;
            case "OPEN", "FORCED_OPEN" -> 2;
            default -> 0;
        };
    }

    private void counter(String job, String name, String unit, Tags tags, OpenedStore store,
                         ToDoubleFunction<OpenedStore> value, String help) {
        // Micrometer holds the store weakly: the job's JobOnNode holds it while it is open, and closed() removes these.
        add(job, FunctionCounter.builder(name, store, value).baseUnit(unit).tags(tags).description(help)
                .register(registry));
    }

    private void add(String job, Meter m) {
        perJob.computeIfAbsent(job, j -> new CopyOnWriteArrayList<>()).add(m);
    }

    private Timer histogram(String name, String help) {
        List<Duration> slos = new ArrayList<>();
        for (double s : SECONDS_BUCKETS) {
            slos.add(seconds(s));
        }
        return Timer.builder(name).description(help).serviceLevelObjectives(slos.toArray(Duration[]::new))
                .register(registry);
    }

    private Counter bytes(String kind, String tier) {
        return bytes.computeIfAbsent(kind + "/" + tier, k -> Counter.builder("ferry.agent." + kind).baseUnit("bytes")
                .tag("tier", tier)
                .description(kind.equals("raw")
                        ? "Bytes of this node's rank images as captured, by the tier they reached."
                        : "Bytes the tier holds of those images (compressed and deduplicated on the store).")
                .register(registry));
    }

    private static Duration seconds(double s) {
        return Double.isFinite(s) && s > 0 ? Duration.ofNanos((long) (s * 1e9)) : Duration.ZERO;
    }
}

package io.ferry.coordinator;

import io.ferry.model.Event;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** What the log says about one job. Mutable, owned by {@link Jobs}; not thread-safe. */
public final class JobView {
    final String job;
    Event.JobStarted started;
    final TreeMap<Long, GenerationView> generations = new TreeMap<>();
    final Map<Integer, Integer> exits = new HashMap<>();
    int recoveries;
    long lastRequestMillis;
    long lastHeartbeatMillis;
    long startedAtMillis;
    long finishedAtMillis;
    /** When the coordinator first found the node silent, or 0. */
    long silentSinceMillis;
    /** The latest store health each node reported. */
    final Map<String, Event.StoreHealthReported> storeHealth = new TreeMap<>();
    /** The latest cache report of each node. */
    final Map<String, Event.CacheReported> caches = new TreeMap<>();
    Boolean success;
    String finishDetail = "";

    JobView(String job) {
        this.job = job;
    }

    public String job() {
        return job;
    }

    public int ranks() {
        return started == null ? 0 : started.ranks();
    }

    public Optional<Event.JobStarted> settings() {
        return Optional.ofNullable(started);
    }

    public Collection<GenerationView> generations() {
        return generations.values();
    }

    public boolean finished() {
        return success != null;
    }

    public Optional<Boolean> success() {
        return Optional.ofNullable(success);
    }

    /** The latest remote-store health per node (empty for stores without a resilience layer). */
    public Collection<Event.StoreHealthReported> storeHealth() {
        return storeHealth.values();
    }

    /** The latest cache report per node: how full each node's cache is. */
    public Collection<Event.CacheReported> caches() {
        return caches.values();
    }

    /** Log time (ms) of the newest checkpoint request, or of the job's start before any. */
    public long lastRequestMillis() {
        return lastRequestMillis;
    }

    /** Seconds from the job's first start to its end, or to {@code nowMillis} while it runs. */
    public double runSeconds(long nowMillis) {
        if (startedAtMillis == 0) {
            return 0;
        }
        return ((success != null && finishedAtMillis > 0 ? finishedAtMillis : nowMillis) - startedAtMillis) / 1000.0;
    }

    public int recoveries() {
        return recoveries;
    }

    /** The newest generation established on the remote store: what a restart uses. */
    public Optional<GenerationView> newestEstablished() {
        return generations.descendingMap().values().stream()
                .filter(g -> g.state == GenerationView.State.ESTABLISHED).findFirst();
    }

    /** The newest generation requested, if any. */
    public Optional<GenerationView> latest() {
        return generations.isEmpty() ? Optional.empty() : Optional.of(generations.lastEntry().getValue());
    }

    /** Whether a capture is under way (requested, not yet captured by every rank nor failed). */
    public boolean capturing() {
        return latest().map(g -> g.state == GenerationView.State.OPEN).orElse(false);
    }

    public long nextGeneration() {
        return generations.isEmpty() ? 0 : generations.lastKey() + 1;
    }
}

package io.ferry.agent;

import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LogReplay;
import io.ferry.model.DaemonThreads;
import io.ferry.model.Durations;
import io.ferry.model.Event;
import io.ferry.model.Placement;
import io.ferry.staging.CacheTrash;
import io.ferry.staging.LocalCache;
import io.ferry.staging.StagingConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Reclaims a node's cache from the jobs that no longer need it. Every sweep lists the jobs with a
 * directory in the cache and reads what the event log says of them (their {@link Event.JobStarted},
 * {@link Event.JobPlaced} and {@link Event.JobFinished}, from the beginning: an agent that was down
 * when a job ended still learns it), then, for a job this agent does not serve now:
 * <ul>
 * <li>finished successfully {@link CacheRetention#finished()} ago: its whole directory goes;</li>
 * <li>failed {@link CacheRetention#failed()} ago: what the store holds goes, what is not yet staged stays;</li>
 * <li>running with no ranks placed here (they moved off after this node was lost): this node's
 *     own staged images go at once, partner copies and images not yet staged stay;</li>
 * <li>not known to the log at all: reported once, then, untouched for {@link CacheRetention#finished()},
 *     treated as failed.</li>
 * </ul>
 * A removal runs on the job's command lane, so never beside a launch of the job; every removal is
 * logged with what and why, and, for a job the log knows, a {@link Event.CacheReported} says how
 * much the job holds here after it. A sweep that cannot read the log to its end decides nothing.
 * Each sweep first deletes what killed processes left of their deletions ({@link CacheTrash}).
 * Thread-safe: one thread sweeps.
 */
final class CacheReclaimer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CacheReclaimer.class);
    /** A sweep gives up reading the log after this long, deciding nothing. */
    private static final Duration READ_LIMIT = Duration.ofSeconds(60);
    /** A deletion's trash untouched this long is a killed process's leftover, not one under way. */
    static final Duration TRASH_AGE = Duration.ofMinutes(10);

    private final KafkaLog log;
    private final String node;
    private final LocalCache cache;
    private final CacheRetention retention;
    private final Clock clock;
    private final Predicate<String> served;
    private final BiFunction<String, Runnable, CompletableFuture<Void>> onLane;
    /** This node's meters (null where it keeps none): they follow a job's cache usage after a removal. */
    private final Supplier<AgentMeters> meters;
    private final Set<String> reportedUnknown = new HashSet<>();
    /** Generations kept unstaged, said once each per job (every sweep finds them again). */
    private final Set<String> reportedKept = new HashSet<>();
    private final ScheduledExecutorService timer;

    /**
     * @param served whether this agent serves the job now (it then keeps its cache whatever the log says)
     * @param onLane runs a task on the job's command lane
     * @param meters this node's meters, or null where it keeps none
     */
    CacheReclaimer(KafkaLog log, String node, LocalCache cache, CacheRetention retention, Clock clock,
                   Predicate<String> served, BiFunction<String, Runnable, CompletableFuture<Void>> onLane,
                   Supplier<AgentMeters> meters) {
        this.log = log;
        this.node = node;
        this.cache = cache;
        this.retention = retention;
        this.clock = clock;
        this.served = served;
        this.onLane = onLane;
        this.meters = meters;
        this.timer = Executors.newSingleThreadScheduledExecutor(
                DaemonThreads.named("ferry-agent-reclaim-" + node));
    }

    /** A sweep a quarter of the shorter retention apart (1 s to 10 min), the first one now. */
    CacheReclaimer start() {
        long shorter = Math.min(retention.finished().toMillis(), retention.failed().toMillis());
        long every = Math.max(1000, Math.min(Duration.ofMinutes(10).toMillis(), shorter / 4));
        timer.scheduleWithFixedDelay(this::sweepReporting, 0, every, TimeUnit.MILLISECONDS);
        return this;
    }

    private void sweepReporting() {
        MDC.put("node", node);
        try {
            sweep();
        } catch (IOException | RuntimeException e) { // the next sweep tries again
            LOG.warn("ferry agent {}: cache reclaim failed, trying again later: {}", node, e.getMessage());
        }
    }

    /** What the log says of one job, as far as its cache goes. */
    private static final class Standing {
        Placement placement;
        Boolean success; // null while it runs
        long finishedAtMillis;
        int keepGenerations = 1;
    }

    /** One sweep: see the class comment. */
    void sweep() throws IOException {
        CacheTrash.Swept trash = CacheTrash.sweep(cache.root(), TRASH_AGE, clock.millis());
        if (!trash.removed().isEmpty()) {
            LOG.info("ferry agent {}: cache: removed {} left by deletions a killed process did"
                    + " not finish ({} bytes): {}",
                    node, trash.removed().size(), trash.freedBytes(), trash.removed());
        }
        List<String> jobs = cache.jobs(); // before the log is read: a job here started before it
        if (jobs.isEmpty()) {
            return;
        }
        Map<String, Standing> known = read(new HashSet<>(jobs));
        if (known == null) {
            LOG.warn("ferry agent {}: cache reclaim: the event log was not read to its end within {} s; nothing"
                    + " removed this time", node, READ_LIMIT.toSeconds());
            return;
        }
        long now = clock.millis();
        for (String job : jobs) {
            if (served.test(job)) {
                continue;
            }
            Standing s = known.get(job);
            LocalCache.Standing what;
            String why;
            if (s == null) {
                long idle = now - cache.lastModifiedMillis(job);
                if (reportedUnknown.add(job)) {
                    LOG.warn("ferry agent {}: cache: job {} is not known to the event log; its directory {} goes once"
                                    + " untouched for {} (cache.finished-retention), all but images not yet staged",
                                    node, job,
                            cache.root().resolve(job), human(retention.finished()));
                }
                if (idle < retention.finished().toMillis()) {
                    continue;
                }
                what = LocalCache.Standing.ENDED;
                why = "the event log does not know the job, and its directory was untouched for "
                        + human(Duration.ofMillis(idle));
            } else if (s.success == null) {
                if (s.placement == null || s.placement.byLauncher() || s.placement.nodes().contains(node)) {
                    continue;
                }
                what = LocalCache.Standing.MOVED_OFF;
                why = "the job runs on, with no ranks on this node any more (placement " + s.placement + ")";
            } else if (s.success) {
                if (now - s.finishedAtMillis < retention.finished().toMillis()) {
                    continue;
                }
                what = LocalCache.Standing.FINISHED;
                why = "the job finished successfully " + ago(now - s.finishedAtMillis) + " (cache.finished-retention "
                        + human(retention.finished()) + ")";
            } else {
                if (now - s.finishedAtMillis < retention.failed().toMillis()) {
                    continue;
                }
                what = LocalCache.Standing.ENDED;
                why = "the job failed " + ago(now - s.finishedAtMillis) + " (cache.failed-retention "
                        + human(retention.failed()) + ")";
            }
            reclaimOnLane(job, what, why, s);
        }
    }

    private static String ago(long millis) {
        return human(Duration.ofMillis(millis)) + " ago";
    }

    private static String human(Duration d) {
        return Durations.human(d.toMillis() / 1000.0);
    }

    private void reclaimOnLane(String job, LocalCache.Standing what, String why, Standing s) {
        try {
            onLane.apply(job, () -> {
                if (served.test(job)) {
                    return; // launched here meanwhile: its agent uses the cache
                }
                try {
                    reclaim(job, what, why, s);
                } catch (IOException e) {
                    LOG.warn("ferry agent {}: cache: reclaiming job {} failed, trying again at the next sweep: {}",
                            node, job, e.getMessage());
                }
            }).get(5, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("ferry agent {}: cache: reclaiming job {} did not end: {}", node, job, e.getMessage());
        }
    }

    private void reclaim(String job, LocalCache.Standing what, String why, Standing s) throws IOException {
        LocalCache.Reclaimed r = cache.reclaim(job, what);
        if (!r.removed().isEmpty()) {
            LOG.info("ferry agent {}: cache: removed {} of job {} ({} bytes freed): {}", node,
                    String.join(", ", r.removed()), job, r.freedBytes(), why);
        }
        if (!r.keptUnstaged().isEmpty() && reportedKept.add(job + " " + r.keptUnstaged())) {
            LOG.warn("ferry agent {}: cache: kept generations {} of job {} ({}): they hold images of this node"
                    + " not yet staged, which stay until a run of the job stages them or finishes successfully;"
                    + " remove them from {} by hand if the job will not run again", node, r.keptUnstaged(), job, why,
                    cache.root().resolve(job));
        }
        if (s != null && !r.removed().isEmpty()) {
            try {
                LocalCache.Usage u = cache.usage(job);
                Event.CacheReported c = new Event.CacheReported(job, node, u.capacityBytes(), u.freeBytes(),
                        u.jobBytes(), u.generations(), s.keepGenerations);
                AgentMeters m = meters.get();
                if (m != null) {
                    m.reclaimed(c);
                }
                log.append(c);
            } catch (IOException | RuntimeException e) {
                LOG.warn("ferry agent {}: cache usage of {} after reclaiming not reported: {}", node, job,
                        e.getMessage());
            }
        }
    }

    /**
     * Folds the events of {@code jobs} from the log's beginning to its end now; null when the end
     * was not reached within {@link #READ_LIMIT}. Events of other jobs are skipped undecoded (the
     * events topic is keyed by job).
     */
    private Map<String, Standing> read(Set<String> jobs) {
        Map<String, Standing> out = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.EVENTS, true)) {
            boolean whole = LogReplay.records(c, READ_LIMIT, r -> {
                if (r.key() != null && jobs.contains(new String(r.key(), StandardCharsets.UTF_8))) {
                    LogReplay.decoded(r).ifPresent(e -> fold(out, e, r.timestamp())); // others: skipped undecoded
                }
            });
            return whole ? out : null;
        }
    }

    /** Only what says where a job runs and whether it ended; every other event leaves its standing as it is. */
    private static void fold(Map<String, Standing> jobs, Event e, long timestampMillis) {
        if (e instanceof Event.JobStarted st) {
            Standing s = new Standing(); // a run again: a new life
            s.placement = st.where();
            String keep = st.launch().settings().get(StagingConfig.KEEP_GENERATIONS.name());
            try {
                s.keepGenerations = keep == null
                        ? Integer.parseInt(StagingConfig.KEEP_GENERATIONS.defaultValue())
                        : StagingConfig.KEEP_GENERATIONS.parse(keep);
            } catch (IllegalArgumentException bad) {
                s.keepGenerations = 1;
            }
            jobs.put(st.job(), s);
        } else if (e instanceof Event.JobPlaced p) {
            Standing s = jobs.get(p.job());
            if (s != null) {
                try {
                    s.placement = Placement.parse(p.placement(), s.placement.ranks());
                } catch (IllegalArgumentException bad) {
                    // the coordinator ignores it as well
                }
            }
        } else if (e instanceof Event.JobFinished f) {
            Standing s = jobs.get(f.job());
            if (s != null) {
                s.success = f.success();
                s.finishedAtMillis = timestampMillis;
            }
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
        try {
            timer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

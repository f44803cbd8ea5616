package io.ferry.agent;

import io.ferry.agent.peer.ImageStream;
import io.ferry.agent.peer.PeerAuth;
import io.ferry.agent.peer.PeerClient;
import io.ferry.model.CrashPoint;
import io.ferry.model.DaemonThreads;
import io.ferry.model.Event;
import io.ferry.model.ImageRef;
import io.ferry.model.PeerAddresses;
import io.ferry.model.RankSet;
import io.ferry.staging.LocalCache;
import io.ferry.staging.Progress;
import io.ferry.staging.PushImage;
import io.ferry.staging.StagingPipeline;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * What a {@link NodeAgent} does with its images after a capture, on one thread and in order:
 * the partner copy, staging to the store (retried with backoff while it fails; the images wait
 * in the cache), cache retention and the cache report; and, at start, staging what an earlier
 * agent of the job on this node captured and did not stage.
 */
final class NodeStaging {
    private static final Logger LOG = LoggerFactory.getLogger(NodeStaging.class);
    private final AgentConfig config;
    private final LocalCache cache;
    private final StagingPipeline pipeline;
    private final Consumer<Event> events;
    /** The agent's timer: staging retries are scheduled on it. */
    private final ScheduledExecutorService poller;
    private final ExecutorService stager = Executors.newSingleThreadExecutor(DaemonThreads.named("ferry-agent-stage"));
    /** Set first thing when the agent closes: a push it interrupts is not a staging failure. */
    private volatile boolean closing;

    NodeStaging(AgentConfig config, LocalCache cache, StagingPipeline pipeline, Consumer<Event> events,
                ScheduledExecutorService poller) {
        this.config = config;
        this.cache = cache;
        this.pipeline = pipeline;
        this.events = events;
        this.poller = poller;
        stager.execute(this::restageLeftovers);
        stager.execute(this::reportCache);
    }

    /**
     * Generation {@code g} was captured by {@code captured} ranks: the partner copy first (as
     * SCR's partner level is part of the checkpoint: a generation that reaches the store, and so
     * can be restarted from, has had its partner copy made), then staging. {@code partner}:
     * {@code NODE=HOST:PORT}, or empty.
     */
    void captured(long g, List<Integer> captured, String partner, PeerAuth auth) {
        stager.execute(() -> {
            if (!partner.isEmpty()) {
                copyToPartner(g, captured, PeerAddresses.parse(partner).get(0), auth);
            }
            stage(g, captured, 0);
        });
    }

    /** Completes once the staging work queued now has run (not counting retries scheduled for later). */
    Future<?> idle() {
        return stager.submit(() -> { });
    }

    /** The agent is closing: what it interrupts from now on is not a failure. */
    void closing() {
        closing = true;
    }

    void close() {
        closing = true;
        stager.shutdownNow();
    }

    /**
     * Stages, oldest first, the images of this job that an earlier agent on this node captured
     * and did not stage (it crashed or was closed meanwhile): without this, a snapshot captured
     * just before an agent crash was never established, and its images, unstaged, were never
     * dropped by retention.
     */
    private void restageLeftovers() {
        try {
            for (long g : cache.generations(config.job())) { // oldest first
                List<Integer> left = cache.unstagedRanks(config.job(), g);
                if (!left.isEmpty() && !closing) {
                    LOG.info("ferry agent: staging generation " + g + " of " + config.job() + " (ranks " + left
                            + "), captured on this node before this agent started");
                    stage(g, left, 0);
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("ferry agent: cannot look for unstaged images of " + config.job() + ": " + e.getMessage());
        }
    }

    /**
     * Pushes every rank of {@code g} not staged yet, together ({@link StagingPipeline#pushAll}:
     * shared packs, one flush per pack for all of them); each rank is marked staged and reported
     * once its manifest is written. On failure reports it and retries with backoff (images stay
     * in cache).
     */
    private void stage(long g, List<Integer> captured, int attempt) {
        List<PushImage> todo = new ArrayList<>();
        for (int r : captured) {
            ImageRef ref = new ImageRef(config.job(), g, r);
            if (!cache.isStaged(ref)) {
                todo.add(new PushImage(cache.imageDir(ref), ref));
            }
        }
        try {
            Progress report = attempt > 0 || todo.isEmpty() ? Progress.NONE
                    : new StagingReport(config.job(), g, config.node(),
                    StagingReport.rawBytes(todo.stream().map(PushImage::dir).toList()), events);
            pipeline.pushAll(todo, report, (image, p) -> {
                CrashPoint.reach("agent.manifest-written");
                cache.markStaged(image.ref(), p);
                events.accept(new Event.ImageStaged(config.job(), g, image.ref().rank(), "remote", p.rawBytes(),
                        p.storedBytes(), p.elapsed().toNanos() / 1e9, p.manifestSha256()));
            });
        } catch (IOException | RuntimeException e) {
            if (todo.stream().anyMatch(i -> !Files.isDirectory(i.dir()))) {
                return; // dropped from the cache (the generation failed or was rolled back)
            }
            if (closing || Thread.currentThread().isInterrupted() || e instanceof InterruptedIOException
                    || e instanceof ClosedByInterruptException) {
                return; // the agent is closing: not a staging failure; the images stay in the cache, unstaged
            }
            int rank = todo.stream().filter(i -> !cache.isStaged(i.ref())).findFirst().orElse(todo.get(0)).ref().rank();
            events.accept(new Event.StagingFailed(config.job(), g, rank, String.valueOf(e.getMessage())));
            // At most 5 s apart: once the store answers again staging resumes within seconds, not after a backoff
            // grown during the outage to half a minute. While the store's circuit is open a try fails at once, on
            // this node, without a request to the store; the store's own retries and breaker pace the requests.
            long delay = Math.min(5_000, 500L << Math.min(6, attempt));
            try {
                poller.schedule(() -> stager.execute(() -> stage(g, captured, attempt + 1)), delay,
                        TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException closed) {
                // closed meanwhile: nothing more is staged by this agent
            }
            return;
        }
        try {
            cache.applyRetention(config.job(), pipeline.config().keepGenerations(), this::established);
        } catch (IOException | RuntimeException e) {
            LOG.warn("ferry agent: cache retention for " + config.job() + " failed: " + e.getMessage());
        }
        reportCache();
    }

    /**
     * Puts every captured rank's image of {@code g} into the partner's cache; reported once the
     * partner acknowledged them all (fsynced there). Best effort, as SCR's partner level: a copy
     * that fails is said on stderr, and the restart falls through to the store for those ranks.
     */
    private void copyToPartner(long g, List<Integer> captured, PeerAddresses.Peer partner,
                               PeerAuth auth) {
        long t0 = System.nanoTime();
        long bytes = 0;
        List<Integer> copied = new ArrayList<>();
        // One deadline for the node's whole copy (cache.partner-timeout, or 30 s and 20 ms a MiB): staging to the
        // store waits for it, so a frozen partner delays a checkpoint by this much at most, however many ranks.
        long deadline;
        try {
            Duration set = pipeline.config().partnerTimeout();
            long total = 0;
            for (int r : captured) {
                total += ImageStream.bytes(cache.imageDir(new ImageRef(config.job(), g, r)));
            }
            deadline = t0 + (set.isZero() ? PeerClient.putDeadline(total) : set).toNanos();
        } catch (IOException | RuntimeException e) {
            return; // dropped from the cache meanwhile (the generation failed or was rolled back)
        }
        for (int r : captured) {
            ImageRef ref = new ImageRef(config.job(), g, r);
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                LOG.warn("ferry agent " + config.node() + ": partner copy of " + config.job()
                        + " generation " + g + " to "
                        + partner.node() + " given up at rank " + r + ": its time (" + (deadline - t0) / 1_000_000_000
                        + " s) is spent; the rest is staged to the store only");
                break;
            }
            try {
                bytes += PeerClient.put(partner, ref, cache.imageDir(ref), auth,
                        Duration.ofNanos(left));
                copied.add(r);
            } catch (IOException | RuntimeException e) {
                if (!Files.isDirectory(cache.imageDir(ref))) {
                    return; // dropped from the cache (the generation failed or was rolled back)
                }
                LOG.warn("ferry agent " + config.node() + ": partner copy of rank " + r + " of " + config.job()
                        + " generation " + g + " to " + partner.node() + " failed: " + e.getMessage());
            }
        }
        if (!copied.isEmpty()) {
            events.accept(new Event.PartnerCopied(config.job(), g, config.node(), partner.node(),
                    RankSet.of(copied.stream().mapToInt(Integer::intValue)).toString(), bytes,
                    (System.nanoTime() - t0) / 1e9));
        }
    }

    /** Tells the coordinator how full this node's cache is, for its cache-full forecast. */
    private void reportCache() {
        try {
            LocalCache.Usage u = cache.usage(config.job());
            events.accept(new Event.CacheReported(config.job(), config.node(), u.capacityBytes(), u.freeBytes(),
                    u.jobBytes(), u.generations(), pipeline.config().keepGenerations()));
        } catch (IOException | RuntimeException e) {
            LOG.warn("ferry agent: cache usage for " + config.job() + " not reported: " + e.getMessage());
        }
    }

    /** Whether {@code generation} is established; null when the store cannot say now (retention then keeps it). */
    private Boolean established(long generation) {
        try {
            return pipeline.repository().isEstablished(config.job(), generation);
        } catch (IOException e) {
            return null;
        }
    }
}

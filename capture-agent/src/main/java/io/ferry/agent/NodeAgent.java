package io.ferry.agent;

import io.ferry.agent.capture.Capturer;
import io.ferry.agent.capture.Capturers;
import io.ferry.agent.capture.DmtcpCapturer;
import io.ferry.agent.capture.DmtcpSpan;
import io.ferry.agent.peer.PeerAuth;
import io.ferry.model.CrashPoint;
import io.ferry.model.DaemonThreads;
import io.ferry.model.Event;
import io.ferry.model.ImageRef;
import io.ferry.model.LaunchSpec;
import io.ferry.model.OwnerOnly;
import io.ferry.staging.LocalCache;
import io.ferry.staging.StagingPipeline;
import io.ferry.staging.internal.FileTrees;
import io.ferry.stores.StoreHealth;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The agent of one node for one job: launches its ranks, quiesces them for each generation
 * (every rank answers before any image counts as captured), moves the images into the
 * node-local cache, fsynced, and stages them to the store in the background, in order.
 * Reports everything as {@link Event}s. Captures run one at a time on one thread, staging on
 * another, so a checkpoint requested while the previous one still stages waits for neither.
 */
public final class NodeAgent implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(NodeAgent.class);
    private final AgentConfig config;
    private final LocalCache cache;
    private final StagingPipeline pipeline;
    private final Consumer<Event> events;
    private final Map<Integer, RankProcess> ranks = new ConcurrentHashMap<>();
    private final ExecutorService capturer = Executors.newSingleThreadExecutor(
            DaemonThreads.named("ferry-agent-capture"));
    /** Reported only when it differs from this: a healthy store with nothing to tell. */
    private volatile StoreHealth lastHealth = StoreHealth.HEALTHY;
    /** Partner copies, staging, retention and cache reports, in the background and in order. */
    private final NodeStaging staging;
    private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named("ferry-agent-poll"));
    private final ControlServer control;
    /** The transparent capture method, empty for the cooperative protocol. */
    private final Optional<Capturer> transparent;
    private volatile long launchEpoch;
    /**
     * The newest generation a capture was asked of (capture thread only): a command delivered twice
     * is not acted on twice.
     */
    private long lastCaptureAsked = -1;
    /** How often the agent tells the coordinator it is alive, unless told otherwise; well under its 30 s timeout. */
    public static final Duration HEARTBEAT_INTERVAL = Duration.ofSeconds(5);

    public NodeAgent(AgentConfig config, LocalCache cache, StagingPipeline pipeline, Consumer<Event> events)
            throws IOException {
        this(config, cache, pipeline, events, HEARTBEAT_INTERVAL);
    }

    /** @param heartbeat how often a heartbeat of the job is sent (a fraction of the coordinator's timeout) */
    public NodeAgent(AgentConfig config, LocalCache cache, StagingPipeline pipeline, Consumer<Event> events,
                     Duration heartbeat) throws IOException {
        this.config = config;
        this.cache = cache;
        this.pipeline = pipeline;
        this.events = events;
        this.transparent = config.quiesce().cooperative() ? Optional.empty()
                : Optional.of(Capturers.of(config.quiesce().method()));
        OwnerOnly.createDirectories(config.socketDir());
        this.control = new ControlServer(config.socketDir()
                .resolve(ControlServer.socketName(config.job(), ProcessHandle.current().pid())),
                ranks::get, (rank, f) ->
                // The whole job rolls back to an older generation; this one is never chosen again.
                events.accept(new Event.RestoreFailed(config.job(), f.generation(), config.node(), "rank " + rank
                        + " rejected its restart data: " + (f.reason().isBlank() ? "(no reason given)" : f.reason()))));
        poller.scheduleAtFixedRate(this::heartbeat, 0, heartbeat.toMillis(), TimeUnit.MILLISECONDS);
        this.staging = new NodeStaging(config, cache, pipeline, events, poller);
    }

    public AgentConfig config() {
        return config;
    }

    public Map<Integer, RankProcess> ranks() {
        return Map.copyOf(ranks);
    }

    /**
     * Starts every rank; with a restart generation, each rank gets {@code FERRY_RESTART_DIR}
     * from {@code restartDirs}. Exits are reported as {@link Event.RankExited}, except those
     * of ranks this agent stopped itself.
     */
    public synchronized void launch(long restartGeneration, Map<Integer, Path> restartDirs) throws IOException {
        launch(restartGeneration, restartDirs, null);
    }

    /**
     * {@link #launch(long, Map)}; for DMTCP ranks, as part of the job's one computation across
     * nodes {@code span} (null: this node's ranks are a computation of their own).
     */
    public synchronized void launch(long restartGeneration, Map<Integer, Path> restartDirs,
                                    DmtcpSpan span) throws IOException {
        long epoch = ++launchEpoch;
        if (transparent.isPresent() && transparent.get() instanceof DmtcpCapturer d) {
            d.span(span);
        }
        try {
            startRanks(epoch, restartGeneration, restartDirs);
            if (transparent.isPresent()) {
                transparent.get().started(restartGeneration >= 0, this::killLiving);
            }
        } catch (IOException | RuntimeException e) {
            if (transparent.isPresent()) {
                // ranks waiting for one that never came (DMTCP's restores) would wait for ever
                try {
                    stopRanks();
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
            throw e;
        }
    }

    private void startRanks(long epoch, long restartGeneration, Map<Integer, Path> restartDirs) throws IOException {
        for (int r : config.ranks().toList()) {
            Path ckpt = freshArea(r);
            Path restartDir = restartGeneration >= 0 ? restartDirs.get(r) : null;
            ProcessBuilder pb = new ProcessBuilder();
            Map<String, String> env = pb.environment();
            env.remove("FERRY_RESTART_DIR");
            env.remove("FERRY_RESTART_GENERATION");
            // Credentials the agent took from its environment (FERRY_S3_SECRET_ACCESS_KEY,
            // FERRY_KAFKA_SASL_JAAS_CONFIG, AWS_SECRET_ACCESS_KEY, KRB5CCNAME...) are not the
            // ranks', unless the job passes a store's (rank.pass-env).
            LaunchSpec.removeSecrets(env, pipeline.config().passEnv());
            env.putAll(rankEnvironment(r, ckpt, restartGeneration, restartDir));
            Process p = RankStart.start(pb, config.command(), transparent, r, ckpt, restartDir);
            watch(new RankProcess(r, p, ckpt, config.quiesce().signal())
                    .withHelloGrace(config.quiesce().helloGrace()), epoch);
        }
    }

    /**
     * Takes on a rank the site's launcher started ({@code ferry rank}, waiting registered with
     * this node's agent) as process {@code pid}, restarting from {@code restartDir} when
     * {@code restartGeneration >= 0}. A rank of the same number from an earlier attempt is
     * killed. Returns the environment the rank's program gets. Its exit is reported with an
     * unknown code (the launcher reports the real one); it then leaves the job's ranks here.
     */
    public synchronized Map<String, String> adopt(int rank, long pid, long restartGeneration, Path restartDir)
            throws IOException {
        ProcessHandle h = ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                .orElseThrow(() -> new IOException("rank " + rank + " (pid " + pid
                        + ") is gone before it could start"));
        RankProcess old = ranks.remove(rank);
        if (old != null && old.process().isAlive() && old.process().pid() != pid) {
            old.process().descendants().forEach(ProcessHandle::destroyForcibly);
            old.process().destroyForcibly();
        }
        Path ckpt = freshArea(rank);
        watch(new RankProcess(rank, h, ckpt, config.quiesce().signal()).withHelloGrace(config.quiesce().helloGrace()),
                launchEpoch);
        return rankEnvironment(rank, ckpt, restartGeneration, restartDir);
    }

    private Path freshArea(int rank) throws IOException {
        Path ckpt = cache.root().resolve(config.job()).resolve(".ranks").resolve(Integer.toString(rank));
        FileTrees.delete(ckpt);
        OwnerOnly.createDirectories(ckpt);
        return ckpt;
    }

    /** What a rank's program is told: who it is, where its checkpoint files go, how to reach the agent. */
    private Map<String, String> rankEnvironment(int rank, Path ckpt, long restartGeneration, Path restartDir) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("FERRY_JOB", config.job());
        env.put("FERRY_RANK", Integer.toString(rank));
        env.put("FERRY_NRANKS", Integer.toString(config.nranks()));
        env.put("FERRY_CKPT_DIR", ckpt.toString());
        env.put("FERRY_SOCKET", control.path().toString());
        if (restartGeneration >= 0) {
            env.put("FERRY_RESTART_DIR", restartDir.toString());
            env.put("FERRY_RESTART_GENERATION", Long.toString(restartGeneration));
        }
        return env;
    }

    /** Keeps a rank and reports its exit, unless the agent stopped it itself (the epoch moved on). */
    private void watch(RankProcess rp, long epoch) {
        ranks.put(rp.rank(), rp);
        rp.onExit().thenRun(() -> {
            boolean launched = rp.exitCode() != Event.RankExited.UNKNOWN_EXIT;
            if (!launched) {
                ranks.remove(rp.rank(), rp); // a launcher's rank never comes back: a relaunch registers anew
            }
            if (launchEpoch == epoch) {
                events.accept(new Event.RankExited(config.job(), rp.rank(), rp.exitCode()));
            }
        });
    }

    /**
     * Why this job's images cannot be restored by Ferry ({@code proc}: ELF cores need an
     * external restorer), or empty when a restart can relaunch or restore its ranks.
     */
    public Optional<String> cannotRestore() {
        if (transparent.isPresent() && !transparent.get().restores()) {
            return Optional.of("job " + config.job() + " captures with " + transparent.get().method()
                    + ": its images are ELF core files for gdb, and restoring them"
                    + " needs an external restorer; its ranks are not rolled back");
        }
        return Optional.empty();
    }

    private void heartbeat() {
        try {
            events.accept(new Event.Heartbeat(config.job(), config.node()));
            StoreHealth h = pipeline.repository().store().health();
            if (!h.equals(StoreHealth.NONE) && !h.sameOutcomes(lastHealth)) {
                events.accept(new Event.StoreHealthReported(config.job(), config.node(),
                        pipeline.repository().store().uri().toString(), h.circuit(), h.calls(), h.retries(), h.failed(),
                        h.rejected()));
                lastHealth = h;
            }
        } catch (RuntimeException e) {
            LOG.warn("heartbeat of {} not delivered: {}", config.job(), e.getMessage()); // the next one retries
        }
    }

    /**
     * Kills the ranks working in {@code rankDirs} that still run, as a crash would, their exits
     * reported: something they depend on ended under them (a DMTCP coordinator), and the job
     * recovers as from a crash.
     */
    private void killLiving(Set<Path> rankDirs) {
        for (RankProcess r : ranks.values()) {
            if (rankDirs.contains(r.area().toAbsolutePath()) && kill(r.rank())) {
                LOG.warn("ferry agent " + config.node() + ": rank " + r.rank() + " of " + config.job()
                        + " killed: what its "
                        + transparent.map(Capturer::method).orElse("capture")
                        + " checkpoints depend on ended under it");
            }
        }
    }

    /** Kills every rank and its descendants (SIGKILL) without reporting their exits: used before a rollback. */
    public synchronized void stopRanks() throws InterruptedException {
        launchEpoch++;
        // First what the method keeps for the ranks (a DMTCP coordinator): its end is then not taken for a loss.
        transparent.ifPresent(Capturer::stopped);
        List<ProcessHandle> under = new ArrayList<>();
        for (RankProcess r : ranks.values()) {
            // Descendants first: a rank launched under a wrapper (setsid -f, dmtcp_launch) is its grandchild.
            List<ProcessHandle> mine = r.process().descendants().toList();
            mine.forEach(ProcessHandle::destroyForcibly);
            r.process().destroyForcibly();
            under.addAll(mine);
        }
        for (RankProcess r : ranks.values()) {
            try {
                r.onExit().get(10, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                LOG.warn("ferry agent: rank " + r.rank() + " of " + config.job() + " (pid " + r.process().pid()
                        + ") did not end within 10 s of SIGKILL");
            }
        }
        // And their children, reaped by whoever inherited them: a restore under the same pids (CRIU) needs them gone.
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (ProcessHandle h : under) {
            try {
                h.onExit().get(Math.max(1, until - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException e) {
                LOG.warn("ferry agent: process " + h.pid() + " under a rank of " + config.job()
                        + " did not end within 10 s of SIGKILL");
            }
        }
    }

    /**
     * SIGKILLs one rank and its descendants, as a crash would ({@code ferry chaos kill-rank}); its exit is reported.
     */
    public boolean kill(int rank) {
        RankProcess r = ranks.get(rank);
        if (r == null || !r.process().isAlive()) {
            return false;
        }
        r.process().descendants().forEach(ProcessHandle::destroyForcibly);
        return r.process().destroyForcibly();
    }

    /** Quiesces all ranks for {@code generation}; completes once captured (or failed), before staging. */
    public CompletableFuture<CaptureResult> checkpoint(long generation) {
        return checkpoint(generation, "", PeerAuth.NONE);
    }

    /**
     * {@link #checkpoint(long)}, and then, with a {@code partner} ({@code NODE=HOST:PORT}), a
     * copy of the images into that node's cache, before they are staged to the store, proving
     * {@code auth}'s secret to the partner.
     */
    public CompletableFuture<CaptureResult> checkpoint(long generation, String partner,
            PeerAuth auth) {
        long epoch = launchEpoch;
        return CompletableFuture.supplyAsync(() -> capture(generation, partner, auth, epoch), capturer);
    }

    /** Tells the coordinator where this node's cache is served to the job's other nodes. */
    public void announcePeer(String address) {
        events.accept(new Event.PeerAddress(config.job(), config.node(), address));
    }

    /** @param epoch the launch the capture was asked of: the ranks of a later one (a rollback's) are not its */
    private CaptureResult capture(long g, String partner, PeerAuth auth, long epoch) {
        Optional<String> repeat = repeated(g);
        if (repeat.isPresent()) {
            LOG.info("ferry agent " + config.node() + ": capture of generation " + g + " of " + config.job()
                    + " asked again (" + repeat.get() + "): ignored, nothing re-captured or overwritten");
            return new CaptureResult(g, Map.of(), Map.of());
        }
        lastCaptureAsked = g;
        if (epoch != launchEpoch) { // queued behind a capture while the ranks were rolled back
            // Nothing of it was written (it never ran), and the ranks' areas are the launch's to clear: none touched.
            events.accept(new Event.CaptureFailed(config.job(), g, "the ranks were stopped or started again (a rollback)"
                    + " after generation " + g + " was asked for; the ranks running now are not captured for it"));
            return new CaptureResult(g, Map.of(), Map.of());
        }
        boolean reported = false;
        try {
            Map<Integer, Double> stall = transparent.isPresent()
                    ? TransparentCapture.run(transparent.get(), ranks.values(), g, config.quiesce().timeout())
                    : CooperativeCapture.run(ranks.values(), g, config.quiesce().timeout(), poller);
            Map<Integer, Long> bytes = new HashMap<>();
            for (RankProcess r : ranks.values()) {
                bytes.put(r.rank(), CacheFiles.moveIn(cache, r.generationDir(g),
                        new ImageRef(config.job(), g, r.rank())));
            }
            Map<Integer, Long> expected = CaptureSample.expectedWritten(pipeline, cache, config, g, bytes.keySet());
            CrashPoint.reach("agent.captured");
            reported = true;
            for (RankProcess r : ranks.values()) {
                events.accept(new Event.ImageCaptured(config.job(), g, r.rank(), config.node(), bytes.get(r.rank()),
                        stall.getOrDefault(r.rank(), 0.0), expected.getOrDefault(r.rank(), -1L)));
            }
            List<Integer> captured = List.copyOf(new TreeSet<>(bytes.keySet()));
            staging.captured(g, captured, partner, auth);
            return new CaptureResult(g, bytes, stall);
        } catch (Exception e) {
            Throwable t = e instanceof ExecutionException && e.getCause() != null
                    ? e.getCause() : e;
            if (!reported) {
                // Ranks moved into the cache before another's move failed would stay there unstaged, and
                // retention never drops an unstaged image: the whole generation goes.
                try {
                    cache.drop(config.job(), g);
                } catch (IOException | RuntimeException dropFailed) {
                    LOG.warn("ferry agent: cannot drop failed generation " + g + " from the cache: "
                            + dropFailed.getMessage());
                }
            }
            return failed(g, t.getMessage() != null ? t.getMessage() : t.toString());
        }
    }

    /**
     * Why a capture of {@code g} is a repeat (a command delivered twice: a coordinator that resumed
     * its commands from the last committed offset, an agent restarted over the same cache), or
     * empty for a new one. A repeat is never captured again: its images may be staging or staged,
     * and committed under the manifest they have now; overwriting them would pull the bytes out
     * from under the staging thread, and put an image the commit marker does not name in their place.
     * Runs on the capture thread only.
     */
    private Optional<String> repeated(long g) {
        if (g <= lastCaptureAsked) {
            return Optional.of("this agent took generation " + lastCaptureAsked + " already");
        }
        for (int r : config.ranks().toList()) {
            if (Files.exists(cache.imageDir(new ImageRef(config.job(), g, r)), LinkOption.NOFOLLOW_LINKS)) {
                return Optional.of("rank " + r + "'s image of it is in this node's cache already");
            }
        }
        return Optional.empty();
    }

    private CaptureResult failed(long g, String reason) {
        reason += CacheFiles.spaceNote(cache.root()); // before the failed generation's files are freed
        for (RankProcess r : ranks.values()) {
            try {
                FileTrees.delete(r.generationDir(g));
            } catch (IOException ignored) {
                // a rank still writing into it; the next launch clears the area
            }
        }
        events.accept(new Event.CaptureFailed(config.job(), g, reason));
        return new CaptureResult(g, Map.of(), Map.of());
    }

    /** Waits until queued staging work has run (not counting retries scheduled for later). */
    public void drainStaging() throws InterruptedException, ExecutionException {
        staging.idle().get();
    }

    /** Completes once the staging work queued now has run (not counting retries scheduled for later). */
    public Future<?> stagingIdle() {
        return staging.idle();
    }

    @Override
    public void close() throws IOException {
        staging.closing();
        try {
            stopRanks();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        capturer.shutdownNow();
        staging.close();
        poller.shutdownNow();
        control.close();
    }
}

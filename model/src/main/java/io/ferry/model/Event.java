package io.ferry.model;

import java.util.List;
import java.util.Map;

/**
 * What happened to a job: the coordinator's state is a fold over these, in log order.
 * Keyed by job on the events topic. Every record validates its job id; {@code EventChecks} the rest.
 */
public sealed interface Event {
    String job();

    /**
     * A job began (or was resumed by a new {@code ferry run}) with these settings.
     *
     * @param node      the host that submitted it
     * @param placement which node runs which rank ({@link Placement}'s text form)
     * @param launch    what every node needs to start and capture its ranks
     */
    record JobStarted(String job, int ranks, long intervalMillis, boolean autoRecover, String store, String node,
                      String placement, LaunchSpec launch) implements Event {
        public JobStarted {
            Names.requireJob(job);
            EventChecks.jobStarted(ranks, placement, launch);
        }

        /** A job whose ranks all run on {@code node} (the one-machine job). */
        public JobStarted(String job, int ranks, long intervalMillis, boolean autoRecover, String store, String node) {
            this(job, ranks, intervalMillis, autoRecover, store, node, Placement.single(ranks, node).toString(),
                    LaunchSpec.of(List.of()));
        }

        public Placement where() {
            return Placement.parse(placement, ranks);
        }
    }

    /** The coordinator asked for generation {@code generation}; {@code why} is "interval" or "request". */
    record CheckpointRequested(String job, long generation, String why) implements Event {
        public CheckpointRequested {
            Names.requireJob(job);
            Names.requireGeneration(generation);
        }
    }

    /**
     * A rank's image is complete and fsynced in its node's cache; {@code seconds} is the rank's stall.
     *
     * @param expectedWrittenBytes what staging the image should write to the store (its new blobs,
     *                             as stored), estimated by the agent (its CaptureSample); -1 where
     *                             not estimated (events written before it existed, a layout without packs)
     */
    record ImageCaptured(String job, long generation, int rank, String node, long bytes, double seconds,
                         long expectedWrittenBytes) implements Event {
        public ImageCaptured {
            Names.requireJob(job);
            Names.requireGeneration(generation);
            Names.requireRank(rank);
            EventChecks.expectedWritten(expectedWrittenBytes);
        }

        /** Without an estimate of what staging will write. */
        public ImageCaptured(String job, long generation, int rank, String node, long bytes, double seconds) {
            this(job, generation, rank, node, bytes, seconds, -1);
        }
    }

    /** The generation could not be captured on every rank; it will never be used. */
    record CaptureFailed(String job, long generation, String reason) implements Event {
        public CaptureFailed {
            Names.requireJob(job);
            reason = reason == null ? "unknown" : reason;
        }
    }

    /**
     * A rank's image is durable on {@code tier} ("remote").
     *
     * @param manifest the SHA-256 (hex) of the rank's manifest as the agent put it on the store, what
     *                 the commit marker records for the rank, so the coordinator need not read it
     *                 back; empty when not known (events written before it existed)
     */
    record ImageStaged(String job, long generation, int rank, String tier, long rawBytes, long storedBytes,
                       double seconds, String manifest) implements Event {
        public ImageStaged {
            Names.requireJob(job);
            Names.requireGeneration(generation);
            Names.requireRank(rank);
            manifest = manifest == null ? "" : manifest;
            EventChecks.manifest(manifest);
        }

        /** Without the manifest's digest: the coordinator reads the manifest from the store. */
        public ImageStaged(String job, long generation, int rank, String tier, long rawBytes, long storedBytes,
                           double seconds) {
            this(job, generation, rank, tier, rawBytes, storedBytes, seconds, "");
        }
    }

    /** Staging a rank's image failed for now; it stays in the cache and is retried. */
    record StagingFailed(String job, long generation, int rank, String reason) implements Event {
        public StagingFailed {
            Names.requireJob(job);
            reason = reason == null ? "unknown" : reason;
        }
    }

    /** Every rank of the generation is durable on {@code tier} and its commit marker is written. */
    record SnapshotEstablished(String job, long generation, String tier, double secondsSinceRequest) implements Event {
        public SnapshotEstablished {
            Names.requireJob(job);
        }
    }

    /**
     * The coordinator's forecast for a generation, made once all its ranks are captured (its size
     * is known), from the job's own earlier snapshots; recorded so that it can be set beside what
     * then happened ({@link SnapshotEstablished#secondsSinceRequest()}).
     *
     * @param predictedSecondsToEstablished calibrated forecast, counted from the request
     * @param idealSeconds                  the Checkpoint Fill-Time Law's time for the same bytes
     *                                      (the coordinator's Predictor says how it is reckoned)
     * @param basedOn                       earlier snapshots the forecast was fitted on
     * @param writtenBytes                  the bytes the forecast expects the snapshot to write to the
     *                                      store (new chunks, compressed), or -1 (forecasts made
     *                                      before it was recorded)
     * @param readShare                     how much of the generation's raw bytes its nodes had read for
     *                                      staging when the forecast was made: 0 at capture (and in every
     *                                      forecast written before it was recorded), more as staging goes
     *                                      ({@link StagingProgress})
     */
    record PredictionMade(String job, long generation, long rawBytes, int ranks, double predictedStallSeconds,
                          double predictedSecondsToEstablished, double idealSeconds, int basedOn, long writtenBytes,
                          double readShare) implements Event {
        public PredictionMade {
            Names.requireJob(job);
            Names.requireGeneration(generation);
            EventChecks.prediction(rawBytes, ranks, basedOn, writtenBytes, readShare);
        }

        /** The forecast at capture. */
        public PredictionMade(String job, long generation, long rawBytes, int ranks, double predictedStallSeconds,
                              double predictedSecondsToEstablished, double idealSeconds, int basedOn,
                              long writtenBytes) {
            this(job, generation, rawBytes, ranks, predictedStallSeconds, predictedSecondsToEstablished, idealSeconds,
                    basedOn, writtenBytes, 0);
        }

        /** A forecast that does not say what it expects written. */
        public PredictionMade(String job, long generation, long rawBytes, int ranks, double predictedStallSeconds,
                              double predictedSecondsToEstablished, double idealSeconds, int basedOn) {
            this(job, generation, rawBytes, ranks, predictedStallSeconds, predictedSecondsToEstablished, idealSeconds,
                    basedOn, -1);
        }

        /** This forecast made again at {@code share} of the bytes read, for {@code seconds} and {@code written}. */
        public PredictionMade during(double share, double seconds, long written) {
            return new PredictionMade(job, generation, rawBytes, ranks, predictedStallSeconds, seconds,
                    idealSeconds, basedOn, written, share);
        }
    }

    /**
     * How far a node's staging of its ranks' images of {@code generation} has come: {@code readBytes}
     * of its {@code totalBytes} raw bytes read, of which {@code freshBytes} were new to the store,
     * written as {@code writtenBytes} (compressed). Sent as each tenth of the bytes is read, for StagingSoFar.
     */
    record StagingProgress(String job, long generation, String node, long readBytes, long totalBytes, long freshBytes,
                           long writtenBytes) implements Event {
        public StagingProgress {
            Names.requireJob(job);
            Names.requireGeneration(generation);
            Placement.requireNode(node);
            EventChecks.stagingProgress(readBytes, totalBytes, freshBytes, writtenBytes);
        }
    }

    /**
     * What the node's remote-store layer has seen (sent with a heartbeat when it changed):
     * circuit {@code CLOSED}, {@code OPEN} (store considered down: images wait in the cache) or
     * {@code HALF_OPEN} (probing), and counts since the agent started.
     */
    record StoreHealthReported(String job, String node, String store, String circuit, long calls, long retries,
                               long failed, long rejected) implements Event {
        public StoreHealthReported {
            Names.requireJob(job);
            EventChecks.storeCounters(calls, retries, failed, rejected);
        }
    }

    /**
     * A node's cache for the job, reported after each retention pass (and when the agent starts):
     * what the coordinator needs to forecast when the cache fills. The sizes and count are the
     * cache's usage as staging's LocalCache.Usage has them; {@code keepGenerations} is the
     * retention ({@code cache.keep-generations}).
     */
    record CacheReported(String job, String node, long capacityBytes, long freeBytes, long jobBytes, int generations,
                         int keepGenerations) implements Event {
        public CacheReported {
            Names.requireJob(job);
            EventChecks.cacheReport(capacityBytes, freeBytes, jobBytes, generations, keepGenerations);
        }
    }

    /** The node's agent is alive (sent every few seconds); its log timestamp is what counts. */
    record Heartbeat(String job, String node) implements Event {
        /**
         * The {@code node} of the heartbeats a {@code ferry run --launch} sends while it holds the
         * job's launcher (not a host name: parentheses are not allowed in one).
         */
        public static final String LAUNCHER = "(launcher)";
        /** How often that {@code ferry run} sends one (one small event per job per second). */
        public static final long LAUNCHER_INTERVAL_MILLIS = 1000;

        public Heartbeat {
            Names.requireJob(job);
        }
    }

    /**
     * A node's agent is alive under its node name, whatever jobs it runs (sent every
     * {@code intervalMillis}; read live, never replayed). Keyed by {@link #AGENTS}, a name no job
     * can have, so every agent's presence is in one partition of the heartbeats topic, where an
     * agent starting under a node name claims it (eventlog's NodeClaim says how).
     *
     * @param incarnation this run of the agent (random, drawn at its start)
     * @param host        the host it runs on, and {@code home} its directory
     * @param epoch       the offset of its first presence in the log (-1 in that first one); a command
     *                    carries its node's newest (eventlog's EpochHeader)
     * @param leaving     its last word: it stops (or was refused the name), and the name is free now
     * @param peer        where it serves its cache to the other agents ({@code HOST:PORT}, "" where it does
     *                    not): known before any job, so a job's first launch can name the node whose agent
     *                    leads a computation that spans nodes (DMTCP's coordinator)
     */
    record AgentPresent(String node, String incarnation, String host, String home, long intervalMillis, long epoch,
                        boolean leaving, String peer) implements Event {
        /** The key of every agent's presence (not a job id: parentheses are not allowed in one). */
        public static final String AGENTS = "(agents)";

        public AgentPresent {
            Placement.requireNode(node);
            peer = peer == null ? "" : peer;
            EventChecks.presence(incarnation, host, home, intervalMillis, epoch, peer);
        }

        /** An agent that serves no cache to peers. */
        public AgentPresent(String node, String incarnation, String host, String home, long intervalMillis, long epoch,
                            boolean leaving) {
            this(node, incarnation, host, home, intervalMillis, epoch, leaving, "");
        }

        @Override
        public String job() {
            return AGENTS;
        }

        /** The same agent's last word. */
        public AgentPresent leave() {
            return new AgentPresent(node, incarnation, host, home, intervalMillis, epoch, true, peer);
        }

        /** The same agent's presence once its first is in the log at offset {@code first}. */
        public AgentPresent at(long first) {
            return new AgentPresent(node, incarnation, host, home, intervalMillis, first, leaving, peer);
        }
    }

    /**
     * A rank's process ended. {@link #UNKNOWN_EXIT} for a rank the site's launcher started
     * (its exit code is the launcher's to know; {@link LauncherExited} reports it).
     */
    record RankExited(String job, int rank, int exitCode) implements Event {
        public static final int UNKNOWN_EXIT = -1;

        public RankExited {
            Names.requireJob(job);
            Names.requireRank(rank);
        }
    }

    /**
     * Ranks started by the site's launcher ({@code ferry rank}) registered with {@code node}'s
     * agent, to restart from {@code generation} (-1: from the beginning). The coordinator
     * learns the placement from these and answers each with a {@link Command.Launch} that
     * adopts them.
     *
     * @param ranks {@link RankSet}'s text form
     */
    record RanksJoined(String job, long generation, String node, String ranks) implements Event {
        public RanksJoined {
            Names.requireJob(job);
            Placement.requireNode(node);
            RankSet.parse(ranks);
        }

        public RankSet rankSet() {
            return RankSet.parse(ranks);
        }
    }

    /**
     * The coordinator asks the job's submitter ({@code ferry run --launch}) to (re)run the
     * site's launcher, its ranks restarting from {@code generation} (-1: from the beginning);
     * any launcher of an earlier attempt is stopped first.
     */
    record LauncherRequested(String job, int attempt, long generation, String cause) implements Event {
        public LauncherRequested {
            Names.requireJob(job);
            EventChecks.launcherAttempt(attempt);
        }
    }

    /** The site's launcher of {@code attempt} exited by itself with {@code exitCode} (0: every rank succeeded). */
    record LauncherExited(String job, int attempt, int exitCode) implements Event {
        public LauncherExited {
            Names.requireJob(job);
        }
    }

    /**
     * The coordinator rolls every rank back to {@code generation} (-1: from the beginning);
     * generations after it are abandoned. Each node then reports {@link ImagesRestored} or
     * {@link RestoreFailed}.
     */
    record RecoveryStarted(String job, long generation, String cause) implements Event {
        public RecoveryStarted {
            Names.requireJob(job);
        }
    }

    /**
     * A node materialised its ranks' images of {@code generation} (verified) and relaunched
     * them; {@code sources} is the tier each rank's image came from: local, partner or remote.
     */
    record ImagesRestored(String job, long generation, String node, Map<Integer, String> sources) implements Event {
        public ImagesRestored {
            Names.requireJob(job);
            Placement.requireNode(node);
            sources = Map.copyOf(sources);
        }
    }

    /**
     * A node's answer to {@link Command.PlanRestart}: the tier each of its ranks would restore
     * {@code generation} from (local, partner or remote), or why it cannot say ({@code problem}).
     */
    record RestartPlanned(String job, long generation, String node, String request, Map<Integer, String> sources,
                          String problem) implements Event {
        public RestartPlanned {
            Names.requireJob(job);
            Placement.requireNode(node);
            sources = Map.copyOf(sources);
            problem = problem == null ? "" : problem;
        }
    }

    /**
     * {@code node}'s agent serves its cache to the job's other agents at {@code address}
     * ({@code HOST:PORT}): partner copies go there, and restarts elsewhere fetch from there.
     */
    record PeerAddress(String job, String node, String address) implements Event {
        public PeerAddress {
            Names.requireJob(job);
            Placement.requireNode(node);
            io.ferry.model.PeerAddresses.requireAddress(address);
        }
    }

    /**
     * {@code node} copied its images of {@code generation} for {@code ranks} ({@link RankSet}'s
     * text form) into {@code partner}'s cache (SCR's PARTNER level), {@code bytes} in
     * {@code seconds}; both fsynced there.
     */
    record PartnerCopied(String job, long generation, String node, String partner, String ranks, long bytes,
                         double seconds) implements Event {
        public PartnerCopied {
            Names.requireJob(job);
            Names.requireGeneration(generation);
            Placement.requireNode(node);
            Placement.requireNode(partner);
            RankSet.parse(ranks);
            EventChecks.copiedBytes(bytes);
        }

        public RankSet rankSet() {
            return RankSet.parse(ranks);
        }
    }

    /**
     * The job's ranks were placed anew (a node was lost and its ranks moved), or placed where its run's start
     * launches them ({@link #START}): {@link Placement}'s text form.
     */
    record JobPlaced(String job, String placement, String reason) implements Event {
        /** The reason of the placement a run's start launches its ranks on, logged before the launches. */
        public static final String START = "start";

        public JobPlaced {
            Names.requireJob(job);
            EventChecks.placement(placement);
        }
    }

    /**
     * A node could not restore its ranks of {@code generation}, or a rank refused what was restored.
     * Only a failure that proves the generation's data unusable sets it aside for the run
     * ({@code provenBad}; the agent's RestoreErrors says which do); any other is tried again after
     * the recovery backoff, and the job fails with the reason after {@code recovery.max-attempts}.
     *
     * @param storeUnreachable the store could not be reached (after the node's retries)
     * @param provenBad        the data is proven unusable (never together with {@code storeUnreachable});
     *                         true in events written before the field existed, as they were read then
     * @param launch           the node could not launch the ranks (their program missing, the job's store not opened
     *                         there), apart from restoring their images; false in events written before the field
     */
    record RestoreFailed(String job, long generation, String node, String reason, boolean storeUnreachable,
                         boolean provenBad, boolean launch) implements Event {
        public RestoreFailed {
            Names.requireJob(job);
            Placement.requireNode(node);
            reason = reason == null ? "unknown" : reason;
            provenBad = provenBad && !storeUnreachable;
        }

        /** A restore that failed ({@code launch} false). */
        public RestoreFailed(String job, long generation, String node, String reason, boolean storeUnreachable,
                             boolean provenBad) {
            this(job, generation, node, reason, storeUnreachable, provenBad, false);
        }

        /** A failure that proves the data bad (a rank refused its restart data, nothing verified). */
        public RestoreFailed(String job, long generation, String node, String reason) {
            this(job, generation, node, reason, false, true);
        }
    }

    /**
     * The coordinator took a halt request: the job's next checkpoint is its last, requested in
     * time for it to be established before {@code deadlineMillis}; then the job stops.
     */
    record HaltRequested(String job, long deadlineMillis, String why) implements Event {
        public HaltRequested {
            Names.requireJob(job);
            EventChecks.deadline(job, deadlineMillis);
            why = why == null ? "" : why;
        }
    }

    /** The job ended: every rank exited 0 ({@code success}), or it gave up. */
    record JobFinished(String job, boolean success, String detail) implements Event {
        public JobFinished {
            Names.requireJob(job);
        }
    }
}

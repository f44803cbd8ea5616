package io.ferry.coordinator;

import io.ferry.coordinator.predict.StagingSoFar;
import io.ferry.eventlog.RequestTopics;
import io.ferry.model.Event;
import io.ferry.model.Placement;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The coordinator's state: a pure fold over events in log order. Applying the same log
 * always gives the same state, which is how a restarted coordinator loses nothing. Not
 * thread-safe: one thread applies.
 */
public final class Jobs {
    private final Map<String, JobView> jobs = new TreeMap<>();

    public Collection<JobView> all() {
        return jobs.values();
    }

    public Optional<JobView> get(String job) {
        return Optional.ofNullable(jobs.get(job));
    }

    /** Installs a job's state read from a {@link FoldSnapshot}, in place of what was folded of it. */
    void put(JobView j) {
        jobs.put(j.job, j);
    }

    /** Forgets a job: another coordinator of the group owns it now. */
    void remove(String job) {
        jobs.remove(job);
    }

    /**
     * Why {@code e} cannot be folded into its job as it stands, if it cannot: a rank beyond the
     * job's ranks (a forged or corrupt record; folded, it would size per-rank tables by it).
     * Such an event is parked like a malformed one, never folded.
     */
    public Optional<String> refuses(Event e) {
        return refuses(e, null);
    }

    /**
     * {@link #refuses(Event)}, and for an event a login asked for through its request topic
     * ({@code by}; null: an operator's), a job that is not that login's ({@link JobOwners}).
     */
    public Optional<String> refuses(Event e, String by) {
        JobView j = jobs.get(e.job());
        Optional<String> notOwner = JobOwners.refuses(j, e.job(), e instanceof Event.JobStarted, by);
        if (notOwner.isPresent()) {
            return notOwner;
        }
        if (j == null || j.started == null) {
            return Optional.empty();
        }
        int rank = e instanceof Event.ImageCaptured c ? c.rank() : e instanceof Event.ImageStaged s ? s.rank()
                : e instanceof Event.StagingFailed f ? f.rank() : e instanceof Event.RankExited x ? x.rank() : -1;
        if (e instanceof Event.RanksJoined r) { // a launcher's ranks: the newest of them counts, as for one rank above
            rank = r.rankSet().stream().max().orElse(-1);
        }
        if (rank >= j.ranks()) {
            return Optional.of("rank " + rank + " of job " + e.job() + ", which has " + j.ranks() + " ranks");
        }
        return Optional.empty();
    }

    /**
     * Folds {@code e}, read from record {@code r}, as the coordinator does when it is not refused
     * ({@link #refuses(Event, String)}, the requester from the record): what a viewer of the log
     * (`ferry status`, `ferry run`) folds, so it shows what the coordinator decided on. Empty when refused.
     */
    public Optional<JobView> fold(Event e, ConsumerRecord<byte[], byte[]> r) {
        String by = RequestTopics.by(r);
        return refuses(e, by).isPresent() ? Optional.empty() : Optional.of(apply(e, r.timestamp(), by));
    }

    /** Applies one event, logged at {@code timestampMillis}; returns the job it changed. */
    public JobView apply(Event e, long timestampMillis) {
        return apply(e, timestampMillis, null);
    }

    /** {@link #apply(Event, long)}, {@code by} the login that asked for it (null: an operator). */
    public JobView apply(Event e, long timestampMillis, String by) {
        return apply(e, timestampMillis, timestampMillis, by);
    }

    /**
     * {@link #apply(Event, long, String)} for an event that counts from {@code timestampMillis} (live: when
     * the coordinator read it) and was logged at {@code loggedAtMillis} (its record's time): the time a
     * forecast measures a capture by, on the clock its marks are on ({@link GenerationView#capturedLoggedAtMillis}).
     */
    public JobView apply(Event e, long timestampMillis, long loggedAtMillis, String by) {
        JobView j = jobs.computeIfAbsent(e.job(), JobView::new);
        if (e instanceof Event.JobStarted s) {
            // a new run of a job whose last one did not succeed (or was halted): its start resumes from a snapshot
            j.startResumes = j.started != null && (!j.success().orElse(false) || j.halted);
            j.launched = false;
            if (by != null) {
                j.owner = by; // refuses() let it through: the job is new, or already this login's
            }
            j.started = s;
            j.lastRequestMillis = timestampMillis; // the first interval starts with the job
            if (j.startedAtMillis == 0) {
                j.startedAtMillis = timestampMillis;
            }
            placed(j, s.where(), timestampMillis);
            // A new run resumes from what was established before it: what the last run left in flight
            // (perhaps of more ranks) is another timeline, never committed as this run's.
            j.abandonAfter(Long.MIN_VALUE, "abandoned: the job was run again");
            // A new run looks again at what an earlier one set aside: a restore that failed for a cause
            // outside the data (a node, a program, a store away) may work now; one that fails again is set
            // aside again and the run falls back once more, never in a loop.
            j.generations.values().forEach(g -> g.restoreFailure = "");
            j.success = null;
            j.rollingBack = false;
            j.rollbacksWithoutProgress = 0; // a new `ferry run` gets the whole recovery budget again
            j.launchFailure = "";
            j.launcherSeenMillis = 0; // a new `ferry run`: watched from its first heartbeat
            j.launcherExit = null;
            j.restoreFailed = null;
            j.exits.clear();
            j.halted = false;
            j.haltDeadlineMillis = 0; // a halt ends the run that it was asked of
            j.haltRequestedAtMillis = 0;
            j.startDeferredSinceMillis = -1; // an earlier run's wait for its DMTCP lead never starts this one
            startPlaced(j, 0);
        } else if (e instanceof Event.JobPlaced p) {
            if (j.started != null) {
                j.launched = true;
                placed(j, Placement.parse(p.placement(), j.ranks()), timestampMillis);
                if (!Event.JobPlaced.START.equals(p.reason())) {
                    startPlaced(j, 0); // ranks moved: a rollback launches every node again
                } else if (j.startPlacedAtMillis == 0) {
                    startPlaced(j, timestampMillis);
                } // else the same start delivered again: the answers to it stand
            }
        } else if (e instanceof Event.CheckpointRequested r) {
            j.launched |= j.started != null; // a log from before starts were placed in it: a checkpoint says so too
            GenerationView g = gen(j, r.generation());
            g.requestedAtMillis = timestampMillis;
            g.placement = j.placement;
            j.lastRequestMillis = timestampMillis;
        } else if (e instanceof Event.ImageCaptured c) {
            GenerationView g = gen(j, c.generation());
            g.rawBytes += g.captured(c);
            g.maxStallSeconds = Math.max(g.maxStallSeconds, c.seconds());
            if (g.state == GenerationView.State.OPEN && g.capturedRanks() >= j.ranks()) {
                g.state = GenerationView.State.CAPTURED;
                g.capturedAtMillis = timestampMillis;
                g.capturedLoggedAtMillis = loggedAtMillis;
                g.othersLeftAtCapture = g.leftOnOtherNodes(c.node(), stagingReportsFolded(j, g.generation));
            }
        } else if (e instanceof Event.CaptureFailed f) {
            GenerationView g = gen(j, f.generation());
            // The first reason stands (each node may report one); a late failure does not undo an established snapshot.
            if (g.state != GenerationView.State.FAILED && g.state != GenerationView.State.ESTABLISHED) {
                g.state = GenerationView.State.FAILED;
                g.failure = f.reason();
            }
            g.compact();
        } else if (e instanceof Event.ImageStaged s) {
            GenerationView g = gen(j, s.generation());
            if (g.staged(s)) {
                g.storedBytes += s.storedBytes();
                g.lastStagedAtMillis = Math.max(g.lastStagedAtMillis, timestampMillis);
            }
            g.stagingProblem = "";
        } else if (e instanceof Event.StagingFailed s) {
            gen(j, s.generation()).stagingProblem = "staging rank " + s.rank() + " waits: " + s.reason();
        } else if (e instanceof Event.SnapshotEstablished s) {
            GenerationView g = gen(j, s.generation());
            if (g.abandoned()) {
                return j; // committed while a rollback or a new run left its timeline: never a restart point
            }
            g.state = GenerationView.State.ESTABLISHED;
            // < 0: found on the store
            g.secondsToEstablished = s.secondsSinceRequest() >= 0 ? s.secondsSinceRequest() : Double.NaN;
            g.compact(); // per-rank detail is no longer needed: keep what status and forecasts read
        } else if (e instanceof Event.PeerAddress a) {
            j.peers.put(a.node(), a.address());
            j.peerSeenMillis.put(a.node(), timestampMillis);
        } else if (e instanceof Event.PartnerCopied c) {
            GenerationView g = gen(j, c.generation());
            g.partnerRanks += c.rankSet().size();
            g.partnerBytes += c.bytes();
        } else if (e instanceof Event.Heartbeat h) {
            if (Event.Heartbeat.LAUNCHER.equals(h.node())) {
                j.launcherSeenMillis = Math.max(j.launcherSeenMillis, timestampMillis);
                return j;
            }
            j.peerSeenMillis.computeIfPresent(h.node(), (n, t) -> Math.max(t, timestampMillis));
            if (j.heartbeats.containsKey(h.node())) { // a node the job no longer uses stays forgotten
                j.heartbeats.merge(h.node(), timestampMillis, Math::max);
                j.answered.add(h.node());
            }
        } else if (e instanceof Event.PredictionMade p) {
            gen(j, p.generation()).predicted(p);
        } else if (e instanceof Event.StagingProgress p) {
            GenerationView g = j.generations.get(p.generation());
            if (g != null && (g.state == GenerationView.State.OPEN || g.state == GenerationView.State.CAPTURED)) {
                g.stagingReported(p, timestampMillis);
            }
        } else if (e instanceof Event.StoreHealthReported h) {
            j.storeHealth.put(h.node(), h);
        } else if (e instanceof Event.CacheReported c) {
            j.caches.put(c.node(), c);
        } else if (e instanceof Event.RankExited x) {
            j.exits.put(x.rank(), x.exitCode());
        } else if (e instanceof Event.ImagesRestored r) {
            j.restarts.restored(r.generation(), r.node(), r.sources(), timestampMillis);
            if (r.generation() < 0 && j.startPlacedAtMillis > 0) {
                j.startAnswered.add(r.node()); // its ranks run from the beginning
            }
            if (j.placement != null) {
                j.placement.ranksOn(r.node()).stream().forEach(j.exits::remove); // their new lives begin
            }
            boolean byLauncher = j.placement != null && j.placement.byLauncher();
            if (byLauncher && r.generation() == j.launchGeneration) { // a launcher's ranks: adopted, now they run
                r.sources().keySet().forEach(j.restoredRanks::set);
                if (j.restoredRanks.cardinality() >= j.ranks()) {
                    j.lastRequestMillis = timestampMillis; // the first interval starts once every rank runs
                }
            }
            if (j.rollingBack && r.generation() == j.rollbackGeneration) {
                j.restoredNodes.add(r.node());
                if (byLauncher) { // nodes are known only as ranks join
                    j.rollingBack = j.restoredRanks.cardinality() < j.ranks();
                } else {
                    j.rollingBack = j.placement != null && !j.restoredNodes.containsAll(j.placement.nodes());
                }
            }
        } else if (e instanceof Event.RanksJoined r) {
            if (j.placement != null && j.placement.byLauncher() && r.generation() == j.launchGeneration) {
                j.placement = j.placement.joining(r.node(), r.rankSet());
                j.heartbeats.putIfAbsent(r.node(), timestampMillis);
            }
        } else if (e instanceof Event.LauncherRequested l) {
            j.launched |= j.started != null;
            j.launchAttempt = Math.max(j.launchAttempt, l.attempt());
            j.launcherExit = null; // a new attempt: the last one's exit is answered
            j.launchGeneration = l.generation();
            j.launchCause = l.cause();
            if (l.generation() >= 0) { // a launch that resumes from a snapshot: a restart too
                j.restarts.launched(l.generation(), l.cause(), timestampMillis);
            }
            j.restoredRanks.clear();
            if (j.started != null) {
                placed(j, Placement.launcher(j.ranks()), timestampMillis); // learned anew as ranks join
            }
        } else if (e instanceof Event.RestartPlanned) {
            // an answer to a dry run (ferry restart --dry-run): nothing to fold
        } else if (e instanceof Event.LauncherExited x) {
            // The coordinator's to act on (it finishes or rolls back the job); kept until answered.
            if (x.attempt() == j.launchAttempt) {
                j.launcherExit = x;
            }
        } else if (e instanceof Event.RestoreFailed f) {
            j.restarts.failed(f.generation(), f.node(), f.reason());
            if (f.generation() < 0 && j.startPlacedAtMillis > 0) {
                j.startAnswered.add(f.node()); // it got the launch; the failure is answered as a rank's exit is
            }
            if (j.rollingBack && f.generation() == j.rollbackGeneration && f.generation() >= 0) {
                j.restoreFailed = f; // to be answered by a rollback below it (or the same, after a backoff)
            }
            if (f.generation() < 0) {
                j.launchFailure = "node " + f.node() + ": " + f.reason();
            } else if (f.provenBad()) { // the store away, a program missing on a node: nothing against the generation
                GenerationView g = gen(j, f.generation());
                g.restoreFailure = "node " + f.node() + ": " + f.reason();
            }
        } else if (e instanceof Event.RecoveryStarted r) {
            j.launched |= j.started != null;
            startPlaced(j, 0); // a rollback launches every node again, with a deadline of its own (Overdue)
            j.recoveries++;
            j.restarts.started(r.generation(), r.cause(), timestampMillis);
            long newest = j.newestEstablished().map(GenerationView::generation).orElse(-1L);
            j.rollbacksWithoutProgress = newest > j.progressMark ? 1 : j.rollbacksWithoutProgress + 1;
            j.progressMark = Math.max(j.progressMark, newest);
            j.lastRecoveryMillis = timestampMillis;
            j.launcherExit = null;
            j.restoreFailed = null;
            j.rollingBack = true;
            j.rollbackGeneration = r.generation();
            j.restoredNodes.clear();
            // Generations after the one rolled back to never complete: the ranks run on from it. One
            // captured before the failure and still staging belongs to a timeline that is gone.
            j.abandonAfter(r.generation(), "abandoned by the rollback to generation " + r.generation());
        } else if (e instanceof Event.HaltRequested h) {
            if (j.haltDeadlineMillis == 0 || h.deadlineMillis() < j.haltDeadlineMillis) { // the earliest deadline holds
                j.haltDeadlineMillis = h.deadlineMillis();
            }
            if (j.haltRequestedAtMillis == 0) {
                j.haltRequestedAtMillis = timestampMillis;
            }
        } else if (e instanceof Event.JobFinished f) {
            j.generations.values().stream().filter(g -> g.state == GenerationView.State.OPEN).forEach(g -> {
                g.state = GenerationView.State.FAILED;
                g.failure = "the job ended before every rank was captured";
            });
            j.success = f.success();
            j.halted = j.haltDeadlineMillis > 0; // the run ended on a halt asked of it: the next run resumes
            j.finishedAtMillis = timestampMillis;
            j.finishDetail = f.detail();
        } else {
            throw new AssertionError(e);
        }
        return j;
    }

    /** The current run's start placed at {@code atMillis} (log time; 0: none, or no longer the newest launch). */
    private static void startPlaced(JobView j, long atMillis) {
        j.startPlacedAtMillis = atMillis;
        j.startAnswered.clear();
        j.startResent = false;
    }

    /** A new placement: every node of it gets a fresh heartbeat deadline; nodes it drops are forgotten. */
    private static void placed(JobView j, Placement p, long timestampMillis) {
        j.placement = p;
        j.heartbeats.clear();
        j.answered.clear();
        p.nodes().forEach(n -> j.heartbeats.put(n, timestampMillis));
        j.silentSinceMillis = 0;
        j.heartbeatsFreshUntil = 0;
    }

    private static GenerationView gen(JobView j, long g) {
        return j.generations.computeIfAbsent(g, x -> new GenerationView(x, j.nodeNames, j.ranks()));
    }

    /** Generations of a job looked back over for a passed mark ({@link #stagingReportsFolded}). */
    private static final int REPORTS_LOOKBACK = 10;

    /**
     * Whether the job's staging reports are folded here: one of its last {@link #REPORTS_LOOKBACK} generations
     * before {@code before} passed its first mark. A fold of the events topic alone (a coordinator's replay: the
     * reports are on the heartbeats topic) passes none.
     */
    private static boolean stagingReportsFolded(JobView j, long before) {
        int looked = 0;
        for (GenerationView h : j.generations.headMap(before, false).descendingMap().values()) {
            if (!Double.isNaN(h.secondsToMark(StagingSoFar.MARKS[0]))) {
                return true;
            }
            if (++looked >= REPORTS_LOOKBACK) {
                return false;
            }
        }
        return false;
    }
}

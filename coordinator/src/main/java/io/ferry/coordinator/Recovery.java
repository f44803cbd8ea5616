package io.ferry.coordinator;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.CrashPoint;
import io.ferry.model.Event;
import io.ferry.model.Placement;
import io.ferry.model.RankSet;
import io.ferry.staging.StagingConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The coordinator's recovery decisions, kept apart from its loop: starting a job on its nodes,
 * rolling every rank back (each node restores its own ranks from the nearest verified tier),
 * falling back to an older generation when a node cannot restore one, and moving a lost
 * node's ranks to a live node. Every decision is an event appended before the commands it
 * sends. Called on the coordinator thread only.
 */
final class Recovery {
    /**
     * A launcher's `ferry run` heard from this recently is alive: a silent node is then a node lost, not an allocation
     * ended.
     */
    private static final long LAUNCHER_FRESH_MILLIS = 3 * Event.Heartbeat.LAUNCHER_INTERVAL_MILLIS;
    private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);
    private final KafkaLog log;
    private final Object lock;
    private final Clock clock;

    /** Which agent leads a DMTCP job's computation. */
    private final DmtcpLead dmtcpLead;
    /** The newest launch id given (every launch of one start shares one; the next start's is higher). */
    private long lastLaunchId;

    Recovery(KafkaLog log, Object lock, Clock clock, AgentEpochs agents) {
        this.dmtcpLead = new DmtcpLead(agents);
        this.log = log;
        this.lock = lock;
        this.clock = clock;
    }

    /**
     * A rank exited: the job is done once every rank exited 0; a failed rank ends a job that did
     * not ask for --auto-recover (or whose proc images cannot be restored), else a rollback is
     * pending. A launcher's rank ({@link Event.RankExited#UNKNOWN_EXIT}) is left to its launcher's exit.
     */
    void onRankExited(JobView j, Event.RankExited x) {
        if (x.exitCode() == Event.RankExited.UNKNOWN_EXIT) {
            return;
        }
        if (x.exitCode() != 0) {
            String cause = "rank " + x.rank() + " exited with " + x.exitCode();
            if (!j.started.autoRecover()) {
                finish(j, false, cause + " and the job did not ask for --auto-recover");
            } else if ("proc".equals(j.started.launch().capture())) {
                finish(j, false, cause + "; its proc images are ELF cores that Ferry cannot restore"
                        + " (an external restorer is needed), so it is not rolled back");
            } else if (!j.rollingBack && j.pendingRollback == null) {
                // Generations captured before the failure are good: let their staging finish first,
                // so the rollback loses as little work as it can (the coordinator's tick starts it).
                j.pendingRollback = cause;
                j.pendingSinceMillis = clock.millis();
            }
        } else if (j.exits.size() == j.ranks() && j.exits.values().stream().allMatch(c -> c == 0)) {
            finish(j, true, "every rank exited 0");
        }
    }

    /**
     * Rank exits that are in the log but that no one decided on: those folded while the job's
     * partition was replayed (they arrived while no coordinator ran, or before this one took the
     * job over) are never reacted to live. Decided now, from the folded state, as
     * {@link #onRankExited} would have: the job is done once every rank exited 0; a failed rank
     * ends it or leaves a rollback pending. Called on every tick for a live job; true if it decided.
     */
    boolean settleExits(JobView j) {
        if (j.started == null || j.finished() || j.rollingBack || j.pendingRollback != null || j.exits.isEmpty()) {
            return false;
        }
        for (Map.Entry<Integer, Integer> x : j.exits.entrySet()) {
            if (x.getValue() != 0 && x.getValue() != Event.RankExited.UNKNOWN_EXIT) {
                onRankExited(j, new Event.RankExited(j.job, x.getKey(), x.getValue()));
                return true;
            }
        }
        if (j.exits.size() == j.ranks()) {
            onRankExited(j, new Event.RankExited(j.job, j.exits.keySet().iterator().next(), 0));
            return j.finished();
        }
        return false;
    }

    /**
     * Answers what the folded state says is unanswered, whether or not this coordinator saw it live:
     * the current launcher attempt's exit, and a failed restore of the generation being rolled back
     * to. A coordinator that crashed after such an event was logged and before it acted on it finds
     * it here after its replay (a live one has answered it already: a pending rollback, a new
     * rollback or the job's end, each of which this checks first). Returns whether it acted.
     */
    boolean settleUnanswered(JobView j) {
        if (j.started == null || j.finished() || j.pendingRollback != null) {
            return false;
        }
        Event.LauncherExited x = j.launcherExit;
        if (x != null && !j.rollingBack && x.attempt() == j.launchAttempt) {
            onLauncherExited(j, x);
            return true;
        }
        Event.RestoreFailed f = j.restoreFailed;
        if (f != null && j.rollingBack && f.generation() == j.rollbackGeneration) {
            onRestoreFailed(j, f);
            return true;
        }
        return false;
    }

    /** The site's launcher ended: the job is done, or failed, or rolls back (only its current attempt counts). */
    void onLauncherExited(JobView j, Event.LauncherExited x) {
        if (x.attempt() != j.launchAttempt) {
            return; // an earlier attempt, stopped for a rollback already decided
        }
        if (x.exitCode() == 0) {
            finish(j, true, "the launcher exited 0");
            return;
        }
        String cause = "the launcher exited with " + x.exitCode();
        if (!j.placement.complete()) {
            int joined = j.placement.nodes().stream().mapToInt(n -> j.placement.ranksOn(n).size()).sum();
            finish(j, false,
                    cause + " before every rank joined (" + joined + " of " + j.ranks() + "): does every node it"
                    + " starts ranks on run `ferry agent`? (see the launcher's output)");
        } else if (!j.started.autoRecover()) {
            finish(j, false, cause + " and the job did not ask for --auto-recover");
        } else if (j.pendingRollback == null) {
            j.pendingRollback = cause; // let staging of generations captured before the failure finish first
            j.pendingSinceMillis = clock.millis();
        }
    }

    /**
     * A job (re)started: launch its ranks; a job whose last run did not succeed resumes from its newest usable
     * snapshot.
     */
    void onStarted(JobView j, boolean resumedAfterFailure) {
        if (dmtcpLead.notHeardYet(j)) {
            // Its agent's presence comes on the heartbeats topic, read apart from the job's start: an agent started a
            // moment before the job is heard within one of its intervals. Launched now, each node's ranks would be a
            // computation of their own, the sockets between nodes not checkpointed.
            LOG.info("job " + j.job + ": waiting to hear the agent of " + j.placement.nodeOf(0)
                    + " (rank 0), which runs the job's DMTCP coordinator, before launching");
            j.startDeferredSinceMillis = clock.millis();
            j.startDeferredResumes = resumedAfterFailure;
            return;
        }
        start(j, resumedAfterFailure);
    }

    /**
     * A start deferred until rank 0's agent is heard: decided once it is, or after {@code waitMillis} without it
     * (then as before, each node's ranks a computation of their own). Whether the job's start is still waiting.
     */
    boolean settleDeferredStart(JobView j, long now, long waitMillis) {
        if (j.startDeferredSinceMillis < 0) {
            return false;
        }
        if (dmtcpLead.notHeardYet(j) && now - j.startDeferredSinceMillis < waitMillis) {
            return true;
        }
        j.startDeferredSinceMillis = -1;
        start(j, j.startDeferredResumes);
        return false;
    }

    private void start(JobView j, boolean resumedAfterFailure) {
        long g = resumedAfterFailure ? j.newestUsable(Long.MAX_VALUE).map(GenerationView::generation).orElse(-1L) : -1;
        if (g >= 0) {
            rollBack(j, g, "resumed by a new ferry run");
        } else {
            if (!j.started.where().byLauncher()) { // a launcher's attempt is logged as LauncherRequested
                // Logged before the launches go out: a coordinator that takes the job over knows the start was decided.
                log.append(new Event.JobPlaced(j.job, j.placement.toString(), Event.JobPlaced.START));
            }
            CrashPoint.reach("coordinator.start-placed"); // the start logged, no launch command sent
            launchAll(j, -1, "start");
        }
    }

    /** Rolls every rank back to {@code g} (-1: from the beginning) on the job's current placement. */
    void rollBack(JobView j, long g, String cause) {
        log.append(new Event.RecoveryStarted(j.job, g, cause));
        synchronized (lock) { // until the event comes back round: no second rollback, no checkpoint meanwhile
            j.rollingBack = true;
            j.rollbackGeneration = g;
            j.restoredNodes.clear();
            j.launcherExit = null; // answered by this rollback (the fold clears them too, on RecoveryStarted)
            j.restoreFailed = null;
        }
        CrashPoint.reach("coordinator.rollback-started"); // logged, no launch command sent
        launchAll(j, g, cause);
    }

    /**
     * The rollback decided after a failure, once staging has had its chance: now, or after a
     * backoff when the rollbacks before it made no progress (no newer established snapshot):
     * {@code recovery.backoff}, doubled for each further one, at most {@code recovery.max-backoff}.
     * After {@code recovery.max-attempts} of those the job fails with the reason instead, as a
     * batch system's requeue limit does: a rank that fails at start is not relaunched for ever.
     */
    void rollBackPending(JobView j, long now) {
        Map<String, String> settings = j.started.launch().settings();
        int max = RecoveryPolicy.setting(settings, StagingConfig.RECOVERY_MAX_ATTEMPTS);
        long newest = j.newestEstablished().map(GenerationView::generation).orElse(-1L);
        int without = newest > j.progressMark ? 0 : j.rollbacksWithoutProgress;
        String cause = j.pendingRollback;
        if (max > 0 && without >= max) {
            j.pendingRollback = null;
            finish(j, false, cause + "; gave up after " + without + " rollback" + (without == 1 ? "" : "s")
                    + " in a row without a newer established snapshot (recovery.max-attempts=" + max + ")");
            return;
        }
        long wait = RecoveryPolicy.backoffMillis(settings, without) - (now - j.lastRecoveryMillis);
        if (wait > 0) {
            if (j.pendingNoticedFor != j.pendingSinceMillis) { // said once per pending rollback, not every tick
                j.pendingNoticedFor = j.pendingSinceMillis;
                System.err.printf(Locale.ROOT,
                        "ferry coordinator: %s: rolling back in %.1f s (%d rollback%s in a row"
                                + " without a newer established snapshot; recovery.backoff)%n",
                        j.job, wait / 1000.0, without, without == 1 ? "" : "s");
            }
            return; // still pending: a later tick rolls back
        }
        j.pendingRollback = null;
        rollBackBelow(j, Long.MAX_VALUE, cause);
    }

    /** Rolls back to the newest usable generation below {@code belowExclusive}, or from the beginning. */
    void rollBackBelow(JobView j, long belowExclusive, String cause) {
        rollBack(j, j.newestUsable(belowExclusive).map(GenerationView::generation).orElse(-1L), cause);
    }

    /**
     * A node could not restore {@code f.generation()}, or a rank found its restored data bad
     * (after the node restored it): the whole job falls back to the one before.
     */
    void onRestoreFailed(JobView j, Event.RestoreFailed f) {
        if (f.generation() == j.rollbackGeneration && f.generation() >= 0 && j.recoveries > 0 && !j.finished()) {
            if (!f.provenBad()) {
                // Nothing is known against the generation (the store away, a program or checkpointer missing on the
                // node, a store it cannot open): the same rollback again, after the backoff (rollBackPending), until
                // recovery.max-attempts in a row fail the job with the reason.
                if (j.pendingRollback == null) {
                    j.pendingRollback = "generation " + f.generation() + " could not be restored on node " + f.node()
                            + ": " + f.reason();
                    j.pendingSinceMillis = clock.millis();
                }
                return;
            }
            rollBackBelow(j, f.generation(), "generation " + f.generation() + " is unusable on node " + f.node()
                    + " (" + f.reason() + ")");
        }
    }

    /**
     * {@code lost} is silent: its ranks move to the next live node of the placement, and every
     * rank rolls back. Returns false when no other node is left (the caller fails the job or
     * tries the same node once more).
     */
    boolean moveOffLostNode(JobView j, String lost, long nowMillis, long timeoutMillis) {
        Placement p = j.placement;
        List<String> nodes = p.nodes();
        int at = nodes.indexOf(lost);
        for (int i = 1; i < nodes.size(); i++) {
            String candidate = nodes.get((at + i) % nodes.size());
            if (nowMillis - j.lastHeartbeatMillis(candidate) < timeoutMillis) {
                Placement moved = p.moving(lost, candidate);
                String why = "node " + lost + " lost; its ranks " + p.ranksOn(lost) + " move to " + candidate;
                log.append(new Event.JobPlaced(j.job, moved.toString(), why));
                log.send(lost, launch(j, lost, -1, "", why)); // stops anything left there, should it come back
                synchronized (lock) {
                    j.placement = moved;
                    j.heartbeats.remove(lost);
                    j.heartbeatsFreshUntil = 0;
                }
                rollBackBelow(j, Long.MAX_VALUE, why);
                return true;
            }
        }
        return false;
    }

    /**
     * Starts the job's ranks from {@code g}: Ferry's own launch on each node of the placement,
     * or, for ranks the site's launcher places, a request to the job's submitter to run the
     * launcher again (its ranks join their nodes' agents, which then get an adopting launch).
     */
    private void launchAll(JobView j, long g, String cause) {
        if (j.started.where().byLauncher()) {
            int attempt = j.launchAttempt + 1;
            log.append(new Event.LauncherRequested(j.job, attempt, g, cause));
            synchronized (lock) { // until the event comes back round: the old attempt's exit is ignored
                j.launchAttempt = attempt;
                j.launchGeneration = g;
                j.launchCause = cause;
                j.placement = Placement.launcher(j.ranks());
                j.restoredRanks.clear();
            }
            return;
        }
        launchOn(j, j.placement.nodes(), g, cause);
    }

    /** One launch of the job's ranks on each of {@code nodes}, from {@code g}, under its DMTCP lead, with one id. */
    private void launchOn(JobView j, Collection<String> nodes, long g, String cause) {
        Map<String, Command.Launch> launches = new LinkedHashMap<>();
        String lead = dmtcpLead.of(j);
        long id = nextLaunchId();
        for (String node : nodes) {
            launches.put(node, launch(j, node, g, j.placement.ranksOn(node).toString(), cause, lead, id));
        }
        log.sendAll(launches);
    }

    private Command.Launch launch(JobView j, String node, long g, String ranks, String cause) {
        return launch(j, node, g, ranks, cause, "", 0);
    }

    private Command.Launch launch(JobView j, String node, long g, String ranks, String cause, String lead, long id) {
        return new Command.Launch(j.job, node, g, ranks, j.ranks(), j.started.store(), j.started.launch(), cause, false,
                g < 0 ? Map.of()
                        : PeerHints.forRestart(j, g, RankSet.parse(ranks), node, clock.millis()),
                lead, id);
    }

    /**
     * Sends the current run's start again to {@code nodes}, which never answered it ({@link Overdue#unansweredStart}):
     * their ranks from the beginning, under the job's DMTCP lead, each node given a whole heartbeat timeout from now.
     */
    void startAgain(JobView j, Set<String> nodes) {
        LOG.info("job {}: node(s) {} never answered the start placed by the coordinator before this one (it stopped"
                + " before sending their launches?): launching their ranks", j.job, nodes);
        long now = clock.millis();
        synchronized (lock) {
            nodes.forEach(node -> j.heartbeats.put(node, now));
            j.heartbeatsFreshUntil = 0;
        }
        launchOn(j, nodes, -1, "start");
    }

    /** Unique to one start of a job, and higher than any given before by this coordinator. */
    private synchronized long nextLaunchId() {
        lastLaunchId = Math.max(lastLaunchId + 1, clock.millis());
        return lastLaunchId;
    }

    /** Ranks of the current launcher attempt joined {@code node}: its agent restores them and lets them run. */
    void onRanksJoined(JobView j, Event.RanksJoined r) {
        if (r.generation() == j.launchGeneration && j.placement.byLauncher()) {
            log.send(r.node(),
                    new Command.Launch(j.job, r.node(), r.generation(), r.ranks(), j.ranks(), j.started.store(),
                    j.started.launch(), j.launchCause, true, r.generation() < 0 ? Map.of()
                    : PeerHints.forRestart(j, r.generation(), r.rankSet(), r.node(), clock.millis())));
        }
    }

    /** The job is over: every node finishes staging and lets go of it. */
    void release(JobView j) {
        Map<String, Command.Release> release = new LinkedHashMap<>();
        for (String node : j.placement.nodes()) {
            release.put(node, new Command.Release(j.job));
        }
        log.sendAll(release);
    }

    /**
     * A node silent past the timeout: with auto-recovery its ranks move to a live node and
     * every rank rolls back; with no other node, the same node is tried once (the agent may
     * only have been stuck); silent for another timeout after that, or without auto-recovery,
     * the job fails with the reason. Returns whether a node is silent.
     */
    boolean checkHeartbeats(JobView j, long now, long heartbeatTimeoutMillis) {
        if (now < j.heartbeatsFreshUntil) {
            return false; // no node can be silent before its oldest heartbeat times out: skip the scan
        }
        boolean watchedLauncher = j.placement.byLauncher() && j.launcherSeenMillis > 0;
        if (watchedLauncher && now - j.launcherSeenMillis >= heartbeatTimeoutMillis) {
            // Nobody is left to run the launcher again: rolling back would wait for nothing.
            long established = j.newestEstablished().map(GenerationView::generation).orElse(-1L);
            finish(j, false, "the `ferry run` holding the job's launcher sent no heartbeat for "
                    + (now - j.launcherSeenMillis) / 1000
                    + " s (killed, or its allocation ended); run the same `ferry run`"
                    + " again to resume" + (established >= 0 ? " from generation " + established : ""));
            return true;
        }
        String silent = null;
        long oldest = watchedLauncher ? j.launcherSeenMillis : Long.MAX_VALUE;
        for (String node : j.placement.nodes()) {
            long last = j.lastHeartbeatMillis(node);
            if (now - last >= heartbeatTimeoutMillis) {
                silent = node;
                break;
            }
            oldest = Math.min(oldest, last);
        }
        if (silent == null) {
            j.heartbeatsFreshUntil = oldest + heartbeatTimeoutMillis;
            return false;
        }
        if (watchedLauncher && now - j.launcherSeenMillis > LAUNCHER_FRESH_MILLIS) {
            // the launcher's `ferry run` may be gone with the node (an allocation ended): its timeout decides
            return true;
        }
        String cause = "node " + silent + " sent no heartbeat for " + (now - j.lastHeartbeatMillis(silent)) / 1000
                + " s";
        if (j.started.autoRecover() && j.placement.nodes().size() > 1 && !j.placement.byLauncher()
                && moveOffLostNode(j, silent, now, heartbeatTimeoutMillis)) {
            return true;
        }
        if (j.silentSinceMillis == 0 && j.started.autoRecover()) {
            j.silentSinceMillis = now;
            rollBackBelow(j, Long.MAX_VALUE, cause);
        } else if (j.silentSinceMillis == 0 || now - j.silentSinceMillis >= heartbeatTimeoutMillis) {
            j.silentSinceMillis = now;
            finish(j, false, cause + "; the node is lost");
        }
        return true;
    }

    /** Ends the job with the reason: the event first; nothing more is decided for it. */
    void finish(JobView j, boolean success, String detail) {
        log.append(new Event.JobFinished(j.job, success, detail));
        synchronized (lock) { // until the event comes back round
            j.success = success;
        }
    }
}

package io.ferry.coordinator;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.CrashPoint;
import io.ferry.model.Event;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * What the coordinator decides at each tick, from the state it folded rather than from an event
 * that just arrived: snapshots whose ranks are all staged are committed; silent nodes, exits and
 * restores no event answered, overdue captures and rollbacks are settled; a pending rollback
 * starts once staging has had its chance; a halt takes its final checkpoint; and the interval
 * and the users' checkpoints are requested. Nothing is decided for a job being replayed, held in
 * quarantine, or waiting for its store's listing. Coordinator thread only.
 */
final class Decisions {
    /**
     * How long a rollback waits for generations captured before the failure to be
     * established (they are good, and newer than what is established now).
     */
    static final Duration ROLLBACK_WAITS_FOR_STAGING = Duration.ofSeconds(30);

    private final KafkaLog log;
    private final Object lock;
    private final Clock clock;
    private final Jobs jobs;
    private final Ownership ownership;
    private final Quarantine quarantine;
    private final Commits commits;
    private final Recovery recovery;
    private final Overdue overdue;
    private final Orders orders;
    private final Halts halts;
    private final long heartbeatTimeoutMillis;
    private final BooleanSupplier leaseHeld;

    /**
     * @param lock      the coordinator's lock, held while a decision changes the folded state ahead of its event
     * @param leaseHeld whether this coordinator may still decide (not stalled past its lease)
     */
    Decisions(KafkaLog log, Object lock, Clock clock, Jobs jobs, Ownership ownership, Quarantine quarantine,
              Commits commits, Recovery recovery, Overdue overdue, Orders orders, long heartbeatTimeoutMillis,
              BooleanSupplier leaseHeld) {
        this.log = log;
        this.lock = lock;
        this.clock = clock;
        this.jobs = jobs;
        this.ownership = ownership;
        this.quarantine = quarantine;
        this.commits = commits;
        this.recovery = recovery;
        this.overdue = overdue;
        this.orders = orders;
        this.halts = new Halts(recovery, this::requestCheckpoint);
        this.heartbeatTimeoutMillis = heartbeatTimeoutMillis;
        this.leaseHeld = leaseHeld;
    }

    /** Interval checkpoints, and snapshots whose ranks are all staged but not yet committed. */
    void tick() {
        commits.markers.settle(); // jobs whose start waited for their store's listing: decided now
        long now = clock.millis();
        orders.checkpointsAsked(job -> requestCheckpoint(job, "request"), now);
        for (JobView j : jobs.all()) {
            if (!leaseHeld.getAsBoolean()) {
                return; // stalled in the middle of deciding: read the log again first
            }
            if (j.started == null || ownership.replaying(j.job) || quarantine.holds(j.job)
                    || commits.markers.waiting(j.job)) {
                continue; // replayed after a takeover, or its store listed after its start, before anything is decided
            }
            // Also after the job finished: its last snapshots are still being staged.
            for (GenerationView g : j.generations.values()) {
                if (g.state == GenerationView.State.CAPTURED && !g.markerWritten && g.stagedRanks() >= j.ranks()) {
                    commits.establish(j, g, now);
                }
            }
            if (j.finished()) {
                continue;
            }
            Set<String> unanswered = overdue.unansweredStart(j, now, heartbeatTimeoutMillis);
            if (!unanswered.isEmpty()) {
                recovery.startAgain(j, unanswered);
                continue;
            }
            if (recovery.settleDeferredStart(j, now, heartbeatTimeoutMillis)
                    || recovery.checkHeartbeats(j, now, heartbeatTimeoutMillis) || recovery.settleExits(j)
                    || recovery.settleUnanswered(j) || overdue.captures(j, now)
                    || overdue.rollbacks(j, now, heartbeatTimeoutMillis)) {
                continue;
            }
            if (resendCaptures(j)) {
                continue;
            }
            if (j.pendingRollback != null) {
                boolean staging = j.generations.values().stream()
                        .anyMatch(g -> g.state == GenerationView.State.CAPTURED);
                if (!staging || now - j.pendingSinceMillis >= ROLLBACK_WAITS_FOR_STAGING.toMillis()) {
                    recovery.rollBackPending(j, now);
                }
                continue;
            }
            if (halts.tick(j, now)) {
                continue; // halting: its final checkpoint, then the end; no interval checkpoints
            }
            long interval = j.started.intervalMillis();
            if (interval > 0 && !j.rollingBack && now - j.lastRequestMillis >= interval) {
                requestCheckpoint(j.job, "interval");
            }
        }
    }

    /**
     * Requests the next generation of {@code job} unless it cannot take one now; returns whether it
     * did. Not once a rank has finished: that rank cannot be captured, so each request would fail. Not while a start
     * an earlier coordinator placed waits for its nodes to answer: a capture would reach a node before its launch.
     */
    boolean requestCheckpoint(String job, String why) {
        JobView j = jobs.get(job).orElse(null);
        if (j == null || j.started == null || j.finished() || j.capturing() || j.rollingBack
                || j.pendingRollback != null || !j.allRanksRunning() || j.startAwaitsAnswers() || j.aRankFinished()
                || ownership.replaying(job)
                || commits.markers.waiting(job)) {
            return false;
        }
        long g = j.nextGeneration();
        log.append(new Event.CheckpointRequested(job, g, why));
        CrashPoint.reach("coordinator.checkpoint-requested"); // logged, no capture command sent
        synchronized (lock) {
            j.lastRequestMillis = clock.millis(); // until the event comes back round
            j.generations.putIfAbsent(g, new GenerationView(g, j.nodeNames, j.ranks()));
            j.generations.get(g).requestedAtMillis = clock.millis();
        }
        log.sendAll(captures(j, g));
        return true;
    }

    /** The capture command of generation {@code g} for each node of the job's placement, each with its partner. */
    private static Map<String, Command.Capture> captures(JobView j, long g) {
        Map<String, Command.Capture> capture = new LinkedHashMap<>();
        Map<String, String> partners = PeerHints.partners(j, j.placement);
        for (String node : j.placement.nodes()) {
            capture.put(node, new Command.Capture(j.job, g, PeerHints.captureTarget(j, partners, node)));
        }
        return capture;
    }

    /**
     * Sends again, once, the capture commands of a generation an earlier coordinator requested and
     * this one found open in its replay (requested before this one began to judge the job; a request
     * of its own is later, on its own clock): that coordinator may have crashed between logging the
     * request and sending them, and the generation would only fail at its deadline (the capture
     * timeout and a grace, from when this coordinator began to judge the job: {@link Overdue}),
     * a checkpoint lost and the job unprotected meanwhile. A node that took the capture already
     * ignores it ({@code NodeAgent}: a repeated capture is never taken again), one that never got
     * it captures now. The deadline still holds. Whether it sent them.
     */
    private boolean resendCaptures(JobView j) {
        GenerationView g = j.latest().orElse(null);
        if (g == null || g.state != GenerationView.State.OPEN || g.failing || g.requestedAtMillis >= j.judgedSinceMillis
                || g.capturesResent
                || j.rollingBack || j.pendingRollback != null || !j.allRanksRunning()) {
            return false;
        }
        synchronized (lock) {
            g.capturesResent = true;
        }
        log.sendAll(captures(j, g.generation));
        return true;
    }
}

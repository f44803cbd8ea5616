package io.ferry.coordinator;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Event;

import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * A generation requested and never captured fails at its deadline, derived from the folded state
 * on every tick, not from a timer started when it was requested: a coordinator that crashed
 * between logging {@code CheckpointRequested} and sending the capture commands (or whose commands
 * the nodes never got) would otherwise leave the job "capturing" for ever, and never checkpoint
 * it again. The deadline is the job's capture timeout (what each agent waits for its ranks) and
 * {@link #GRACE_MILLIS} for its report to arrive, counted from the request or, for a request this
 * coordinator only replayed, from when it began to judge the job ({@link JobView#judgedSinceMillis}).
 * An agent still capturing then finds the generation failed; its images are never committed.
 * Rollbacks and starts decided by an earlier coordinator and never answered are decided or sent again.
 * Coordinator thread only.
 */
final class Overdue {
    /** How long after the capture timeout the nodes' own reports are waited for. */
    static final long GRACE_MILLIS = 5000;
    private final KafkaLog log;
    private final Object lock;

    Overdue(KafkaLog log, Object lock) {
        this.log = log;
        this.lock = lock;
    }

    /** Fails {@code j}'s open generation if its capture is overdue at {@code now}; whether it did. */
    boolean captures(JobView j, long now) {
        GenerationView g = j.latest().orElse(null);
        if (g == null || g.state != GenerationView.State.OPEN || g.failing || j.started == null) {
            return false;
        }
        long timeout = j.started.launch().captureTimeoutMillis();
        long from = Math.max(g.requestedAtMillis, j.judgedSinceMillis);
        if (from == 0 || now - from < timeout + GRACE_MILLIS) {
            return false;
        }
        log.append(new Event.CaptureFailed(j.job, g.generation, String.format(Locale.ROOT,
                "no capture reported within the capture timeout (%.0f s) of its request: its capture commands were"
                        + " lost or its nodes are stuck", timeout / 1000.0)));
        synchronized (lock) { // until the event comes back round
            g.failing = true;
        }
        return true;
    }

    /**
     * A rollback decided by an earlier coordinator (found in the replay: it may have crashed after
     * logging {@code RecoveryStarted} and before sending the launch commands) that no node has
     * answered (no images restored, no restore failed) within twice the heartbeat timeout of when
     * this coordinator began to judge the job is decided again, through the pending rollback and so
     * with its backoff and {@code recovery.max-attempts}. A rollback this coordinator decided itself
     * sent its commands before it went on (they are in the log), and a restore of a large image may
     * take long: it has no such deadline. Whether it did.
     */
    boolean rollbacks(JobView j, long now, long heartbeatTimeoutMillis) {
        if (!j.rollingBack || j.pendingRollback != null || !j.restoredNodes.isEmpty() || j.restoreFailed != null
                || j.judgedSinceMillis == 0 || j.lastRecoveryMillis >= j.judgedSinceMillis) {
            return false;
        }
        if (now - j.judgedSinceMillis < 2 * heartbeatTimeoutMillis) {
            return false;
        }
        synchronized (lock) {
            j.pendingRollback = "no node answered the rollback to generation " + j.rollbackGeneration + " within "
                    + 2 * heartbeatTimeoutMillis / 1000 + " s (its launch commands were lost?)";
            j.pendingSinceMillis = now;
        }
        return true;
    }

    /**
     * The nodes of a start placed by an earlier coordinator (found in the replay: it may have crashed after logging
     * the placement and before sending the launches) that have not answered it (no ranks launched or launch failed
     * in the log, no heartbeat of the job heard) within half a heartbeat timeout of when this coordinator began to
     * judge the job; once, and empty where every node answered. Such a node runs nothing of the job and sends no
     * heartbeat of it: without its launch sent again it would be taken for lost at the heartbeat timeout (its ranks
     * moved to another node, or the job failed without {@code --auto-recover}). A node that got the first launch
     * and answers late takes the second as a newer start of the same ranks.
     */
    Set<String> unansweredStart(JobView j, long now, long heartbeatTimeoutMillis) {
        if (!j.startAwaitsAnswers() || j.rollingBack || j.pendingRollback != null
                || now - j.judgedSinceMillis < heartbeatTimeoutMillis / 2) {
            return Set.of();
        }
        Set<String> unanswered = new TreeSet<>(j.placement.nodes());
        unanswered.removeAll(j.startAnswered);
        unanswered.removeIf(j::answered);
        synchronized (lock) {
            j.startResent = true;
        }
        return unanswered;
    }
}

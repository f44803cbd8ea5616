package io.ferry.coordinator;

import io.ferry.coordinator.predict.Predictor;
import io.ferry.coordinator.predict.StagingSoFar;
import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Event;

import java.time.Clock;

/**
 * What the coordinator does when a live event has been folded: the job's launch on its start,
 * a rollback's decision on an exit or a failed restore, a commit once ranks are staged, a
 * forecast once a generation's size is known, and again as its nodes stage it. Decisions that must also follow from a
 * replayed state are taken again by the tick ({@link Recovery#settleExits}, {@link Recovery#settleUnanswered},
 * {@link Overdue}), so nothing here is the only path to them. Coordinator thread only.
 */
final class Reactions {
    private final KafkaLog log;
    private final Recovery recovery;
    private final Commits commits;
    private final Clock clock;

    Reactions(KafkaLog log, Recovery recovery, Commits commits, Clock clock) {
        this.log = log;
        this.recovery = recovery;
        this.commits = commits;
        this.clock = clock;
    }

    /**
     * Reacts to the live event {@code e}, already folded into {@code j}; {@code resumedAfterFailure}: a new run of a
     * job that failed.
     */
    void to(Event e, JobView j, boolean resumedAfterFailure) {
        if (e instanceof Event.JobStarted) {
            // Generations established on the store that the log does not know (it lost its tail): the run resumes.
            // The store answers on its own time; the start is decided then, if this run is still the job's.
            Event.JobStarted started = j.started;
            commits.markers.learn(j, learned -> {
                if (j.started == started && !j.finished()) {
                    recovery.onStarted(j, resumedAfterFailure || learned);
                }
            });
        } else if (e instanceof Event.RanksJoined r && j.started != null && !j.finished()) {
            recovery.onRanksJoined(j, r);
        } else if (e instanceof Event.LauncherExited x && j.started != null && !j.finished()) {
            recovery.onLauncherExited(j, x);
        } else if (e instanceof Event.RankExited x && j.started != null && !j.finished()) {
            recovery.onRankExited(j, x);
        } else if (e instanceof Event.ImageStaged s) {
            commits.rememberManifest(j, s);
        } else if (e instanceof Event.CaptureFailed || e instanceof Event.RecoveryStarted) {
            commits.forgetSettled(j);
        } else if (e instanceof Event.RestoreFailed f) {
            recovery.onRestoreFailed(j, f);
        } else if (e instanceof Event.JobFinished) {
            recovery.release(j);
        } else if (e instanceof Event.StagingProgress p) {
            forecastAgain(j, j.generations.get(p.generation()));
        } else if (e instanceof Event.ImageCaptured c) {
            // Once the generation's size is known: forecast it, to be set beside what happens.
            GenerationView g = j.generations.get(c.generation());
            if (g != null && g.state == GenerationView.State.CAPTURED && g.prediction == null) {
                // Its capture has happened: that part is measured, the rest forecast.
                Predictor.atCapture(j, g, Long.MAX_VALUE).ifPresent(p -> {
                    g.prediction = p; // until the event comes back round
                    log.append(p);
                });
            }
        }
    }

    /**
     * The generation's nodes have read another share of its bytes for staging: at each of
     * {@link StagingSoFar#MARKS} passed, its forecast again from what they found new so far.
     */
    private void forecastAgain(JobView j, GenerationView g) {
        if (g == null || g.state != GenerationView.State.CAPTURED || g.prediction == null || g.stagingSoFar == null) {
            return;
        }
        double share = g.stagingSoFar.readShare(g.rawBytes);
        for (double mark : StagingSoFar.MARKS) {
            if (share >= mark && g.predictionAt(mark).isEmpty()) {
                Predictor.during(j, g, g.stagingSoFar, mark, clock.millis()).ifPresent(p -> {
                    g.predicted(p); // until the event comes back round
                    log.append(p);
                });
            }
        }
    }
}

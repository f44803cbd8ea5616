package io.ferry.coordinator;

import io.ferry.model.Event;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.Set;

/**
 * What the coordinator does as jobs change hands between the coordinators of a group ({@link
 * Ownership} says which it holds): jobs it took on and replayed are given a fresh hearing and their
 * stores are listed before anything is decided for them, and a run whose start was never decided is
 * started; jobs given up are forgotten. Folded state is touched under the coordinator's lock; called on
 * its thread.
 */
final class HandOver {
    private static final Logger LOG = LoggerFactory.getLogger(HandOver.class);
    private final Object lock;
    private final Jobs jobs;
    private final Clock clock;
    private final Commits commits;
    private final Orders orders;
    private final Recovery recovery;
    private final Set<String> changed;

    /** @param changed jobs whose state record is still to be published (a job given up is not) */
    HandOver(Object lock, Jobs jobs, Clock clock, Commits commits, Orders orders, Recovery recovery,
             Set<String> changed) {
        this.lock = lock;
        this.jobs = jobs;
        this.clock = clock;
        this.commits = commits;
        this.orders = orders;
        this.recovery = recovery;
        this.changed = changed;
    }

    /** Jobs whose replay just ended: heard afresh, and, where they still run, their stores listed. */
    void replayed(Set<String> replayed) {
        long now = clock.millis();
        synchronized (lock) {
            replayed.forEach(job -> jobs.get(job).ifPresent(j -> j.replayedAtMillis = now));
        }
        heardAfresh(replayed);
        listStores(replayed);
    }

    /** Jobs whose nodes each get a whole timeout, from now, to be heard (a replay ended, the log came back). */
    void heardAfresh(Set<String> jobsHeard) {
        long now = clock.millis();
        synchronized (lock) {
            jobsHeard.forEach(job -> jobs.get(job).ifPresent(j -> j.heardAllAt(now)));
        }
    }

    /**
     * Jobs just taken over (replayed) that still run: their stores are listed for generations
     * established above what the log knows (the log lost its tail while their agents ran on),
     * before anything more is decided for them, so that no new generation is numbered as one a
     * marker names already. A run whose start was never decided ({@link JobView#launched}: its
     * coordinator stopped while it listed the store, or while the start waited for its DMTCP lead)
     * is started then, as a live start is: its nodes run nothing of it and send no heartbeat, and
     * would otherwise be taken for lost only after the heartbeat timeout. Not where the listing found
     * markers above what the log knows: the run went on after the log lost its tail, so it was launched.
     */
    private void listStores(Set<String> replayed) {
        for (String job : replayed) {
            jobs.get(job).filter(j -> j.started != null && !j.finished()).ifPresent(j -> {
                Event.JobStarted started = j.started;
                commits.markers.learn(j, found -> {
                    // Markers above what the log knows say the run went on after the log lost its tail: launched.
                    if (!found && j.started == started && !j.finished() && !j.launched && !j.rollingBack
                            && j.startDeferredSinceMillis < 0) {
                        LOG.info("job {}: its run was started but never launched by the coordinator before this one;"
                                + " starting it", j.job);
                        recovery.onStarted(j, j.startResumes);
                    }
                });
            });
        }
    }

    /** Jobs of partitions given up to another coordinator (or all, once fenced): forgotten, nothing more decided. */
    void forget(Set<String> gone) {
        synchronized (lock) {
            for (String job : gone) {
                jobs.remove(job);
                changed.remove(job);
                orders.forget(job);
                commits.forget(job);
            }
        }
    }
}

package io.ferry.coordinator;

import io.ferry.model.Event;

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

    /** Applies one event, logged at {@code timestampMillis}; returns the job it changed. */
    public JobView apply(Event e, long timestampMillis) {
        JobView j = jobs.computeIfAbsent(e.job(), JobView::new);
        if (e instanceof Event.JobStarted s) {
            j.started = s;
            j.lastRequestMillis = timestampMillis; // the first interval starts with the job
            if (j.startedAtMillis == 0) {
                j.startedAtMillis = timestampMillis;
            }
            j.lastHeartbeatMillis = timestampMillis;
            j.silentSinceMillis = 0;
            j.success = null;
            j.exits.clear();
        } else if (e instanceof Event.CheckpointRequested r) {
            gen(j, r.generation()).requestedAtMillis = timestampMillis;
            j.lastRequestMillis = timestampMillis;
        } else if (e instanceof Event.ImageCaptured c) {
            GenerationView g = gen(j, c.generation());
            g.captured.add(c.rank());
            g.rawBytes += c.bytes();
            g.captures.put(c.rank(), c);
            g.maxStallSeconds = Math.max(g.maxStallSeconds, c.seconds());
            if (g.state == GenerationView.State.OPEN && g.captured.size() >= j.ranks()) {
                g.state = GenerationView.State.CAPTURED;
            }
        } else if (e instanceof Event.CaptureFailed f) {
            GenerationView g = gen(j, f.generation());
            g.state = GenerationView.State.FAILED;
            g.failure = f.reason();
        } else if (e instanceof Event.ImageStaged s) {
            GenerationView g = gen(j, s.generation());
            g.staged.add(s.rank());
            g.storedBytes += s.storedBytes();
            g.stagingSecondsByRank.put(s.rank(), s.seconds());
            g.stagingProblem = "";
        } else if (e instanceof Event.StagingFailed s) {
            gen(j, s.generation()).stagingProblem = "staging rank " + s.rank() + " waits: " + s.reason();
        } else if (e instanceof Event.SnapshotEstablished s) {
            GenerationView g = gen(j, s.generation());
            g.state = GenerationView.State.ESTABLISHED;
            g.secondsToEstablished = s.secondsSinceRequest();
        } else if (e instanceof Event.Heartbeat h) {
            j.lastHeartbeatMillis = Math.max(j.lastHeartbeatMillis, timestampMillis);
            j.silentSinceMillis = 0;
        } else if (e instanceof Event.PredictionMade p) {
            gen(j, p.generation()).prediction = p;
        } else if (e instanceof Event.StoreHealthReported h) {
            j.storeHealth.put(h.node(), h);
        } else if (e instanceof Event.CacheReported c) {
            j.caches.put(c.node(), c);
        } else if (e instanceof Event.RankExited x) {
            j.exits.put(x.rank(), x.exitCode());
        } else if (e instanceof Event.RecoveryStarted r) {
            j.recoveries++;
            j.exits.clear();
            // Generations after the one rolled back to will never complete: their ranks are gone.
            j.generations.tailMap(r.generation(), false).values().stream()
                    .filter(g -> g.state == GenerationView.State.OPEN || g.state == GenerationView.State.CAPTURED)
                    .forEach(g -> {
                        if (g.state == GenerationView.State.OPEN) {
                            g.state = GenerationView.State.FAILED;
                            g.failure = "abandoned by the rollback to generation " + r.generation();
                        }
                    });
        } else if (e instanceof Event.JobFinished f) {
            j.success = f.success();
            j.finishedAtMillis = timestampMillis;
            j.finishDetail = f.detail();
        } else {
            throw new AssertionError(e);
        }
        return j;
    }

    private static GenerationView gen(JobView j, long g) {
        return j.generations.computeIfAbsent(g, GenerationView::new);
    }
}

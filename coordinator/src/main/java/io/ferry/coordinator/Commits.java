package io.ferry.coordinator;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.CrashPoint;
import io.ferry.model.DaemonThreads;
import io.ferry.model.Event;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StoreRetention;

import java.io.Closeable;
import java.io.IOException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The coordinator's work on the jobs' stores, kept apart from its loop: each staged rank's
 * manifest read as it is staged, the commit marker written once every rank is staged (the
 * snapshot is then established), and the job's store retention ({@code store.keep-generations})
 * applied after each establishment. A store that fails delays a commit (retried on a later
 * tick), never the loop. Called on the coordinator thread; commits run on their own threads.
 */
final class Commits implements Closeable {
    private final KafkaLog log;
    private final Object lock;
    private final JobStores stores;
    private final ManifestDigests manifests = new ManifestDigests();
    /** Jobs with a commit under way. */
    private final Set<String> committing = ConcurrentHashMap.newKeySet();
    /** A few, so that one job's hanging store holds up its own commits, not everyone's. */
    private final ExecutorService committers = daemons(4, "ferry-coordinator-commit");

    /**
     * The marker listings' own threads, as many as listings hang at once: a takeover of many jobs
     * whose stores hang keeps each busy until its S3 client gives up (its socket timeout, longer
     * than the listing's patience); healthy jobs' commits must not wait behind them, nor healthy
     * jobs' own listings (a fixed pool would queue them behind the hung ones, past their patience).
     * Idle threads end after a minute.
     */
    private final ExecutorService listers = Executors.newCachedThreadPool(
            DaemonThreads.named("ferry-coordinator-markers"));

    /** The listing of a starting job's store for generations established above what the log knows. */
    final MarkerListings markers;

    /** @param secrets store credentials of this process, added to every job's store settings */
    Commits(KafkaLog log, Object lock, Map<String, String> secrets) {
        this.log = log;
        this.lock = lock;
        this.stores = new JobStores(secrets);
        this.markers = new MarkerListings(log, lock, stores, listers);
    }

    private static ExecutorService daemons(int threads, String name) {
        return Executors.newFixedThreadPool(threads, DaemonThreads.named(name));
    }

    /**
     * A rank was staged for a generation still in flight: its manifest's digest is kept now, not read at the commit.
     */
    void rememberManifest(JobView j, Event.ImageStaged s) {
        GenerationView g = j.generations.get(s.generation());
        if (j.started == null || g == null
                || !(g.state == GenerationView.State.OPEN || g.state == GenerationView.State.CAPTURED)) {
            return;
        }
        if (!s.manifest().isEmpty()) {
            manifests.given(j.job, s.generation(), s.rank(), j.ranks(), s.manifest());
            return;
        }
        // An older agent's event, without its manifest's digest: read in the background, the store opened there too (an
        // opening that hangs, as an HDFS name node away can, holds up no event of any job). One that fails is the
        // commit's to open again and say why.
        Event.JobStarted started = j.started;
        manifests.staged(() -> stores.of(started), j.job, s.generation(), s.rank(), j.ranks());
    }

    /** Drops the manifests read for generations of {@code j} that will never be committed, or were. */
    void forgetSettled(JobView j) {
        manifests.forget(j.job, gen -> {
            GenerationView g = j.generations.get(gen);
            return g == null || g.state == GenerationView.State.FAILED || g.state == GenerationView.State.ESTABLISHED;
        });
    }

    /** Forgets everything read for a job another coordinator now owns. */
    void forget(String job) {
        manifests.forget(job, g -> true);
        markers.forget(job);
    }

    /**
     * Writes the commit marker of {@code g} (every rank staged), reports it established and
     * prunes the store, on a committer thread: the coordinator thread goes on folding the
     * other jobs' events (and this job's) meanwhile. One commit per job at a time (a second
     * call while one is under way does nothing); a failed one is retried on a later tick.
     */
    void establish(JobView j, GenerationView g, long now) {
        if (!committing.add(j.job)) {
            return;
        }
        try {
            committers.execute(() -> {
                try {
                    commit(j, g, now);
                } finally {
                    committing.remove(j.job);
                }
            });
        } catch (RejectedExecutionException closing) {
            committing.remove(j.job);
        }
    }

    private void commit(JobView j, GenerationView g, long now) {
        synchronized (lock) {
            if (g.state != GenerationView.State.CAPTURED || g.markerWritten) {
                return; // committed by the call before this one (the tick saw it a moment late), or failed since
            }
            if (j.rollingBack && g.generation > j.rollbackGeneration) {
                return; // a rollback to an older generation has begun: this one's timeline is gone (the fold fails it)
            }
        }
        try {
            CrashPoint.reach("coordinator.before-marker");
            stores.of(j.started).commitSnapshot(j.job, g.generation, j.ranks(), manifests.known(j.job, g.generation));
            CrashPoint.reach("coordinator.marker-written");
            manifests.forget(j.job, gen -> gen == g.generation);
            double seconds = (now - g.requestedAtMillis) / 1000.0;
            log.append(new Event.SnapshotEstablished(j.job, g.generation, "remote", seconds));
            synchronized (lock) { // until the event comes back round: the next tick must not commit it again
                g.markerWritten = true; // not its state: that is the fold's, from the log alone, so a replay agrees
            }
            pruneStore(j);
        } catch (IOException | RuntimeException e) {
            synchronized (lock) {
                g.stagingProblem = "cannot write the commit marker: " + e.getMessage(); // retried on a later tick
            }
        }
    }

    /**
     * The job's store retention ({@code store.keep-generations}), after each establishment:
     * older generations' markers and manifests go (their chunks at the site's next
     * {@code ferry store gc}). A failure is said and retried after the next snapshot.
     */
    private void pruneStore(JobView j) {
        String keep = j.started.launch().settings().get(StagingConfig.STORE_KEEP_GENERATIONS.name());
        int n = keep == null ? 0 : StagingConfig.STORE_KEEP_GENERATIONS.parse(keep);
        if (n == 0) {
            return;
        }
        try {
            StoreRetention.Pruned p = StoreRetention.prune(stores.of(j.started), j.job, n, 0, false);
            if (!p.dropped().isEmpty()) {
                System.err.println("ferry coordinator: " + j.job + ": store.keep-generations=" + n
                        + " pruned generations " + p.dropped() + " from " + j.started.store());
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("ferry coordinator: " + j.job + ": pruning the store failed (tried again after the next"
                    + " snapshot): " + e.getMessage());
        }
    }

    @Override
    public void close() {
        listers.shutdownNow(); // a listing's answer is of no use once the coordinator closes
        committers.shutdown();
        try {
            if (!committers.awaitTermination(10, TimeUnit.SECONDS)) {
                System.err.println("ferry coordinator: a commit still under way at close (its store"
                        + " hangs?): left to the next owner");
                committers.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        manifests.close();
        stores.close();
    }
}

package io.ferry.coordinator;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Event;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StoreRetention;

import java.io.Closeable;
import java.util.Map;

/**
 * The coordinator's work on the jobs' stores, kept apart from its loop: each staged rank's
 * manifest read as it is staged, the commit marker written once every rank is staged (the
 * snapshot is then established), and the job's store retention ({@code store.keep-generations})
 * applied after each establishment. A store that fails delays a commit (retried on the next
 * tick), never the loop. Called on the coordinator thread only.
 */
final class Commits implements Closeable {
    private final KafkaLog log;
    private final Object lock;
    private final JobStores stores;
    private final ManifestDigests manifests = new ManifestDigests();

    /** @param secrets store credentials of this process, added to every job's store settings */
    Commits(KafkaLog log, Object lock, Map<String, String> secrets) {
        this.log = log;
        this.lock = lock;
        this.stores = new JobStores(secrets);
    }

    /** A rank was staged for a generation still in flight: its manifest is read now, not all of them at the commit. */
    void staged(JobView j, Event.ImageStaged s) {
        GenerationView g = j.generations.get(s.generation());
        if (j.started != null && g != null && (g.state == GenerationView.State.OPEN || g.state == GenerationView.State.CAPTURED)) {
            try {
                manifests.staged(stores.of(j.started), j.job, s.generation(), s.rank(), j.ranks());
            } catch (java.io.IOException unopened) {
                // the commit opens the store again, and says why it cannot
            }
        }
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
    }

    /** Writes the commit marker of {@code g} (every rank staged), reports it established, prunes the store. */
    void establish(JobView j, GenerationView g, long now) {
        try {
            stores.of(j.started).commitSnapshot(j.job, g.generation, j.ranks(), manifests.known(j.job, g.generation));
            manifests.forget(j.job, gen -> gen == g.generation);
            double seconds = (now - g.requestedAtMillis) / 1000.0;
            log.append(new Event.SnapshotEstablished(j.job, g.generation, "remote", seconds));
            synchronized (lock) { // until the event comes back round: the next tick must not commit it again
                g.state = GenerationView.State.ESTABLISHED;
                g.secondsToEstablished = seconds;
            }
            pruneStore(j);
        } catch (java.io.IOException | RuntimeException e) {
            g.stagingProblem = "cannot write the commit marker: " + e.getMessage(); // retried on the next tick
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
                System.err.println("ferry coordinator: " + j.job + ": store.keep-generations=" + n + " pruned generations "
                        + p.dropped() + " from " + j.started.store());
            }
        } catch (java.io.IOException | RuntimeException e) {
            System.err.println("ferry coordinator: " + j.job + ": pruning the store failed (tried again after the next"
                    + " snapshot): " + e.getMessage());
        }
    }

    @Override
    public void close() {
        manifests.close();
        stores.close();
    }
}

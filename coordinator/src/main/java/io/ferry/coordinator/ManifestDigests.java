package io.ferry.coordinator;

import io.ferry.model.DaemonThreads;
import io.ferry.model.ImageRef;
import io.ferry.staging.Repository;

import java.io.Closeable;
import java.io.IOException;
import java.util.BitSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;
import java.util.function.LongPredicate;

/**
 * The digest of each rank's manifest, for the commit marker: carried by the rank's
 * {@code ImageStaged} (the agent that put the manifest knows it), or, for events that do not
 * carry it, read in the background as soon as the rank is staged, so that the
 * commit marker of a generation of a million ranks is written from digests already read
 * instead of starting with a million reads ({@link Repository#commitSnapshot(String, long,
 * int, IntFunction)} reads whatever is missing, and reports what it cannot read; the commit first waits for the reads
 * already queued, rather than reading the same manifests twice). A rank staged
 * again is read again; reads of one rank run in order (ranks are spread over the workers by
 * number). Digests are held as 32 bytes per rank, only for generations in flight. Thread-safe.
 */
final class ManifestDigests implements Closeable {
    private static final int WORKERS = 2;
    private static final HexFormat HEX = HexFormat.of();
    private final ExecutorService[] workers = new ExecutorService[WORKERS];
    private final Map<String, Digests> generations = new ConcurrentHashMap<>();

    ManifestDigests() {
        for (int i = 0; i < WORKERS; i++) {
            int n = i;
            workers[i] = Executors.newSingleThreadExecutor(DaemonThreads.named("ferry-coordinator-manifests-" + n));
        }
    }

    /** The digests of one generation's manifests read so far. */
    private static final class Digests {
        final int ranks;
        private final byte[] sha;
        private final BitSet known = new BitSet();

        Digests(int ranks) {
            this.ranks = ranks;
            this.sha = new byte[32 * ranks];
        }

        synchronized void put(int rank, String hex) {
            byte[] d = HEX.parseHex(hex);
            if (d.length == 32) {
                System.arraycopy(d, 0, sha, rank * 32, 32);
                known.set(rank);
            }
        }

        synchronized void forget(int rank) {
            known.clear(rank);
        }

        synchronized String get(int rank) {
            return rank < ranks && known.get(rank) ? HEX.formatHex(sha, rank * 32, rank * 32 + 32) : null;
        }
    }

    private static String key(String job, long generation) {
        return job + "/" + generation;
    }

    /** The digests of a generation, null where this rank cannot be kept (the commit reads it then). */
    private Digests of(String job, long generation, int rank, int ranks) {
        if (rank < 0 || rank >= ranks) {
            return null;
        }
        Digests d = generations.computeIfAbsent(key(job, generation), k -> new Digests(ranks));
        return d.ranks == ranks ? d : null; // else the job was restarted with another size: the commit reads them all
    }

    /** {@code rank} of {@code job}'s generation is staged, and its agent said its manifest's digest. */
    void given(String job, long generation, int rank, int ranks, String sha256) {
        Digests d = of(job, generation, rank, ranks);
        if (d != null) {
            d.put(rank, sha256);
        }
    }

    /** {@code rank} of {@code job}'s generation is staged: its manifest is read in the background. */
    void staged(Repository repo, String job, long generation, int rank, int ranks) {
        staged(() -> repo, job, generation, rank, ranks);
    }

    /** The job's store, opened on demand (an opening that hangs must not hold up the caller). */
    @FunctionalInterface
    interface Store {
        Repository open() throws IOException;
    }

    /**
     * {@link #staged(Repository, String, long, int, int)}, the store opened on the worker too: the
     * coordinator's thread neither opens nor reads anything.
     */
    void staged(Store store, String job, long generation, int rank, int ranks) {
        Digests d = of(job, generation, rank, ranks);
        if (d == null) {
            return;
        }
        d.forget(rank);
        workers[rank % WORKERS].execute(() -> {
            try {
                d.put(rank, store.open().readManifest(new ImageRef(job, generation, rank)).sha256());
            } catch (IOException | RuntimeException e) {
                // left to the commit, which reads it again and says what is wrong
            }
        });
    }

    /**
     * The digests of a generation, once the reads already queued are done (bounded wait): null
     * for a rank whose manifest could not be read (the commit reads it again and says why).
     */
    IntFunction<String> known(String job, long generation) {
        Digests d = generations.get(key(job, generation));
        if (d != null) {
            for (ExecutorService w : workers) {
                try {
                    w.submit(() -> { }).get(60, TimeUnit.SECONDS);
                } catch (ExecutionException | TimeoutException
                         | RejectedExecutionException e) {
                    break; // read at the commit, then
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        return d == null ? r -> null : d::get;
    }

    /** Forgets {@code job}'s generations that {@code done} says are over (established, failed). */
    void forget(String job, LongPredicate done) {
        String prefix = job + "/";
        generations.keySet().removeIf(k -> k.startsWith(prefix)
                && done.test(Long.parseLong(k.substring(prefix.length()))));
    }

    @Override
    public void close() {
        for (ExecutorService w : workers) {
            w.shutdownNow();
        }
        generations.clear();
    }
}

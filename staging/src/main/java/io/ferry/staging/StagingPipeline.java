package io.ferry.staging;

import io.ferry.compression.ChunkFormat;
import io.ferry.compression.Codecs;
import io.ferry.model.ImageRef;
import io.ferry.staging.internal.BufferPool;
import io.ferry.staging.internal.ImagePull;
import io.ferry.staging.internal.ImagePush;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Pushes, pulls and verifies images against one repository with a fixed pool of named worker
 * threads ({@code ferry-staging-N}) and a bounded number of chunk buffers per operation.
 * Thread-safe: operations may run concurrently, each with its own buffers. Close it to stop
 * the workers.
 */
public final class StagingPipeline implements Closeable {
    private final Repository repo;
    private final StagingConfig config;
    private final ExecutorService workers;
    private final ChunkFormat format;
    private final ThreadLocal<byte[]> objectBuffers = ThreadLocal.withInitial(() -> new byte[0]);
    private final io.ferry.staging.packs.DedupCache dedup;

    StagingPipeline(Repository repo, StagingConfig config) {
        this.repo = repo;
        this.config = config;
        this.format = new ChunkFormat(Codecs.zstd(config.zstdLevel()), config.minRatio());
        this.dedup = new io.ferry.staging.packs.DedupCache(config.dedupCache());
        AtomicInteger n = new AtomicInteger();
        ThreadFactory tf = r -> {
            Thread t = new Thread(r, "ferry-staging-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        this.workers = Executors.newFixedThreadPool(config.workers(), tf);
    }

    public Repository repository() {
        return repo;
    }

    public StagingConfig config() {
        return config;
    }

    /**
     * Pushes the image directory {@code dir} as {@code ref}: chunks first, each durable, then
     * the manifest. Does not commit the snapshot (see {@link Repository#commitSnapshot}).
     */
    public PushResult push(Path dir, ImageRef ref, Progress progress) throws IOException {
        if (config.packs()) {
            return pushPacks(dir, ref, progress);
        }
        BufferPool pool = new BufferPool(config.buffers(), config.chunkSize());
        try {
            return new ImagePush(repo, format, pool, workers, objectBuffers, config.chunkSize(),
                    new byte[config.chunkSize()], config.fileSha256()).run(dir, ref, progress);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("push of " + ref + " interrupted");
        }
    }

    /** A push in the pack layout (staging.layout=packs; docs/formats/pack.md). */
    private PushResult pushPacks(Path dir, ImageRef ref, Progress progress) throws IOException {
        BufferPool pool = new BufferPool(config.segments(), config.segmentSize());
        io.ferry.staging.packs.PackWriter packs = new io.ferry.staging.packs.PackWriter(repo.store(), config.effectivePackSize(),
                config.packsInFlight());
        try {
            return new io.ferry.staging.internal.PackPush(repo, format, pool, config.segmentSize(), workers, objectBuffers,
                    new io.ferry.staging.chunking.FastCdc(config.blobSize()), packs, dedup, config.dedupGenerations(),
                    config.fileSha256()).run(dir, ref, progress);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("push of " + ref + " interrupted");
        }
    }

    /**
     * Pulls {@code ref} into {@code dest} (absent or empty), verifying every chunk and file.
     * {@code dest} appears only complete; on any error nothing is left behind.
     */
    public PullResult pull(ImageRef ref, Path dest, Progress progress) throws IOException {
        try {
            return new ImagePull(repo, workers, objectBuffers).run(ref, dest, config.buffers(), progress);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("pull of " + ref + " interrupted");
        }
    }

    /**
     * {@link #pull(ImageRef, Path, Progress)} of a committed image whose manifest digest the
     * caller read from the marker already ({@link Repository#committed}): the marker is not read
     * again, and a manifest whose bytes differ from {@code committedManifestSha256} is refused.
     */
    public PullResult pull(ImageRef ref, Path dest, Progress progress, String committedManifestSha256) throws IOException {
        try {
            return new ImagePull(repo, workers, objectBuffers).run(ref, dest, config.buffers(), progress,
                    java.util.Optional.of(committedManifestSha256));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("pull of " + ref + " interrupted");
        }
    }

    /** Scrubs the whole store: every chunk object, manifest and commit marker. */
    public VerifyReport verify(Progress progress) throws IOException {
        return new StoreVerifier(repo, workers).run(progress);
    }

    @Override
    public void close() {
        workers.shutdownNow();
    }
}

package io.ferry.staging;

import io.ferry.compression.ChunkFormat;
import io.ferry.compression.Codecs;
import io.ferry.model.DaemonThreads;
import io.ferry.model.ImageRef;
import io.ferry.staging.chunking.FastCdc;
import io.ferry.staging.internal.BufferPool;
import io.ferry.staging.internal.ImagePull;
import io.ferry.staging.internal.ImagePush;
import io.ferry.staging.internal.ImageScanner;
import io.ferry.staging.internal.PackPush;
import io.ferry.staging.internal.PushSample;
import io.ferry.staging.packs.DedupCache;
import io.ferry.staging.packs.PackWriter;

import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

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
    private final DedupCache dedup;

    StagingPipeline(Repository repo, StagingConfig config) {
        this.repo = repo;
        this.config = config;
        this.format = new ChunkFormat(Codecs.zstd(config.zstdLevel()),
                config.planes() ? Codecs.zstdPlanes(config.zstdLevel()) : null,
                config.lz4() ? Codecs.lz4() : null, config.minRatio());
        this.dedup = new DedupCache(config.dedupCache());
        this.workers = Executors.newFixedThreadPool(config.workers(), DaemonThreads.numbered("ferry-staging"));
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
            throw new InterruptedIOException("push of " + ref + " interrupted");
        }
    }

    /** Told of each image a {@link #pushAll} pushed, as soon as its group's manifests are written. */
    @FunctionalInterface
    public interface Pushed {
        void pushed(PushImage image, PushResult result) throws IOException;
    }

    /**
     * Raw bytes of images pushed together at most (one image larger than this goes alone): what
     * a group's blob list, held until its manifests are written, stays proportional to.
     */
    public static final long GROUP_BYTES = 2L << 30;

    /**
     * Pushes several images (a node's ranks of one generation), telling {@code pushed} of each.
     * In the pack layout they go in groups of up to {@link #GROUP_BYTES} raw bytes, each group
     * one push: the same workers and packs for all its images (one durable put per pack, not a
     * part-filled pack per rank; the next image's blobs are cut and compressed while the last
     * one's pack is flushed; a blob two ranks share is written once, as within one image), then a
     * manifest per image.
     * A failure stops at the group it happened in: the groups before were pushed and told.
     */
    public void pushAll(List<PushImage> images, Progress progress, Pushed pushed) throws IOException {
        pushAll(images, progress, pushed, GROUP_BYTES);
    }

    /** {@link #pushAll(List, Progress, Pushed)} with groups of {@code groupBytes} (tests make several groups so). */
    void pushAll(List<PushImage> images, Progress progress, Pushed pushed, long groupBytes) throws IOException {
        if (!config.packs()) {
            for (PushImage i : images) {
                pushed.pushed(i, push(i.dir(), i.ref(), progress));
            }
            return;
        }
        // Each image is listed once: its size decides its group, and the push reads what the listing says.
        List<PushImage> group = new ArrayList<>();
        List<List<ImageScanner.Found>> listed = new ArrayList<>();
        long bytes = 0;
        for (PushImage i : images) {
            List<ImageScanner.Found> found = ImageScanner.scan(i.dir());
            long size = found.stream().mapToLong(ImageScanner.Found::size).sum();
            if (!group.isEmpty() && bytes + size > groupBytes) {
                pushGroup(group, listed, progress, pushed);
                group = new ArrayList<>();
                listed = new ArrayList<>();
                bytes = 0;
            }
            group.add(i);
            listed.add(found);
            bytes += size;
        }
        if (!group.isEmpty()) {
            pushGroup(group, listed, progress, pushed);
        }
    }

    /**
     * An estimate of the bytes a push of {@code images} would write to the store (new blobs, as
     * stored), from about {@code share} of their bytes, read and looked up as the push would;
     * nothing is written. Per image, in order; -1 for each where the layout is not packs.
     */
    public long[] estimateWritten(List<PushImage> images, double share) throws IOException {
        long[] out = new long[images.size()];
        Arrays.fill(out, -1);
        if (!config.packs() || images.isEmpty()) {
            return out;
        }
        List<List<ImageScanner.Found>> listed = new ArrayList<>();
        for (PushImage i : images) {
            listed.add(ImageScanner.scan(i.dir()));
        }
        FastCdc cdc = new FastCdc(config.blobSize());
        var base = new PackPush(repo, format, new BufferPool(1, cdc.max()),
                cdc.max(), workers, objectBuffers, cdc, null, dedup, config.dedupGenerations(), false).baseFor(images);
        long[][] sampled = new PushSample(repo, format, cdc, base)
                .sample(images, listed, share);
        for (int i = 0; i < images.size(); i++) {
            long raw = listed.get(i).stream().mapToLong(ImageScanner.Found::size).sum();
            out[i] = sampled[i][0] == 0 ? 0 : Math.round((double) raw * sampled[i][2] / sampled[i][0]);
        }
        return out;
    }

    private void pushGroup(List<PushImage> group, List<List<ImageScanner.Found>> listed,
            Progress progress, Pushed pushed) throws IOException {
        List<PushResult> results = pushPacks(group, listed, progress);
        for (int i = 0; i < group.size(); i++) {
            pushed.pushed(group.get(i), results.get(i));
        }
    }

    /** A push in the pack layout (staging.layout=packs; docs/formats/pack.md). */
    private PushResult pushPacks(Path dir, ImageRef ref, Progress progress) throws IOException {
        return pushPacks(List.of(new PushImage(dir, ref)), List.of(ImageScanner.scan(dir)), progress).get(0);
    }

    /** One push of several listed images in the pack layout: shared workers and packs, a manifest each. */
    private List<PushResult> pushPacks(List<PushImage> images, List<List<ImageScanner.Found>> listed, Progress progress)
            throws IOException {
        BufferPool pool = new BufferPool(config.segments(), config.segmentSize());
        PackWriter packs = new PackWriter(repo.store(),
                config.effectivePackSize(), config.packsInFlight());
        try {
            return new PackPush(repo, format, pool, config.segmentSize(),
                    workers, objectBuffers,
                    new FastCdc(config.blobSize()), packs, dedup, config.dedupGenerations(),
                    config.fileSha256()).run(images, listed, progress);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("push of " + images.get(0).ref()
                    + (images.size() > 1 ? " and " + (images.size() - 1) + " more" : "") + " interrupted");
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
            throw new InterruptedIOException("pull of " + ref + " interrupted");
        }
    }

    /**
     * {@link #pull(ImageRef, Path, Progress)} of a committed image whose manifest digest the
     * caller read from the marker already ({@link Repository#committed}): the marker is not read
     * again, and a manifest whose bytes differ from {@code committedManifestSha256} is refused.
     */
    public PullResult pull(ImageRef ref, Path dest, Progress progress, String committedManifestSha256)
            throws IOException {
        try {
            return new ImagePull(repo, workers, objectBuffers).run(ref, dest, config.buffers(), progress,
                    Optional.of(committedManifestSha256));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("pull of " + ref + " interrupted");
        }
    }

    /**
     * Pulls several pack-layout images together, e.g. a node's ranks of one generation: a record
     * two of them hold (code and data every rank has) is read, checked and decoded once, and the
     * images share the workers from the first record to the last. Each commit marker is read once;
     * an image whose snapshot has none is pulled as {@link #pull(ImageRef, Path, Progress)} would
     * (its result says so). Each image lands complete; a failure before the first lands leaves
     * none of them behind. See {@code ImagePull.runAll} for what each result counts, and for
     * images of the chunk layout.
     */
    public List<PullResult> pullAll(List<PullImage> images, Progress progress) throws IOException {
        Map<String, Optional<CommittedDigests>> markers = new HashMap<>();
        List<Optional<String>> committed = new ArrayList<>();
        for (PullImage image : images) {
            ImageRef ref = image.ref();
            Optional<CommittedDigests> marker = markers.get(ref.job() + "/" + ref.generation());
            if (marker == null) {
                marker = repo.committed(ref.job(), ref.generation());
                markers.put(ref.job() + "/" + ref.generation(), marker);
            }
            committed.add(marker.isEmpty() ? Optional.empty() : Optional.of(marker.get().manifestSha256(ref.rank())));
        }
        return pullAll(images, committed, progress);
    }

    /**
     * {@link #pullAll(List, Progress)} of committed images whose manifest digests the caller read from
     * the marker already ({@link Repository#committed}), in the order of {@code images}: a restart
     * restores its node's ranks that no cache holds this way.
     */
    public List<PullResult> pullAllCommitted(List<PullImage> images, List<String> committedManifestSha256,
            Progress progress) throws IOException {
        if (images.size() != committedManifestSha256.size()) {
            throw new IllegalArgumentException(images.size() + " images but "
                    + committedManifestSha256.size() + " digests");
        }
        return pullAll(images, committedManifestSha256.stream().map(Optional::of).toList(), progress);
    }

    private List<PullResult> pullAll(List<PullImage> images, List<Optional<String>> committed, Progress progress)
            throws IOException {
        try {
            return new ImagePull(repo, workers, objectBuffers).runAll(images, committed, config.buffers(), progress);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("pull of " + images.size() + " images interrupted");
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

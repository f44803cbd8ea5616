package io.ferry.staging.internal;

import io.ferry.compression.ChunkFormat;
import io.ferry.model.BlobPlace;
import io.ferry.model.ChunkId;
import io.ferry.model.Entry;
import io.ferry.model.ImageRef;
import io.ferry.model.Manifest;
import io.ferry.staging.Progress;
import io.ferry.staging.PushImage;
import io.ferry.staging.PushResult;
import io.ferry.staging.Repository;
import io.ferry.staging.chunking.FastCdc;
import io.ferry.staging.packs.BlobLocation;
import io.ferry.staging.packs.DedupCache;
import io.ferry.stores.StoreException;
import io.ferry.staging.packs.PackResolver;
import io.ferry.staging.packs.PackWriter;
import io.ferry.stores.ObjectNotFoundException;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;

/**
 * One push of one image directory in the pack layout ({@code docs/formats/pack.md}). The
 * calling thread only reads: each file in segments into pooled buffers ({@link FileFeed}). Each segment goes
 * whole to a worker, which cuts it into blobs by content (FastCDC; a segment's end is also a
 * blob's end, so segments are independent and every stage runs on every core), and for each
 * blob computes its CRC32C, tests for zeros, names it ({@link io.ferry.staging.Blobs}: SHA-256, or a keyed
 * hash when encrypted), looks it up among the blobs
 * of this push, of the rank's latest generations and of the job's other ranks this node pushed
 * ({@link DedupCache}), and otherwise
 * compresses it and appends it to a pack ({@link PackWriter}: one durable put per pack). The
 * manifest (version 3) is written once every pack is durable. Single use, not thread-safe.
 */
public final class PackPush {
    /** Generations back a push looks for the rank's earlier manifests, and how many it uses. */
    static final int LOOKBACK = 8;
    private final Repository repo;
    private final ChunkFormat format;
    private final BufferPool pool;
    private final int segment;
    private final ExecutorService workers;
    private final ThreadLocal<byte[]> objectBuffers;
    private final FastCdc cdc;
    private final PackWriter packs;
    private final DedupCache cache;
    private final int baseGenerations;
    private final boolean fileSha256;
    private final byte[] zeros;
    /**
     * The blobs this push writes, each claimed by the worker that met it first and completed with
     * its place once appended: a worker that meets a claimed blob waits for that place instead of
     * writing the blob a second time (it used to write it too when two met it at the same moment).
     * Sized in {@link #run} for the push's blobs, so that it is never resized while workers fill it.
     */
    private ConcurrentHashMap<ChunkId, CompletableFuture<BlobLocation>> written;
    /**
     * Whether an earlier generation's pack is still on the store, and where gc's repack moved
     * its records, asked once per pack and push: a pack gc moved aside whole is not counted on
     * (its blobs are written again), as v1 chunks are not.
     */
    private final PackResolver packsOnStore;
    private Map<ChunkId, BlobLocation> base = Map.of();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    /**
     * @param pool            buffers of {@code segment} bytes each: a segment is read into one
     * @param baseGenerations how many of the rank's latest earlier manifests a push deduplicates against
     */
    public PackPush(Repository repo, ChunkFormat format, BufferPool pool, int segment, ExecutorService workers,
                    ThreadLocal<byte[]> objectBuffers, FastCdc cdc, PackWriter packs, DedupCache cache,
                    int baseGenerations, boolean fileSha256) {
        if (segment < cdc.max()) {
            throw new IllegalArgumentException("a segment of " + segment
                    + " bytes cannot hold the largest blob " + cdc.max());
        }
        this.repo = repo;
        this.packsOnStore = new PackResolver(repo.store());
        this.format = format;
        this.pool = pool;
        this.segment = segment;
        this.workers = workers;
        this.objectBuffers = objectBuffers;
        this.cdc = cdc;
        this.packs = packs;
        this.cache = cache;
        this.baseGenerations = baseGenerations;
        this.fileSha256 = fileSha256;
        this.zeros = new byte[cdc.max()];
    }

    /**
     * Where an earlier generation's blob lies now, or null: in its pack while the pack is on the
     * store, else where gc's repack moved it (the record copied into a pack that is there), else
     * nowhere (gc moved the pack aside: the blob is written again).
     */
    private BlobLocation onStore(BlobLocation earlier) throws StoreException {
        if (packsOnStore.isPresent(earlier.pack())) {
            return earlier;
        }
        PackResolver.Place now = packsOnStore.resolve(earlier.pack(), earlier.offset(), earlier.recordLength());
        return !now.pack().equals(earlier.pack()) && now.recordLength() == earlier.recordLength()
                && packsOnStore.isPresent(now.pack())
                ? new BlobLocation(now.pack(), now.offset(), now.recordLength(), earlier.length()) : null;
    }

    /**
     * One blob as a worker left it: {@code at} null for an all-zero blob; {@code fresh} when this
     * call appended it to a pack (else it was known: on the store, or met earlier in this push).
     */
    private record Blob(ChunkId id, int length, BlobLocation at, int crc32c, boolean fresh) {}

    /**
     * Pushes several images as one: their blobs go through the same workers into the same packs
     * (one durable put per pack for all of them, and a blob two images share is written once,
     * by the worker that meets it first), then each image gets its own manifest, in
     * order. A node's ranks of one generation are pushed so. Each result's stored bytes and
     * seconds are the group's, shared out: the bytes by what the image's own new blobs took, the
     * seconds by its raw bytes. {@code scanned.get(i)} is image i's listing ({@link ImageScanner#scan}).
     */
    public List<PushResult> run(List<PushImage> images, List<List<ImageScanner.Found>> scanned, Progress progress)
            throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        base = baseLocations(images);
        List<ImageScanner.Found> found = new ArrayList<>();
        int[] counts = new int[images.size()];
        long[] raw = new long[images.size()];
        for (int i = 0; i < images.size(); i++) {
            List<ImageScanner.Found> f = scanned.get(i);
            counts[i] = f.size();
            raw[i] = f.stream().mapToLong(ImageScanner.Found::size).sum();
            found.addAll(f);
        }
        long total = Arrays.stream(raw).sum();
        // about one blob per average blob size (no cut falls before the average less 64 bytes; file ends add a few)
        this.written = new ConcurrentHashMap<>((int) Math.min(1 << 20, total / cdc.avg() + 16));
        ImageRef first = images.get(0).ref();
        progress.start(images.size() == 1 ? "push " + first
                : "push " + first.job() + " generation " + first.generation() + ", " + images.size() + " images", total,
                Progress.Unit.BYTES);
        List<Object> read;
        try {
            read = new FileFeed<List<Blob>>(pool, segment, workers, fileSha256, failure,
                    (index, buf, len) -> stage(buf, len, progress)).readAll(found);
            packs.finish();
        } finally {
            progress.finish();
        }
        List<Written> written = new ArrayList<>(images.size());
        int at = 0;
        for (int i = 0; i < images.size(); i++) {
            written.add(manifest(images.get(i).ref(), read.subList(at, at + counts[i])));
            at += counts[i];
        }
        long fresh = written.stream().mapToLong(Written::freshBytes).sum();
        double seconds = (System.nanoTime() - t0) / 1e9;
        List<PushResult> out = new ArrayList<>(images.size());
        for (int i = 0; i < images.size(); i++) {
            Written w = written.get(i);
            long stored = fresh == 0 ? 0 : Math.round((double) packs.bytes() * w.freshBytes() / fresh);
            double share = total == 0 ? 1.0 / images.size() : (double) raw[i] / total;
            out.add(new PushResult(images.get(i).ref(), raw[i], w.files(), w.crcs().length, w.zero(),
                    w.known(), w.fresh(),
                    stored, w.manifestSha256(), Duration.ofNanos(Math.round(seconds * share * 1e9)), w.crcs()));
        }
        return out;
    }

    /** What writing one image's manifest found in its blobs. */
    private record Written(String manifestSha256, int files, int[] crcs, long zero, long known, long fresh,
            long freshBytes) {}

    /** Writes {@code ref}'s manifest (version 3) from its scanned entries and read files. */
    @SuppressWarnings("unchecked")
    private Written manifest(ImageRef ref, List<Object> read) throws IOException {
        Map<String, Integer> packNumbers = new LinkedHashMap<>();
        List<Entry> entries = new ArrayList<>(read.size());
        List<Integer> crcs = new ArrayList<>();
        int files = 0;
        long zero = 0;
        long known = 0;
        long fresh = 0;
        long freshBytes = 0;
        for (Object o : read) {
            if (!(o instanceof FileFeed.Read<?> r)) {
                entries.add((Entry) o);
                continue;
            }
            files++;
            List<ChunkId> ids = new ArrayList<>();
            List<BlobPlace> places = new ArrayList<>();
            for (CompletableFuture<?> seg : r.pieces()) {
                for (Blob b : ((CompletableFuture<List<Blob>>) seg).join()) {
                    ids.add(b.id());
                    crcs.add(b.crc32c());
                    if (b.at() == null) {
                        zero++;
                    } else if (b.fresh()) {
                        fresh++;
                        freshBytes += b.at().recordLength();
                    } else {
                        known++;
                    }
                    places.add(b.at() == null ? BlobPlace.zero(b.length()) : new BlobPlace(b.length(),
                            packNumbers.computeIfAbsent(b.at().pack(), k -> packNumbers.size()), b.at().offset(),
                            b.at().recordLength()));
                }
            }
            entries.add(new Entry.RegularFile(r.found().path(), r.found().mode(), r.found().size(),
                    r.sha256(), ids, places));
        }
        Manifest m = new Manifest(ref, cdc.max(), entries, List.copyOf(packNumbers.keySet()), repo.blobs().keyId());
        String manifestSha = repo.putManifest(m);
        cache.put(Repository.manifestKey(ref), m);
        return new Written(manifestSha, files, crcs.stream().mapToInt(Integer::intValue).toArray(), zero, known, fresh,
                freshBytes);
    }

    /**
     * The stored blobs the images can be deduplicated against: for each, its own manifest if
     * there is one (a push repeated after a failure then writes the same manifest, byte for byte,
     * as the chunk layout does: a coordinator may have read the first one's digest already) and
     * the rank's latest {@code baseGenerations} earlier manifests (committed or not: a manifest
     * is written only after its packs are durable), from the cache or the store; then the job's
     * other ranks this node pushed. The first place met for a blob wins, so an image's own
     * newest manifests come before older ones and before other ranks'. A manifest that cannot be
     * read is no base: its blobs are written again. Each manifest is merged once, however many
     * images name it.
     */
    private Map<ChunkId, BlobLocation> baseLocations(List<PushImage> images) {
        Map<ChunkId, BlobLocation> out = new HashMap<>();
        Set<Map<ChunkId, BlobLocation>> merged =
                Collections.newSetFromMap(new IdentityHashMap<>());
        for (PushImage i : images) {
            ImageRef ref = i.ref();
            addBase(out, merged, ref);
            int used = 0;
            for (long g = ref.generation() - 1; g >= Math.max(0, ref.generation() - LOOKBACK)
                    && used < baseGenerations; g--) {
                if (addBase(out, merged, new ImageRef(ref.job(), g, ref.rank()))) {
                    used++;
                }
            }
        }
        if (baseGenerations > 0) {
            // The job's other ranks this node pushed, of these generations and the ones before: ranks of one
            // program share its code and often their read-only data. From the node's cache only, no store read.
            // The images' own manifests were merged above and do not count among the siblings.
            Set<String> prefixes = new LinkedHashSet<>();
            Set<String> own = new HashSet<>();
            for (PushImage i : images) {
                for (long g = i.ref().generation(); g >= Math.max(0, i.ref().generation() - 1); g--) {
                    String key = Repository.manifestKey(new ImageRef(i.ref().job(), g, i.ref().rank()));
                    prefixes.add(key.substring(0, key.lastIndexOf('/') + 1));
                    own.add(key);
                }
            }
            for (String prefix : prefixes) {
                for (Map<ChunkId, BlobLocation> sibling : cache.siblings(prefix, own, SIBLINGS)) {
                    if (merged.add(sibling)) {
                        sibling.forEach(out::putIfAbsent);
                    }
                }
            }
        }
        return out;
    }

    /**
     * The stored blobs a push of {@code images} would deduplicate against ({@link #baseLocations}):
     * what a sample of them is looked up in ({@link PushSample}).
     */
    public Map<ChunkId, BlobLocation> baseFor(List<PushImage> images) {
        return baseLocations(images);
    }

    /** Other ranks' manifests a push deduplicates against, per generation (bounds the lookup map it builds). */
    static final int SIBLINGS = 8;

    /**
     * Adds the blobs of {@code ref}'s manifest not already placed; false if there is none (a
     * damaged one counts as one).
     */
    private boolean addBase(Map<ChunkId, BlobLocation> out,
            Set<Map<ChunkId, BlobLocation>> merged, ImageRef ref) {
        String key = Repository.manifestKey(ref);
        var held = cache.get(key);
        if (held.isPresent()) {
            if (merged.add(held.get())) {
                held.get().forEach(out::putIfAbsent);
            }
            return true;
        }
        try {
            Manifest m = repo.readManifest(ref).manifest();
            if (m.inPacks() && m.keyId().equals(repo.blobs().keyId())) { // other keys name blobs otherwise
                Map<ChunkId, BlobLocation> blobs = cache.put(key, m);
                merged.add(blobs);
                blobs.forEach(out::putIfAbsent);
            }
            return true;
        } catch (ObjectNotFoundException none) {
            return false;
        } catch (IOException | RuntimeException unreadable) {
            return true; // so that a damaged manifest does not make the push read further back
        }
    }

    /** Cuts one segment into blobs and stages each; gives the buffer back. */
    private List<Blob> stage(byte[] buf, int len, Progress progress) {
        try {
            if (failure.get() != null) {
                throw new CancellationException("push failed");
            }
            List<Blob> out = new ArrayList<>(len / cdc.avg() + 2);
            long freshRaw = 0;
            long freshStored = 0;
            for (int at = 0; at < len; ) {
                int n = cdc.next(buf, at, len);
                Blob b = blob(buf, at, n);
                out.add(b);
                if (b.fresh()) {
                    freshRaw += n;
                    freshStored += b.at().recordLength();
                }
                at += n;
            }
            if (freshRaw > 0) {
                progress.wrote(freshRaw, freshStored);
            }
            return out;
        } catch (IOException e) {
            failure.compareAndSet(null, e);
            throw new CompletionException(e);
        } catch (RuntimeException e) {
            failure.compareAndSet(null, e);
            throw e;
        } finally {
            pool.give(buf);
            progress.advance(len);
        }
    }

    private Blob blob(byte[] buf, int at, int n) throws IOException {
        CRC32C crc = new CRC32C();
        crc.update(buf, at, n);
        int crc32c = (int) crc.getValue();
        if (Arrays.mismatch(buf, at, at + n, zeros, 0, n) == -1) {
            return new Blob(ChunkId.ZERO, n, null, crc32c, false);
        }
        ChunkId id = repo.blobs().name(buf, at, n); // SHA-256, or HMAC-SHA256 under the naming key when encrypted
        CompletableFuture<BlobLocation> claim = written.get(id);
        if (claim == null) {
            BlobLocation earlier = base.get(id);
            BlobLocation known = earlier != null && earlier.length() == n ? onStore(earlier) : null;
            if (known != null) {
                return new Blob(id, n, known, crc32c, false);
            }
            CompletableFuture<BlobLocation> mine = new CompletableFuture<>();
            claim = written.putIfAbsent(id, mine);
            if (claim == null) {
                try {
                    BlobLocation loc = write(id, buf, at, n);
                    mine.complete(loc);
                    return new Blob(id, n, loc, crc32c, true);
                } catch (IOException | RuntimeException e) {
                    mine.completeExceptionally(e); // a worker waiting for it fails with the push
                    throw e;
                }
            }
        }
        try {
            // Written by another worker of this push, or about to be: wait for its place (a record's append,
            // or, where that record filled a pack, the pack's durable put).
            return new Blob(id, n, claim.get(), crc32c, false);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted waiting for blob " + id + " to be written");
        } catch (ExecutionException e) {
            throw new IOException("blob " + id + " was not written: " + e.getCause().getMessage(), e.getCause());
        }
    }

    /** Encodes the blob {@code buf[at, at + n)} into its record and appends it to a pack; returns its place. */
    private BlobLocation write(ChunkId id, byte[] buf, int at, int n) throws IOException {
        byte[] obj = objectBuffers.get();
        if (obj.length < repo.blobs().maxRecordLength(format, n)) {
            obj = new byte[repo.blobs().maxRecordLength(format, cdc.max())];
            objectBuffers.set(obj);
        }
        int stored = repo.blobs().encode(format, id, buf, at, n, obj);
        PackWriter.Placed p = packs.append(id, obj, 0, stored);
        return new BlobLocation(p.pack(), p.offset(), stored, n);
    }
}

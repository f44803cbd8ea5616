package io.ferry.staging.internal;

import io.ferry.compression.ChunkFormat;
import io.ferry.compression.CorruptChunkException;
import io.ferry.compression.Digests;
import io.ferry.model.ChunkId;
import io.ferry.model.Entry;
import io.ferry.model.ImageRef;
import io.ferry.model.Manifest;
import io.ferry.staging.ImageCorruptException;
import io.ferry.staging.Progress;
import io.ferry.staging.PullImage;
import io.ferry.staging.PullResult;
import io.ferry.staging.CommittedDigests;
import io.ferry.staging.Repository;
import io.ferry.stores.ObjectNotFoundException;
import io.ferry.stores.Store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One pull of one image into a directory; the files of a pack-layout image are restored by
 * {@link PackReads}, those of the chunk layout here. Workers fetch, verify (CRC32C, SHA-256) and
 * decompress chunks and write them at their offsets, in parallel; all-zero chunks stay holes.
 * Where the manifest records a whole-file digest (version 1), the calling thread writes the
 * chunks in order instead and keeps that digest. Everything lands in a hidden
 * sibling directory that is renamed to the destination only once every file verified and
 * was fsynced: a failed pull leaves nothing behind. Single use, not thread-safe.
 */
public final class ImagePull {
    private final Repository repo;
    private final Store store;
    private final ExecutorService workers;
    private final ThreadLocal<byte[]> objectBuffers;
    private final AtomicLong fetchedChunks = new AtomicLong();
    private final AtomicLong fetchedBytes = new AtomicLong();
    private BufferPool pool;
    private byte[] zeros;

    public ImagePull(Repository repo, ExecutorService workers, ThreadLocal<byte[]> objectBuffers) {
        this.repo = repo;
        this.store = repo.store();
        this.workers = workers;
        this.objectBuffers = objectBuffers;
    }

    private record Fetched(byte[] buf, int len) {}

    /**
     * {@link #run(ImageRef, Path, int, Progress, Optional)} with the commit marker read here (empty: not committed).
     */
    public PullResult run(ImageRef ref, Path dest, int buffers, Progress progress) throws IOException,
            InterruptedException {
        Optional<CommittedDigests> c = repo.committed(ref.job(), ref.generation());
        return run(ref, dest, buffers, progress, c.isEmpty() ? Optional.empty()
                : Optional.of(c.get().manifestSha256(ref.rank())));
    }

    /**
     * Pulls {@code ref}; {@code committed} is the digest its snapshot's marker gives its manifest
     * (read once per node by a restart), or empty for an image of a generation not committed.
     */
    public PullResult run(ImageRef ref, Path dest, int buffers, Progress progress, Optional<String> committed)
            throws IOException, InterruptedException {
        Manifest m = manifest(ref, committed);
        if (m.inPacks()) {
            return pullPacks(List.of(new PullImage(ref, dest)), List.of(m), List.of(committed), progress).get(0);
        }
        return pullChunks(ref, m, dest, buffers, progress, committed);
    }

    /** A chunk-layout image whose manifest {@code m} was read and checked already. */
    private PullResult pullChunks(ImageRef ref, Manifest m, Path dest, int buffers, Progress progress,
            Optional<String> committed) throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        Path target = target(dest);
        Path tmp = partial(target);
        pool = new BufferPool(buffers, m.chunkSize());
        zeros = new byte[m.chunkSize()];
        progress.start("pull " + ref, m.rawBytes(), Progress.Unit.BYTES);
        int files = 0;
        try {
            for (Entry e : m.entries()) {
                if (e instanceof Entry.Directory d) {
                    Files.createDirectories(tmp.resolve(d.path()));
                } else if (e instanceof Entry.RegularFile f) {
                    Files.createDirectories(tmp.resolve(f.path()).getParent());
                    pullFile(ref, m.chunkSize(), f, tmp.resolve(f.path()), progress);
                    files++;
                } else if (!(e instanceof Entry.Symlink)) {
                    throw new AssertionError(e);
                }
            }
            land(m, tmp, target);
        } catch (IOException | InterruptedException | RuntimeException e) {
            FileTrees.deleteQuietly(tmp, e);
            throw e;
        } finally {
            progress.finish();
        }
        return new PullResult(ref, target, m.rawBytes(), files, fetchedChunks.get(), fetchedBytes.get(),
                fetchedBytes.get(), committed.isPresent(), Duration.ofNanos(System.nanoTime() - t0));
    }

    /**
     * Pulls several pack-layout images together (a node's ranks of one generation): one pass over
     * the records they need, so a record two of them hold is read, checked and decoded once, and
     * the reads of one image's last files overlap another's. {@code committed.get(i)} is what
     * {@link #run(ImageRef, Path, int, Progress, Optional)} takes for image {@code i}. Every image
     * is checked before anything is written; each lands complete, or, on a failure before the
     * first lands, none does. Each result counts the records its image was the first to need (the
     * group's reads add up over them) and the whole pull's time. Images of the chunk layout (stores
     * written before packs) are pulled one after another, after the others, each with
     * {@code buffers} chunk buffers.
     */
    public List<PullResult> runAll(List<PullImage> images, List<Optional<String>> committed, int buffers,
            Progress progress) throws IOException, InterruptedException {
        List<Integer> packed = new ArrayList<>();
        List<Manifest> all = new ArrayList<>();
        for (int i = 0; i < images.size(); i++) {
            Manifest m = manifest(images.get(i).ref(), committed.get(i));
            all.add(m);
            if (m.inPacks()) {
                packed.add(i);
            }
        }
        List<Manifest> manifests = packed.stream().map(all::get).toList();
        PullResult[] out = new PullResult[images.size()];
        List<PullResult> together = pullPacks(packed.stream().map(images::get).toList(), manifests,
                packed.stream().map(committed::get).toList(), progress);
        for (int k = 0; k < packed.size(); k++) {
            out[packed.get(k)] = together.get(k);
        }
        for (int i = 0; i < images.size(); i++) {
            if (out[i] == null) {
                out[i] = new ImagePull(repo, workers, objectBuffers).pullChunks(images.get(i).ref(), all.get(i),
                        images.get(i).dest(), buffers, progress, committed.get(i));
            }
        }
        return List.of(out);
    }

    private List<PullResult> pullPacks(List<PullImage> images, List<Manifest> manifests,
            List<Optional<String>> committed,
                                       Progress progress) throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        if (images.isEmpty()) {
            return List.of();
        }
        List<Path> targets = new ArrayList<>();
        for (PullImage image : images) {
            Path target = target(image.dest());
            if (targets.contains(target)) {
                throw new IllegalArgumentException("two images of one pull go to " + target);
            }
            targets.add(target);
        }
        List<PackReads.Into> into = new ArrayList<>();
        long raw = 0;
        try {
            for (int i = 0; i < images.size(); i++) {
                Manifest m = manifests.get(i);
                Path tmp = partial(targets.get(i));
                into.add(new PackReads.Into(images.get(i).ref(), m, tmp));
                for (Entry e : m.entries()) {
                    if (e instanceof Entry.Directory d) {
                        Files.createDirectories(tmp.resolve(d.path()));
                    }
                }
                raw += m.rawBytes();
            }
            progress.start(images.size() == 1 ? "pull " + images.get(0).ref() : "pull " + images.size() + " images",
                    raw, Progress.Unit.BYTES);
            PackReads packs = new PackReads(store, workers, repo.blobs());
            try {
                packs.pull(into, progress);
            } finally {
                progress.finish();
            }
            List<PullResult> out = new ArrayList<>();
            for (int i = 0; i < into.size(); i++) {
                PackReads.Into in = into.get(i);
                land(in.manifest(), in.tmp(), targets.get(i));
                PackReads.Counts c = packs.counts(i);
                int files = (int) in.manifest().entries().stream().filter(e -> e instanceof Entry.RegularFile).count();
                out.add(new PullResult(in.ref(), targets.get(i), in.manifest().rawBytes(), files, c.records.get(),
                        c.recordBytes.get(), c.spanBytes.get(), committed.get(i).isPresent(),
                        Duration.ofNanos(System.nanoTime() - t0)));
            }
            return out;
        } catch (IOException | InterruptedException | RuntimeException e) {
            for (PackReads.Into in : into) {
                FileTrees.deleteQuietly(in.tmp(), e); // gone already where the image landed
            }
            throw e;
        }
    }

    /**
     * The manifest of {@code ref}, refused unless its bytes are the ones committed (where given) and its key is here.
     */
    private Manifest manifest(ImageRef ref, Optional<String> committed) throws IOException {
        Repository.StoredManifest sm;
        try {
            sm = repo.readManifest(ref);
        } catch (ObjectNotFoundException e) {
            throw new IllegalArgumentException("no image " + ref + " in " + store.uri(), e);
        }
        if (committed.isPresent() && !sm.sha256().equals(committed.get())) {
            throw new ImageCorruptException("image " + ref + ": manifest digest " + sm.sha256()
                    + " differs from the one its snapshot committed (" + committed.get() + ")", null);
        }
        Manifest m = sm.manifest();
        repo.blobs().requireKeyOf(m, "generation " + ref.generation() + " of job " + ref.job());
        return m;
    }

    private static Path target(Path dest) throws IOException {
        Path target = dest.toAbsolutePath().normalize();
        if (Files.exists(target) && !(Files.isDirectory(target) && isEmpty(target))) {
            throw new IllegalArgumentException("destination " + target + " exists and is not an empty directory");
        }
        return target;
    }

    /** A new hidden sibling of {@code target} that the image is restored into before it is renamed. */
    private static Path partial(Path target) throws IOException {
        Files.createDirectories(target.getParent());
        Path tmp = target.resolveSibling("." + target.getFileName() + ".ferry-partial-"
                + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        Files.createDirectory(tmp);
        return tmp;
    }

    /** Symlinks, modes and fsyncs of the restored image, then its rename into place. */
    private static void land(Manifest m, Path tmp, Path target) throws IOException {
        finish(m, tmp);
        if (Files.exists(target)) {
            Files.delete(target);
        }
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
        fsync(target.getParent());
    }

    private void pullFile(ImageRef ref, int chunkSize, Entry.RegularFile f, Path out, Progress progress)
            throws IOException, InterruptedException {
        // Every chunk is checked against its id (the SHA-256 of its bytes) and its length: that proves the
        // file. A whole-file digest, where the manifest recorded one (version 1), is checked as well.
        MessageDigest whole = f.sha256().equals(Entry.RegularFile.NOT_RECORDED) ? null : Digests.newSha256();
        List<ChunkId> ids = f.chunks();
        Deque<CompletableFuture<Fetched>> window = new ArrayDeque<>();
        int next = 0;
        try (FileChannel ch = FileChannel.open(out, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (int i = 0; i < ids.size(); i++) {
                while (next < ids.size() && window.size() < pool.capacity()) {
                    window.add(submit(ref, f, next, chunkSize, whole == null ? ch : null));
                    next++;
                }
                Fetched c = await(window.poll(), window);
                long pos = (long) i * chunkSize;
                int len = (int) Math.min(chunkSize, f.size() - pos);
                if (c.buf() == null) {
                    if (whole != null) {
                        whole.update(zeros, 0, len);
                    }
                } else {
                    try {
                        if (whole != null) {
                            whole.update(c.buf(), 0, len);
                        }
                        ByteBuffer b = ByteBuffer.wrap(c.buf(), 0, len);
                        while (b.hasRemaining()) {
                            ch.write(b, pos + b.position());
                        }
                    } finally {
                        pool.give(c.buf());
                    }
                }
                progress.advance(len);
            }
            if (ch.size() < f.size()) {
                // A trailing run of zero chunks: extend with one zero byte, the rest stays a hole.
                ch.write(ByteBuffer.wrap(new byte[1]), f.size() - 1);
            }
            String actual = whole == null ? null : Digests.hex(whole.digest()); // null: the chunks proved it
            if (actual != null && !actual.equals(f.sha256())) {
                throw new ImageCorruptException("image " + ref + " file '" + f.path() + "': SHA-256 mismatch: manifest "
                        + f.sha256() + ", restored bytes " + actual, null);
            }
            ch.force(true);
        }
        Files.setPosixFilePermissions(out, FileTrees.permissions(f.mode()));
    }

    /**
     * Fetches chunk {@code index}; with a {@code sink} (no whole-file digest to keep in order) the
     * worker also writes it there at its offset and returns no buffer, so chunks are written in
     * parallel; without, the calling thread writes (and hashes) them in order.
     */
    private CompletableFuture<Fetched> submit(ImageRef ref, Entry.RegularFile f, int index, int chunkSize,
            FileChannel sink) {
        ChunkId id = f.chunks().get(index);
        if (id.isZero()) {
            return CompletableFuture.completedFuture(new Fetched(null, 0));
        }
        int expected = (int) Math.min(chunkSize, f.size() - (long) index * chunkSize);
        return CompletableFuture.supplyAsync(() -> fetch(ref, f, index, id, expected, chunkSize, sink), workers);
    }

    private Fetched fetch(ImageRef ref, Entry.RegularFile f, int index, ChunkId id, int expected, int chunkSize,
                          FileChannel sink) {
        String where = "image " + ref + " file '" + f.path() + "' chunk " + index + " of " + f.chunks().size()
                + " (" + id + ")";
        byte[] raw = null;
        try {
            byte[] obj = objectBuffers.get();
            int cap = chunkSize + chunkSize / 64 + 4096; // above any zstd bound and the header
            if (obj.length < cap) {
                obj = new byte[cap];
                objectBuffers.set(obj);
            }
            int n = store.read(Repository.chunkKey(id), obj);
            if (n >= obj.length) {
                throw new CorruptChunkException(id.toString(), "object of " + n + " bytes is larger than any chunk");
            }
            raw = pool.take();
            int len = ChunkFormat.decode(obj, n, id.bytes(), raw, id.toString());
            if (len != expected) {
                throw new CorruptChunkException(id.toString(),
                        "holds " + len + " bytes where the file needs " + expected);
            }
            fetchedChunks.incrementAndGet();
            fetchedBytes.addAndGet(n);
            if (sink == null) {
                return new Fetched(raw, len);
            }
            long pos = (long) index * chunkSize;
            ByteBuffer b = ByteBuffer.wrap(raw, 0, len);
            while (b.hasRemaining()) {
                sink.write(b, pos + b.position()); // positional: safe from several threads
            }
            pool.give(raw);
            raw = null;
            return new Fetched(null, len);
        } catch (ObjectNotFoundException e) {
            giveBack(raw);
            throw new CompletionException(new ImageCorruptException(where + ": missing chunk", e));
        } catch (CorruptChunkException e) {
            giveBack(raw);
            throw new CompletionException(new ImageCorruptException(where + ": "
                    + e.getMessage(), e));
        } catch (IOException e) {
            giveBack(raw);
            throw new CompletionException(new IOException(where + ": " + e.getMessage(), e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CompletionException(e);
        }
    }

    private void giveBack(byte[] raw) {
        if (raw != null) {
            pool.give(raw);
        }
    }

    /** Waits for one chunk; on failure waits out the rest of the window (returning buffers) and rethrows. */
    private Fetched await(CompletableFuture<Fetched> f, Deque<CompletableFuture<Fetched>> window)
            throws IOException, InterruptedException {
        try {
            return f.get();
        } catch (ExecutionException e) {
            for (CompletableFuture<Fetched> rest : window) {
                Fetched ok = rest.exceptionally(t -> null).join();
                if (ok != null && ok.buf() != null) {
                    pool.give(ok.buf());
                }
            }
            throw Failures.asIOException(e);
        }
    }

    /** Symlinks, directory modes (deepest first, so read-only directories are filled first) and fsyncs. */
    private static void finish(Manifest m, Path tmp) throws IOException {
        for (Entry e : m.entries()) {
            if (e instanceof Entry.Symlink s) {
                Files.createSymbolicLink(tmp.resolve(s.path()), Path.of(s.target()));
            }
        }
        List<Path> dirs = new ArrayList<>();
        try (var walk = Files.walk(tmp)) {
            walk.filter(p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)).forEach(dirs::add);
        }
        for (Path d : dirs) {
            fsync(d);
        }
        List<Entry.Directory> modes = new ArrayList<>();
        for (Entry e : m.entries()) {
            if (e instanceof Entry.Directory d) {
                modes.add(d);
            }
        }
        modes.sort(Comparator.comparing((Entry.Directory d) -> d.path().length()).reversed());
        for (Entry.Directory d : modes) {
            Files.setPosixFilePermissions(tmp.resolve(d.path()), FileTrees.permissions(d.mode()));
        }
    }

    private static void fsync(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    private static boolean isEmpty(Path dir) throws IOException {
        try (var s = Files.list(dir)) {
            return s.findAny().isEmpty();
        }
    }
}

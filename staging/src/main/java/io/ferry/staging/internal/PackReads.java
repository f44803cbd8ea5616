package io.ferry.staging.internal;

import io.ferry.compression.CorruptChunkException;
import io.ferry.compression.Digests;
import io.ferry.model.BlobPlace;
import io.ferry.model.ChunkId;
import io.ferry.model.DaemonThreads;
import io.ferry.model.Entry;
import io.ferry.model.ImageRef;
import io.ferry.model.Manifest;
import io.ferry.staging.Blobs;
import io.ferry.staging.ImageCorruptException;
import io.ferry.staging.Progress;
import io.ferry.staging.crypt.EncryptionKeyException;
import io.ferry.staging.packs.PackKeys;
import io.ferry.staging.packs.PackResolver;
import io.ferry.stores.FileIo;
import io.ferry.stores.ObjectNotFoundException;
import io.ferry.stores.PermanentStoreException;
import io.ferry.stores.Store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Restores the files of a pack-layout image (manifest version 3). The records a batch of files
 * needs are sorted by pack and offset and read in spans: neighbouring records (gaps under
 * {@link #GAP}) are fetched together with one positional read or ranged GET of up to
 * {@link #SPAN} bytes, so a restart reads only what it needs, in few requests. Workers
 * verify each record (CRC32C, decompression, SHA-256 against the blob's name and its length)
 * and write its bytes wherever the image holds that blob, with positional writes, in parallel.
 * All-zero blobs stay holes. Every byte of a file lies in exactly one blob, so the checked blobs
 * prove the file; a whole-file digest, where one was recorded, is checked as well.
 * Single use, not thread-safe.
 */
final class PackReads {
    /** Largest read: a node's workers hold at most one span buffer each, for this pull only. */
    static final int SPAN = 2 << 20;
    static final int GAP = 64 << 10;
    /** Files open at once: the files of an image are restored in batches of this many. */
    static final int FILES_AT_ONCE = 256;
    /**
     * Bytes written to a file after which its writeback is started, by {@code fdatasync} on this pull's
     * flusher thread, off the workers: the disk then writes while the workers decode, where it used
     * to receive a whole file's bytes at its final fsync while the workers waited for it.
     */
    static final long FLUSH_EVERY = 16L << 20;
    private final Store store;
    private final ExecutorService workers;
    private final PackResolver resolver;
    private final ThreadLocal<byte[]> raws = ThreadLocal.withInitial(() -> new byte[0]);
    /**
     * Span buffers of {@link #SPAN} bytes, reused from span to span (a fresh array per span cost the
     * pull its zeroing and page faults) and gone with this pull.
     */
    private final ConcurrentLinkedQueue<byte[]> spanBuffers =
            new ConcurrentLinkedQueue<>();
    /** What each image of the pull read, in the order given to {@link #pull(List, Progress)}. */
    private Counts[] counts = new Counts[0];

    private final Blobs blobs;
    /** One thread that starts files' writeback ({@link #FLUSH_EVERY}); ends with {@link #pull}. */
    private final ExecutorService flusher = Executors.newSingleThreadExecutor(
            DaemonThreads.named("ferry-pull-flusher"));

    PackReads(Store store, ExecutorService workers, Blobs blobs) {
        this.blobs = blobs;
        this.store = store;
        this.workers = workers;
        this.resolver = new PackResolver(store);
    }

    /** One image of a pull: its manifest and the hidden directory its files go into (its directories made). */
    record Into(ImageRef ref, Manifest manifest, Path tmp) {}

    /**
     * What one image of a pull read: the records it was the first to need, their stored bytes, and the
     * spans (records needed and what lies between them) whose first record it needed first. Summed
     * over the images of a pull, they are what the pull read; a record two images share counts once.
     */
    static final class Counts {
        final AtomicLong records = new AtomicLong();
        final AtomicLong recordBytes = new AtomicLong();
        final AtomicLong spanBytes = new AtomicLong();
    }

    /** A file being restored: its blob writes still to come; the worker that makes the last one finishes the file. */
    private record Restored(ImageRef ref, Entry.RegularFile file, FileChannel ch, Path out, AtomicInteger pending,
                            Writeback writeback) {}

    /** A file's early writeback: bytes written since its last flush, whether one runs, the first that failed. */
    private static final class Writeback {
        final AtomicLong unflushed = new AtomicLong();
        final AtomicBoolean flushing = new AtomicBoolean();
        final AtomicReference<IOException> failed = new AtomicReference<>();
    }

    private record Target(Restored file, long pos) {
        FileChannel ch() {
            return file.ch();
        }

        String path() {
            return file.file().path();
        }
    }

    private record RecordKey(String pack, long offset) {}

    private static final class Need {
        final ChunkId id;
        final BlobPlace place;
        final PackResolver.Place at; // where the record lies now (gc may have moved it)
        final int owner; // the image that needed it first, which its reads are counted to
        final List<Target> targets = new ArrayList<>(1);

        Need(ChunkId id, BlobPlace place, PackResolver.Place at, int owner) {
            this.id = id;
            this.place = place;
            this.at = at;
            this.owner = owner;
        }
    }

    private record FileOf(int image, Entry.RegularFile file) {}

    private record Span(String pack, long start, int length, List<Need> needs) {}

    /**
     * Creates and fills every regular file of each image under its {@code tmp} (directories exist). A
     * record several images (or files) hold is read and checked once and written to each of them.
     */
    void pull(List<Into> images, Progress progress) throws IOException, InterruptedException {
        counts = new Counts[images.size()];
        List<FileOf> files = new ArrayList<>();
        for (int i = 0; i < images.size(); i++) {
            counts[i] = new Counts();
            for (Entry e : images.get(i).manifest().entries()) {
                if (e instanceof Entry.RegularFile f) {
                    files.add(new FileOf(i, f));
                }
            }
        }
        try {
            for (int from = 0; from < files.size(); from += FILES_AT_ONCE) {
                batch(images, files.subList(from, Math.min(files.size(), from + FILES_AT_ONCE)), progress);
            }
        } finally {
            flusher.shutdown();
        }
    }

    /** What image {@code i} of the last {@link #pull} read. */
    Counts counts(int i) {
        return counts[i];
    }

    private void batch(List<Into> images, List<FileOf> files, Progress progress) throws IOException,
            InterruptedException {
        List<FileChannel> open = new ArrayList<>(files.size());
        try {
            Map<RecordKey, Need> needs = new LinkedHashMap<>();
            List<Restored> restored = new ArrayList<>(files.size());
            for (FileOf of : files) {
                Entry.RegularFile f = of.file();
                Manifest m = images.get(of.image()).manifest();
                ImageRef ref = images.get(of.image()).ref();
                Path out = images.get(of.image()).tmp().resolve(f.path());
                Files.createDirectories(out.getParent());
                FileChannel ch = FileChannel.open(out, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                        StandardOpenOption.READ);
                open.add(ch);
                Restored file = new Restored(ref, f, ch, out, new AtomicInteger(), new Writeback());
                restored.add(file);
                long[] at = f.offsets(m.chunkSize());
                for (int i = 0; i < f.chunks().size(); i++) {
                    BlobPlace p = f.places().get(i);
                    if (p.isZero()) {
                        progress.advance(p.length());
                        continue;
                    }
                    String pack = m.packs().get(p.pack());
                    RecordKey key = new RecordKey(pack, p.offset());
                    Need n = needs.get(key);
                    if (n == null) {
                        n = new Need(f.chunks().get(i), p,
                                resolver.resolve(pack, p.offset(), p.recordLength()), of.image());
                        needs.put(key, n);
                    }
                    if (!n.id.equals(f.chunks().get(i)) || n.place.recordLength() != p.recordLength()) {
                        throw new ImageCorruptException("image " + ref + " file '" + f.path() + "' blob " + i
                                + ": its pack record is also named as a different blob", null);
                    }
                    n.targets.add(new Target(file, at[i]));
                    file.pending().incrementAndGet();
                }
            }
            List<CompletableFuture<Void>> tasks = new ArrayList<>();
            for (Restored r : restored) {
                if (r.pending().get() == 0) { // all zeros, or empty: nothing to wait for
                    tasks.add(CompletableFuture.runAsync(() -> finishFile(r), workers));
                }
            }
            int rawSize = images.stream().mapToInt(i -> i.manifest().chunkSize()).max().orElse(0);
            for (Span s : spans(needs.values())) {
                tasks.add(CompletableFuture.runAsync(() -> read(images, rawSize, s, progress), workers));
            }
            try {
                CompletableFuture.allOf(tasks.toArray(CompletableFuture[]::new)).get();
            } catch (ExecutionException e) {
                tasks.forEach(t -> t.exceptionally(x -> null).join());
                throw Failures.asIOException(e);
            }
            drainFlusher();
            for (Restored r : restored) {
                // Linux reports a failed writeback once per open file: to the early flush that met
                // it, not the fsync after.
                IOException failed = r.writeback().failed.get();
                if (failed != null) {
                    throw new IOException("image " + r.ref() + " file '" + r.file().path() + "': writing it failed: "
                            + failed.getMessage(), failed);
                }
            }
        } finally {
            try {
                drainFlusher();
            } finally {
                for (FileChannel ch : open) {
                    ch.close();
                }
            }
        }
    }

    /** Records in pack and offset order, neighbours joined into spans. */
    private static List<Span> spans(Collection<Need> needs) {
        List<Need> sorted = new ArrayList<>(needs);
        sorted.sort(Comparator.comparing((Need n) -> n.at.pack()).thenComparingLong(n -> n.at.offset()));
        List<Span> out = new ArrayList<>();
        List<Need> run = new ArrayList<>();
        long start = 0;
        long end = 0;
        for (Need n : sorted) {
            long o = n.at.offset();
            boolean joins = !run.isEmpty() && run.get(0).at.pack().equals(n.at.pack()) && o >= end
                    && o - end <= GAP && o + n.at.recordLength() - start <= SPAN;
            if (!joins && !run.isEmpty()) {
                out.add(new Span(run.get(0).at.pack(), start, (int) (end - start), run));
                run = new ArrayList<>();
            }
            if (run.isEmpty()) {
                start = o;
                end = o;
            }
            run.add(n);
            end = Math.max(end, o + n.at.recordLength());
        }
        if (!run.isEmpty()) {
            out.add(new Span(run.get(0).at.pack(), start, (int) (end - start), run));
        }
        return out;
    }

    private void read(List<Into> images, int rawSize, Span s, Progress progress) {
        String pack = s.pack();
        String where = "image " + images.get(s.needs().get(0).owner).ref() + " pack " + pack;
        byte[] buf = null;
        try {
            byte[] pooled = spanBuffers.poll();
            buf = pooled != null && pooled.length >= s.length() ? pooled : new byte[Math.max(s.length(), SPAN)];
            byte[] raw = raws.get();
            if (raw.length < rawSize) {
                raw = new byte[rawSize];
                raws.set(raw);
            }
            store.readRange(PackKeys.packKey(pack), s.start(), buf, 0, s.length());
            counts[s.needs().get(0).owner].spanBytes.addAndGet(s.length());
            for (Need n : s.needs()) {
                String name = "blob " + n.id + " of file '" + n.targets.get(0).path() + "'";
                int len = blobs.decode(buf, (int) (n.at.offset() - s.start()), n.at.recordLength(), n.id, raw, name);
                if (len != n.place.length()) {
                    throw new CorruptChunkException(name,
                            "holds " + len + " bytes where the file needs " + n.place.length());
                }
                for (Target t : n.targets) {
                    // positional, through this thread's small direct buffer
                    FileIo.writeFully(t.ch(), t.pos(), raw, 0, len);
                    progress.advance(len);
                    startWriteback(t.file(), len);
                    if (t.file().pending().decrementAndGet() == 0) {
                        // Its last blob: fsync it now, on this worker, while the others go on with later files, so
                        // the flushes overlap the decoding and each other instead of queueing at the end.
                        finishFile(t.file());
                    }
                }
                counts[n.owner].records.incrementAndGet();
                counts[n.owner].recordBytes.addAndGet(n.at.recordLength());
            }
        } catch (ObjectNotFoundException e) {
            throw new CompletionException(new ImageCorruptException(where + ": missing pack", e));
        } catch (PermanentStoreException e) {
            throw new CompletionException(new ImageCorruptException(where + ": " + e.getMessage(), e));
        } catch (CorruptChunkException e) {
            throw new CompletionException(new ImageCorruptException(where + ": " + e.getMessage(), e));
        } catch (EncryptionKeyException e) {
            // the manifest's key opened the manifest's check, so a record sealed with another key is not the image's
            throw new CompletionException(new ImageCorruptException(where + ": " + e.getMessage(), e));
        } catch (IOException e) {
            throw new CompletionException(new IOException(where + ": " + e.getMessage(), e));
        } finally {
            if (buf != null) {
                spanBuffers.offer(buf);
            }
        }
    }

    /** Hands {@code r} to the flusher once {@link #FLUSH_EVERY} bytes were written to it since its last flush. */
    private void startWriteback(Restored r, long written) {
        Writeback w = r.writeback();
        long now = w.unflushed.addAndGet(written);
        if (now >= FLUSH_EVERY && w.flushing.compareAndSet(false, true)) {
            w.unflushed.addAndGet(-now);
            flusher.execute(() -> {
                try {
                    if (r.pending().get() > 0) { // else its own fsync has come
                        r.ch().force(false);
                    }
                } catch (IOException e) {
                    w.failed.compareAndSet(null, e); // the batch fails on it once its writes are done
                } finally {
                    w.flushing.set(false);
                }
            });
        }
    }

    /** Waits for the flushes asked for so far (the flusher runs them in order), so no channel closes under one. */
    private void drainFlusher() throws InterruptedException {
        try {
            flusher.submit(() -> { }).get();
        } catch (ExecutionException e) {
            throw new AssertionError(e); // an empty task
        }
    }

    /** {@link #finishFile(ImageRef, Entry.RegularFile, FileChannel, Path)} on a worker. */
    private static void finishFile(Restored r) {
        try {
            finishFile(r.ref(), r.file(), r.ch(), r.out());
        } catch (IOException e) {
            throw new CompletionException(e);
        }
    }

    /** Size (a trailing run of zero blobs stays a hole), the whole-file digest where recorded, fsync, mode. */
    private static void finishFile(ImageRef ref, Entry.RegularFile f, FileChannel ch, Path out) throws IOException {
        if (ch.size() < f.size()) {
            ch.write(ByteBuffer.wrap(new byte[1]), f.size() - 1);
        }
        if (!f.sha256().equals(Entry.RegularFile.NOT_RECORDED)) {
            MessageDigest d = Digests.newSha256();
            ByteBuffer b = ByteBuffer.allocate(1 << 20);
            for (long pos = 0; ch.read(b.clear(), pos) > 0; pos += b.position()) {
                d.update(b.flip());
            }
            String actual = Digests.hex(d.digest());
            if (!actual.equals(f.sha256())) {
                throw new ImageCorruptException("image " + ref + " file '" + f.path() + "': SHA-256 mismatch: manifest "
                        + f.sha256() + ", restored bytes " + actual, null);
            }
        }
        ch.force(true);
        Files.setPosixFilePermissions(out, FileTrees.permissions(f.mode()));
    }
}

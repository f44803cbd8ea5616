package io.ferry.agent;

import io.ferry.model.ChunkId;
import io.ferry.model.DaemonThreads;
import io.ferry.model.Entry;
import io.ferry.model.Manifest;
import io.ferry.staging.Blobs;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * A restart's copy of a cached (or peer-fetched) image, verified against its manifest in the
 * same pass as it is copied; {@link RestartSource} decides which copy to try.
 */
final class VerifiedCopy {
    private static final int CORES = Runtime.getRuntime().availableProcessors();
    /** The restart copy's unit of I/O: small enough to stay in the CPU's cache between read, check and write. */
    private static final int PIECE = 256 << 10;

    private VerifiedCopy() {
    }

    /**
     * Copies a cached image into {@code target} and verifies it in the same pass: the layout
     * first (every entry of the manifest there with its type, size or link target, nothing
     * else), then every chunk of every file, read once, checked against the manifest's chunk id
     * (the SHA-256 of its raw bytes, or their HMAC-SHA256 under {@code blobs}' naming key when the image is
     * encrypted; an all-zero chunk must be zeros) and written, chunks spread
     * over the cores. Every byte of every file is covered by exactly one chunk, so this verifies
     * what the whole-file digests would, reading the image once instead of twice. Returns false
     * (leaving a partial {@code target} for the caller to delete) when anything differs. With a
     * null {@code target} it verifies {@code dir} in place (a copy fetched from a peer). With
     * {@code crc32c} (every chunk's, in manifest order: {@code RestartSource.localCheck}) each chunk is checked
     * against its CRC32C instead of its SHA-256.
     */
    static boolean copy(Path dir, Manifest m, Path target, int[] crc32c, Blobs blobs)
            throws IOException {
        if ((crc32c == null && !blobs.opens(m.keyId())) || !layoutMatches(dir, m)) {
            return false;
        }
        boolean copy = target != null;
        if (copy) {
            Files.createDirectories(target);
        }
        // each file's first chunk, in manifest order
        Map<String, Integer> firstChunk = new HashMap<>();
        int counted = 0;
        for (Entry e : m.entries()) {
            if (e instanceof Entry.RegularFile f) {
                firstChunk.put(f.path(), counted);
                counted += f.chunks().size();
            }
        }
        List<Entry> entries = new ArrayList<>(m.entries());
        entries.sort(Comparator.comparing(Entry::path)); // parents before children
        List<FileChannel> open = new ArrayList<>();
        List<Runnable> runsOfChunks = new ArrayList<>();
        AtomicBoolean ok = new AtomicBoolean(true);
        AtomicReference<IOException> failed =
                new AtomicReference<>();
        int chunkSize = m.chunkSize();
        // Direct buffers: the bytes go from the page cache into the buffer and back out once each (as cat's);
        // a heap array would be copied through a temporary direct buffer both ways.
        ThreadLocal<ByteBuffer> buffers =
                ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(PIECE));
        try {
            for (Entry e : entries) {
                Path src = dir.resolve(e.path());
                Path dst = copy ? target.resolve(e.path()) : null;
                if (!copy && !(e instanceof Entry.RegularFile)) {
                    continue; // the layout check covered it
                }
                if (e instanceof Entry.Directory) {
                    Files.createDirectories(dst);
                } else if (e instanceof Entry.Symlink l) {
                    Files.createDirectories(dst.getParent());
                    Files.createSymbolicLink(dst, Path.of(l.target()));
                } else if (e instanceof Entry.RegularFile f) {
                    FileChannel out = null;
                    if (copy) {
                        Files.createDirectories(dst.getParent());
                        out = FileChannel.open(dst, StandardOpenOption.CREATE_NEW,
                                StandardOpenOption.WRITE);
                        open.add(out);
                    }
                    FileChannel sink = out;
                    int first = firstChunk.get(f.path());
                    long[] offsets = f.offsets(chunkSize); // fixed chunks, or blobs cut by content (pack layout)
                    // Contiguous runs of chunks, each read in order through its own descriptor, so the kernel's
                    // readahead follows each run. With CRC32C (cheap) a file is one run, copied like cat copies
                    // it (writes of two threads into one file take turns on its lock); files go in parallel.
                    // With SHA-256 (~1 GB/s per core) a file is split over the cores, runs of 4 chunks at least.
                    int n = f.chunks().size();
                    int runs = crc32c != null ? 1 : Math.max(1, Math.min(CORES, n / 4));
                    for (int k = 0; k < runs; k++) {
                        int from = (int) ((long) n * k / runs);
                        int to = (int) ((long) n * (k + 1) / runs);
                        runsOfChunks.add(() -> {
                            if (!ok.get()) {
                                return;
                            }
                            try (FileChannel in = FileChannel.open(src)) {
                                ByteBuffer buf = buffers.get();
                                for (int i = from; i < to && ok.get(); i++) {
                                    long at = offsets[i];
                                    int len = (int) (offsets[i + 1] - at);
                                    ChunkCheck check = crc32c != null ? new ChunkCheck.Crc(crc32c[first + i])
                                            : ChunkCheck.of(f.chunks().get(i), blobs, m.keyId());
                                    // in pieces that stay in the CPU's cache: read, checked, written
                                    for (int done = 0; done < len; ) {
                                        int piece = Math.min(PIECE, len - done);
                                        buf.clear().limit(piece);
                                        while (buf.hasRemaining()) {
                                            if (in.read(buf, at + done + buf.position()) < 0) {
                                                ok.set(false); // shorter than it was a moment ago
                                                return;
                                            }
                                        }
                                        buf.flip();
                                        check.update(buf.duplicate());
                                        while (sink != null && buf.hasRemaining()) {
                                            sink.write(buf, at + done + buf.position());
                                        }
                                        done += piece;
                                    }
                                    if (!check.matches()) {
                                        ok.set(false); // the caller removes what was written
                                        return;
                                    }
                                }
                            } catch (IOException x) {
                                failed.compareAndSet(null, x);
                                ok.set(false);
                            }
                        });
                    }
                }
            }
            int threads = Math.max(1, Math.min(CORES, runsOfChunks.size()));
            if (threads <= 1) {
                runsOfChunks.forEach(Runnable::run);
            } else {
                ExecutorService pool = Executors.newFixedThreadPool(threads,
                        DaemonThreads.named("ferry-restart-copy"));
                try {
                    for (Future<?> f : pool.invokeAll(runsOfChunks.stream()
                            .map(Executors::callable).toList())) {
                        f.get();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("restart copy interrupted");
                } catch (ExecutionException e) {
                    throw new IOException("restart copy failed: " + e.getCause(), e.getCause());
                } finally {
                    pool.shutdownNow();
                }
            }
        } finally {
            for (FileChannel c : open) {
                c.close();
            }
        }
        if (failed.get() != null) {
            throw failed.get();
        }
        if (!ok.get()) {
            return false;
        }
        if (!copy) {
            return true;
        }
        for (Entry e : entries) { // what Files.copy(COPY_ATTRIBUTES) kept: permission bits and modification time
            if (e instanceof Entry.RegularFile) {
                Path src = dir.resolve(e.path());
                Path dst = target.resolve(e.path());
                Files.setPosixFilePermissions(dst, Files.getPosixFilePermissions(src, LinkOption.NOFOLLOW_LINKS));
                Files.setLastModifiedTime(dst, Files.getLastModifiedTime(src, LinkOption.NOFOLLOW_LINKS));
            }
        }
        return true;
    }

    /** The check of one chunk, fed its bytes in order. */
    private interface ChunkCheck {
        void update(ByteBuffer bytes);

        boolean matches();

        /**
         * The check of chunk {@code id} of a manifest that records {@code keyId} (the current key,
         * a previous one, or none).
         */
        static ChunkCheck of(ChunkId id, Blobs blobs, String keyId) {
            return id.isZero() ? new Zeros() : new Named(id, blobs.namer(keyId));
        }

        /** Against the CRC32C recorded when this node pushed the chunk. */
        final class Crc implements ChunkCheck {
            private final CRC32C crc = new CRC32C();
            private final int expected;

            Crc(int expected) {
                this.expected = expected;
            }

            public void update(ByteBuffer bytes) {
                crc.update(bytes);
            }

            public boolean matches() {
                return (int) crc.getValue() == expected;
            }
        }

        /** Against the chunk id: the SHA-256 of its raw bytes, or their keyed hash when the store is encrypted. */
        record Named(ChunkId id, Blobs.Namer namer) implements ChunkCheck {
            public void update(ByteBuffer bytes) {
                namer.update(bytes);
            }

            public boolean matches() {
                return id.equals(namer.name());
            }
        }

        /** An all-zero chunk: every byte zero. */
        final class Zeros implements ChunkCheck {
            private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(PIECE)
                    .asReadOnlyBuffer();
            private boolean zero = true;

            public void update(ByteBuffer bytes) {
                zero = zero && bytes.mismatch(ZEROS.duplicate().limit(bytes.remaining())) == -1;
            }

            public boolean matches() {
                return zero;
            }
        }
    }

    /**
     * The layout check of {@link #copy}, without reading the files' bytes: types, sizes, link targets, nothing extra.
     */
    private static boolean layoutMatches(Path dir, Manifest m) throws IOException {
        Set<String> expected = new HashSet<>();
        for (Entry e : m.entries()) {
            expected.add(e.path());
            Path p = dir.resolve(e.path());
            if (e instanceof Entry.RegularFile f) {
                if (!Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) || Files.size(p) != f.size()) {
                    return false;
                }
            } else if (e instanceof Entry.Symlink s) {
                if (!Files.isSymbolicLink(p) || !Files.readSymbolicLink(p).toString().equals(s.target())) {
                    return false;
                }
            } else if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                return false;
            }
        }
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(p -> !p.equals(dir)).map(p -> dir.relativize(p).toString()).allMatch(expected::contains);
        }
    }
}

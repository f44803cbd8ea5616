package io.ferry.staging.internal;

import io.ferry.compression.ChunkFormat;
import io.ferry.compression.Digests;
import io.ferry.model.ChunkId;
import io.ferry.model.Entry;
import io.ferry.model.ImageRef;
import io.ferry.model.Manifest;
import io.ferry.staging.Progress;
import io.ferry.staging.PushResult;
import io.ferry.staging.Repository;
import io.ferry.stores.Store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One push of one image directory. The calling thread reads files in order, chunk by chunk,
 * into pooled buffers (and keeps the whole-file SHA-256 only when asked: {@code fileSha256};
 * else the chunk ids prove each file, and no byte is hashed twice); workers test for zeros, hash, skip
 * chunks the store has, compress and write. The manifest is written only after every chunk
 * is durable, so a crash before it leaves no visible image. Single use, not thread-safe.
 */
public final class ImagePush {
    private final Repository repo;
    private final Store store;
    private final ChunkFormat format;
    private final BufferPool pool;
    private final ExecutorService workers;
    private final ThreadLocal<byte[]> objectBuffers;
    private final int chunkSize;
    private final byte[] zeros;
    private final boolean fileSha256;
    private final Set<ChunkId> seen = ConcurrentHashMap.newKeySet();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicLong zeroChunks = new AtomicLong();
    private final AtomicLong knownChunks = new AtomicLong();
    private final AtomicLong newChunks = new AtomicLong();
    private final AtomicLong storedBytes = new AtomicLong();

    public ImagePush(Repository repo, ChunkFormat format, BufferPool pool, ExecutorService workers,
                     ThreadLocal<byte[]> objectBuffers, int chunkSize, byte[] zeros, boolean fileSha256) {
        this.fileSha256 = fileSha256;
        this.repo = repo;
        this.store = repo.store();
        this.format = format;
        this.pool = pool;
        this.workers = workers;
        this.objectBuffers = objectBuffers;
        this.chunkSize = chunkSize;
        this.zeros = zeros;
    }

    /** A file being pushed; {@code crc32c} per chunk, filled in by the workers. */
    private record PendingFile(ImageScanner.Found found, String sha256, List<CompletableFuture<ChunkId>> chunks, int[] crc32c) {}

    public PushResult run(java.nio.file.Path dir, ImageRef ref, Progress progress) throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        List<ImageScanner.Found> found = ImageScanner.scan(dir);
        long total = found.stream().mapToLong(ImageScanner.Found::size).sum();
        progress.start("push " + ref, total, Progress.Unit.BYTES);
        List<Object> pending = new ArrayList<>();
        List<CompletableFuture<ChunkId>> all = new ArrayList<>();
        try {
            for (ImageScanner.Found f : found) {
                switch (f.kind()) {
                    case DIR -> pending.add(new Entry.Directory(f.path(), f.mode()));
                    case SYMLINK -> pending.add(new Entry.Symlink(f.path(), Files.readSymbolicLink(f.file()).toString()));
                    case FILE -> {
                        PendingFile pf = readFile(f, progress);
                        all.addAll(pf.chunks());
                        pending.add(pf);
                    }
                    default -> throw new AssertionError(f.kind());
                }
            }
            awaitAll(all);
        } catch (IOException | InterruptedException | RuntimeException e) {
            // Let queued chunks see the failure and return their buffers; no write outlives the call.
            failure.compareAndSet(null, e);
            all.forEach(c -> c.exceptionally(t -> null).join());
            throw e;
        } finally {
            progress.finish();
        }
        List<Entry> entries = new ArrayList<>(pending.size());
        long chunks = 0;
        int[] crc32c = new int[all.size()];
        for (Object o : pending) {
            if (o instanceof PendingFile pf) {
                List<ChunkId> ids = pf.chunks().stream().map(CompletableFuture::join).toList();
                System.arraycopy(pf.crc32c(), 0, crc32c, (int) chunks, ids.size());
                chunks += ids.size();
                entries.add(new Entry.RegularFile(pf.found().path(), pf.found().mode(), pf.found().size(), pf.sha256(), ids));
            } else {
                entries.add((Entry) o);
            }
        }
        String manifestSha = repo.putManifest(new Manifest(ref, chunkSize, entries));
        return new PushResult(ref, total, (int) pending.stream().filter(o -> o instanceof PendingFile).count(), chunks,
                zeroChunks.get(), knownChunks.get(), newChunks.get(), storedBytes.get(), manifestSha,
                Duration.ofNanos(System.nanoTime() - t0), crc32c);
    }

    private PendingFile readFile(ImageScanner.Found f, Progress progress) throws IOException, InterruptedException {
        MessageDigest whole = fileSha256 ? Digests.newSha256() : null;
        List<CompletableFuture<ChunkId>> chunks = new ArrayList<>();
        int[] crc32c = new int[(int) ((f.size() + chunkSize - 1) / chunkSize)];
        try (FileChannel ch = FileChannel.open(f.file(), StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            long remaining = f.size();
            while (remaining > 0) {
                rethrowFailure();
                int len = (int) Math.min(chunkSize, remaining);
                byte[] buf = pool.take();
                try {
                    readFully(ch, buf, len, f);
                } catch (IOException e) {
                    pool.give(buf);
                    throw e;
                }
                if (whole != null) {
                    whole.update(buf, 0, len);
                }
                int index = chunks.size();
                chunks.add(CompletableFuture.supplyAsync(() -> stage(buf, len, progress, crc32c, index), workers));
                remaining -= len;
            }
            if (ch.read(ByteBuffer.allocate(1)) > 0) {
                throw new IOException("file " + f.path() + " grew while being pushed: quiesce the rank first");
            }
        }
        return new PendingFile(f, whole == null ? Entry.RegularFile.NOT_RECORDED : Digests.hex(whole.digest()), chunks, crc32c);
    }

    static void readFully(FileChannel ch, byte[] buf, int len, ImageScanner.Found f) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(buf, 0, len);
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                throw new IOException("file " + f.path() + " shrank while being pushed: quiesce the rank first");
            }
        }
    }

    /** Hashes, compresses and writes one chunk; records its CRC32C (the node-local cache's check) in {@code crc32c[index]}. */
    private ChunkId stage(byte[] buf, int len, Progress progress, int[] crc32c, int index) {
        try {
            if (failure.get() != null) {
                throw new java.util.concurrent.CancellationException("push failed");
            }
            java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
            crc.update(buf, 0, len);
            crc32c[index] = (int) crc.getValue(); // published to the reader by the future's completion
            if (java.util.Arrays.mismatch(buf, 0, len, zeros, 0, len) == -1) {
                zeroChunks.incrementAndGet();
                return ChunkId.ZERO;
            }
            ChunkId id = ChunkId.of(Digests.sha256(buf, 0, len));
            String key = Repository.chunkKey(id);
            if (!seen.add(id) || store.exists(key)) {
                knownChunks.incrementAndGet();
                return id;
            }
            byte[] out = objectBuffers.get();
            if (out.length < format.maxObjectLength(len)) {
                out = new byte[format.maxObjectLength(chunkSize)];
                objectBuffers.set(out);
            }
            int n = format.encode(buf, len, out);
            store.put(key, ByteBuffer.wrap(out, 0, n));
            newChunks.incrementAndGet();
            storedBytes.addAndGet(n);
            return id;
        } catch (IOException e) {
            failure.compareAndSet(null, e);
            throw new java.util.concurrent.CompletionException(e);
        } catch (RuntimeException e) {
            failure.compareAndSet(null, e);
            throw e;
        } finally {
            pool.give(buf);
            progress.advance(len);
        }
    }

    private void rethrowFailure() throws IOException {
        Throwable t = failure.get();
        if (t != null) {
            throw Failures.asIOException(t);
        }
    }

    private void awaitAll(List<CompletableFuture<ChunkId>> all) throws IOException, InterruptedException {
        try {
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get();
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable first = failure.get();
            throw Failures.asIOException(first != null ? first : e.getCause());
        }
    }
}

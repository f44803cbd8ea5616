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
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;

/**
 * One push of one image directory in the chunk layout. The calling thread reads files in order,
 * chunk by chunk, into pooled buffers ({@link FileFeed}; it keeps the whole-file SHA-256 only
 * when asked: {@code fileSha256}; else the chunk ids prove each file, and no byte is hashed
 * twice); workers test for zeros, hash, skip chunks the store has, compress and write. The manifest is written only
 * after every chunk is durable, so a crash before it leaves no visible image. Single use, not thread-safe.
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

    /** One chunk as a worker left it: its id and its CRC32C (the node-local cache's check). */
    private record Staged(ChunkId id, int crc32c) {}

    @SuppressWarnings("unchecked")
    public PushResult run(Path dir, ImageRef ref, Progress progress) throws IOException,
            InterruptedException {
        long t0 = System.nanoTime();
        List<ImageScanner.Found> found = ImageScanner.scan(dir);
        long total = found.stream().mapToLong(ImageScanner.Found::size).sum();
        progress.start("push " + ref, total, Progress.Unit.BYTES);
        List<Object> read;
        try {
            read = new FileFeed<Staged>(pool, chunkSize, workers, fileSha256, failure,
                    (index, buf, len) -> stage(buf, len, progress)).readAll(found);
        } finally {
            progress.finish();
        }
        List<Entry> entries = new ArrayList<>(read.size());
        List<Integer> crc32c = new ArrayList<>();
        int files = 0;
        for (Object o : read) {
            if (o instanceof FileFeed.Read<?> r) {
                files++;
                List<ChunkId> ids = new ArrayList<>(r.pieces().size());
                for (CompletableFuture<?> c : r.pieces()) {
                    Staged st = ((CompletableFuture<Staged>) c).join();
                    ids.add(st.id());
                    crc32c.add(st.crc32c());
                }
                entries.add(new Entry.RegularFile(r.found().path(), r.found().mode(), r.found().size(),
                        r.sha256(), ids));
            } else {
                entries.add((Entry) o);
            }
        }
        String manifestSha = repo.putManifest(new Manifest(ref, chunkSize, entries));
        return new PushResult(ref, total, files, crc32c.size(), zeroChunks.get(), knownChunks.get(), newChunks.get(),
                storedBytes.get(), manifestSha, Duration.ofNanos(System.nanoTime() - t0),
                crc32c.stream().mapToInt(Integer::intValue).toArray());
    }

    /** Hashes, compresses and writes one chunk; gives the buffer back. */
    private Staged stage(byte[] buf, int len, Progress progress) {
        try {
            if (failure.get() != null) {
                throw new CancellationException("push failed");
            }
            CRC32C crc = new CRC32C();
            crc.update(buf, 0, len);
            int crc32c = (int) crc.getValue();
            if (Arrays.mismatch(buf, 0, len, zeros, 0, len) == -1) {
                zeroChunks.incrementAndGet();
                return new Staged(ChunkId.ZERO, crc32c);
            }
            ChunkId id = ChunkId.of(Digests.sha256(buf, 0, len));
            String key = Repository.chunkKey(id);
            if (!seen.add(id) || store.exists(key)) {
                knownChunks.incrementAndGet();
                return new Staged(id, crc32c);
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
            return new Staged(id, crc32c);
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
}

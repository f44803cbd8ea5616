package io.ferry.staging.internal;

import io.ferry.compression.Digests;
import io.ferry.model.Entry;
import io.ferry.stores.FileIo;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The reading half of a push, the same for both layouts: the calling thread walks the scanned
 * image, records its directories and symlinks, and reads each regular file in pieces (a chunk,
 * or a segment that a worker cuts into blobs) into pooled buffers, handing each piece to a
 * worker. It keeps a whole-file SHA-256 only when asked. On any failure it waits until every
 * queued piece has seen it (every buffer back, no write outlives the call) and rethrows the
 * first. Single use, not thread-safe.
 *
 * @param <T> what staging one piece gives
 */
final class FileFeed<T> {
    /** Stages piece {@code index} of a file, on a worker; gives {@code buf} back to the pool, whatever happens. */
    interface Stage<T> {
        T stage(int index, byte[] buf, int len);
    }

    /**
     * A regular file as read: its whole-file digest ({@link Entry.RegularFile#NOT_RECORDED} unless
     * asked) and its pieces.
     */
    record Read<T>(ImageScanner.Found found, String sha256, List<CompletableFuture<T>> pieces) {}

    private final BufferPool pool;
    private final int pieceSize;
    private final ExecutorService workers;
    private final boolean fileSha256;
    private final AtomicReference<Throwable> failure;
    private final Stage<T> stage;

    /** @param failure the push's first failure, which workers also set; reading stops once it is set */
    FileFeed(BufferPool pool, int pieceSize, ExecutorService workers, boolean fileSha256,
             AtomicReference<Throwable> failure, Stage<T> stage) {
        this.pool = pool;
        this.pieceSize = pieceSize;
        this.workers = workers;
        this.fileSha256 = fileSha256;
        this.failure = failure;
        this.stage = stage;
    }

    /** Entries for directories and symlinks, and a {@link Read} per regular file, in scan order, every piece staged. */
    List<Object> readAll(List<ImageScanner.Found> found) throws IOException, InterruptedException {
        List<Object> out = new ArrayList<>(found.size());
        List<CompletableFuture<T>> all = new ArrayList<>();
        try {
            for (ImageScanner.Found f : found) {
                switch (f.kind()) {
                    case DIR -> out.add(new Entry.Directory(f.path(), f.mode()));
                    case SYMLINK -> out.add(new Entry.Symlink(f.path(), Files.readSymbolicLink(f.file()).toString()));
                    case FILE -> {
                        Read<T> r = read(f);
                        all.addAll(r.pieces());
                        out.add(r);
                    }
                    default -> throw new AssertionError(f.kind());
                }
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get();
            pool.release(); // every piece is staged: the buffers are not needed again
        } catch (ExecutionException e) {
            all.forEach(c -> c.exceptionally(t -> null).join());
            Throwable first = failure.get();
            throw Failures.asIOException(first != null ? first : e.getCause());
        } catch (IOException | InterruptedException | RuntimeException e) {
            failure.compareAndSet(null, e);
            all.forEach(c -> c.exceptionally(t -> null).join());
            throw e;
        }
        return out;
    }

    private Read<T> read(ImageScanner.Found f) throws IOException, InterruptedException {
        MessageDigest whole = fileSha256 ? Digests.newSha256() : null;
        List<CompletableFuture<T>> pieces = new ArrayList<>();
        try (FileChannel ch = FileChannel.open(f.file(), StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            long remaining = f.size();
            while (remaining > 0) {
                Throwable t = failure.get();
                if (t != null) {
                    throw Failures.asIOException(t);
                }
                int len = (int) Math.min(pieceSize, remaining);
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
                int index = pieces.size();
                pieces.add(CompletableFuture.supplyAsync(() -> stage.stage(index, buf, len), workers));
                remaining -= len;
            }
            if (ch.read(ByteBuffer.allocate(1)) > 0) {
                throw new IOException("file " + f.path() + " grew while being pushed: quiesce the rank first");
            }
        }
        return new Read<>(f, whole == null ? Entry.RegularFile.NOT_RECORDED : Digests.hex(whole.digest()), pieces);
    }

    /**
     * Through this thread's small direct buffer ({@link FileIo}), not the JDK's temporary one of the segment's size.
     */
    private static void readFully(FileChannel ch, byte[] buf, int len, ImageScanner.Found f) throws IOException {
        if (FileIo.read(ch, buf, 0, len) < len) {
            throw new IOException("file " + f.path() + " shrank while being pushed: quiesce the rank first");
        }
    }
}

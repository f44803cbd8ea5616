package io.ferry.stores.posix;

import com.sun.nio.file.ExtendedOpenOption;
import io.ferry.stores.FileIo;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Writes one object's bytes into a new file, durably ({@code fdatasync}), for {@link PosixStore}.
 *
 * <p>An object of at least {@link #DIRECT_MIN} bytes (a pack, a v1 chunk) is written with
 * {@code O_DIRECT} where the file system takes it: checkpoint data does not pass through the
 * page cache, so it does not push the application's own cached files out of memory, and the
 * kernel does not copy every byte into cache pages only for the flush that follows to write
 * them out (on this project's test VM that copy took a tenth of a push's CPU). Direct memory
 * on a block boundary (packs, {@link io.ferry.stores.Store#putsDirectMemory}) is written from
 * where it lies; other bytes go through a pooled, aligned buffer of {@link #SLICE} bytes. The
 * last block is padded with zeros and the file truncated back to the object's length before the flush. A file
 * system that refuses {@code O_DIRECT} (ramfs; tmpfs before Linux 6.6; some FUSE file systems) is
 * remembered and written through the page cache from then on; so is everything with
 * {@code posix.direct-io=off}. Buffered writes of a heap buffer go through {@link FileIo}'s small
 * per-thread buffer, not a temporary direct buffer of the pack's size. Thread-safe.
 */
final class ObjectWriter {
    /** Objects from this size up are written with O_DIRECT where possible. */
    static final int DIRECT_MIN = 1 << 20;
    /** Bytes per O_DIRECT write call, and the size of each pooled aligned buffer. */
    static final int SLICE = 1 << 20;

    private final AtomicBoolean direct;
    private final AtomicLong directWrites = new AtomicLong();
    private final ConcurrentLinkedQueue<ByteBuffer> aligned = new ConcurrentLinkedQueue<>();
    /**
     * What pads an object's last block: copied in, not put byte by byte (up to 4095 calls per pack,
     * a loop the JIT compiled only in the second pushes a daemon served).
     */
    private static final byte[] ZEROS = new byte[4096];
    /**
     * The block size O_DIRECT needs (the file system's fragment size, as the JDK checks it), found
     * at the first large write; 0 until then.
     */
    private volatile int alignment;

    /** @param direct whether to try O_DIRECT at all ({@code posix.direct-io}) */
    ObjectWriter(boolean direct) {
        this.direct = new AtomicBoolean(direct);
    }

    /** The file system's block size if O_DIRECT can use it (a power of two up to {@link #SLICE}), else 0. */
    private static int alignmentOf(Path dir) {
        try {
            long b = Files.getFileStore(dir).getBlockSize();
            return b > 0 && b <= SLICE && Long.bitCount(b) == 1 ? (int) b : 0;
        } catch (IOException | UnsupportedOperationException unknown) {
            return 0;
        }
    }

    /** Whether objects are still written with O_DIRECT (false once the file system refused it). */
    boolean direct() {
        return direct.get();
    }

    /** How many objects were written with O_DIRECT. */
    long directWrites() {
        return directWrites.get();
    }

    /** Writes {@code data} into {@code tmp}, which must not exist, and makes it durable. */
    void write(Path tmp, ByteBuffer data) throws IOException {
        if (data.remaining() >= DIRECT_MIN && direct.get() && writtenDirect(tmp, data)) {
            return;
        }
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            PosixStore.ownerOnly(tmp);
            ByteBuffer b = data.duplicate();
            if (b.hasArray()) {
                FileIo.write(ch, b.array(), b.arrayOffset() + b.position(), b.remaining());
            } else {
                while (b.hasRemaining()) {
                    ch.write(b); // direct already: no copy
                }
            }
            // fdatasync: data and the size needed to read it back; the store makes the name durable.
            ch.force(false);
        }
    }

    /**
     * Writes with O_DIRECT; false, with {@code tmp} deleted and O_DIRECT off for good, if the file
     * system refuses it (EINVAL, at the open or at the first aligned write).
     */
    private boolean writtenDirect(Path tmp, ByteBuffer data) throws IOException {
        if (alignment == 0) {
            alignment = alignmentOf(tmp.getParent());
            if (alignment == 0) {
                direct.set(false);
                return false;
            }
        }
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                ExtendedOpenOption.DIRECT)) {
            PosixStore.ownerOnly(tmp);
            writeDirect(ch, data.duplicate());
            ch.force(false);
            directWrites.incrementAndGet();
            return true;
        } catch (FileAlreadyExistsException taken) {
            throw taken;
        } catch (UnsupportedOperationException | IOException e) {
            // Linux creates the file before it checks O_DIRECT: a file system that refuses it leaves the file behind.
            Files.deleteIfExists(tmp);
            if (e instanceof IOException io && !String.valueOf(io.getMessage()).contains("Invalid argument")) {
                throw io; // not a refusal of O_DIRECT: a full disk, a permission, a dead mount
            }
            direct.set(false);
            return false;
        }
    }

    private void writeDirect(FileChannel ch, ByteBuffer src) throws IOException {
        int align = alignment;
        long length = src.remaining();
        if (src.isDirect() && src.alignmentOffset(src.position(), align) == 0) {
            // Direct memory on a block boundary (a pack filled there: Store#putsDirectMemory): its whole blocks
            // go to the disk as they are; only the last, partial one through the aligned buffer below.
            ByteBuffer blocks = src.duplicate();
            blocks.limit(blocks.position() + (int) (length / align * align));
            while (blocks.hasRemaining()) {
                ch.write(blocks);
            }
            src.position(blocks.limit());
        }
        ByteBuffer buf = take(align);
        try {
            while (src.hasRemaining()) {
                buf.clear();
                int n = Math.min(src.remaining(), buf.capacity());
                ByteBuffer piece = src.duplicate();
                piece.limit(piece.position() + n);
                buf.put(piece);
                src.position(src.position() + n);
                int padded = (n + align - 1) / align * align;
                for (int pad = padded - buf.position(); pad > 0; ) { // zeros to the block's end, a block at a time
                    int k = Math.min(pad, ZEROS.length);
                    buf.put(ZEROS, 0, k);
                    pad -= k;
                }
                buf.flip();
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
            }
            if (ch.size() != length) {
                ch.truncate(length); // the zeros that padded the last block
            }
        } finally {
            aligned.offer(buf);
        }
    }

    private ByteBuffer take(int align) {
        ByteBuffer b = aligned.poll();
        return b != null ? b : ByteBuffer.allocateDirect(SLICE + align).alignedSlice(align).limit(SLICE).slice();
    }
}

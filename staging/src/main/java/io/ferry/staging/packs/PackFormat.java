package io.ferry.staging.packs;

import io.ferry.compression.ChunkHeader;
import io.ferry.model.ChunkId;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The bytes of a pack object, as {@code docs/formats/pack.md} gives them: an 8-byte header,
 * blob records back to back (each a v1 chunk object, header included, so one record decodes
 * alone with {@link io.ferry.compression.ChunkFormat#decode}), then a trailer of one 40-byte
 * entry per record (the blob's SHA-256, the record's offset and length), the entry count,
 * the trailer's offset, its CRC32C and a closing magic. A reader that holds only the pack
 * finds every blob in it from the trailer. Stateless and thread-safe.
 */
public final class PackFormat {
    /** {@code FRYP}: "Ferry pack". */
    public static final int MAGIC = 0x46525950;
    /** {@code FRYT}: the trailer's closing magic. */
    public static final int TRAILER_MAGIC = 0x46525954;
    public static final int VERSION = 2;
    public static final int HEADER = 8;
    public static final int ENTRY = 40;
    public static final int FOOTER = 24;
    /**
     * Largest pack a reader accepts (a pack is closed at {@code staging.pack-size}, at most 64 MiB, plus one record).
     */
    public static final int MAX_PACK = 80 << 20;

    private PackFormat() {}

    /** One record of a pack, as its trailer lists it. */
    public record Record(ChunkId id, int offset, int length) {}

    /** Writes the header at {@code dst[0..8)}. */
    static void writeHeader(ByteBuffer dst) {
        dst.putInt(0, MAGIC).put(4, (byte) VERSION).put(5, (byte) 0).putShort(6, (short) 0);
    }

    /**
     * Writes the trailer for {@code records} at {@code dst[at..]} (absolute: the buffer's position
     * is not used); returns the pack's whole length.
     */
    static int writeTrailer(ByteBuffer dst, int at, List<Record> records) {
        byte[] trailer = new byte[trailerLength(records.size())];
        ByteBuffer b = ByteBuffer.wrap(trailer);
        for (Record r : records) {
            b.put(r.id().bytes()).putInt(r.offset()).putInt(r.length());
        }
        CRC32C crc = new CRC32C();
        crc.update(trailer, 0, records.size() * ENTRY);
        b.putInt(records.size()).putLong(at).putInt((int) crc.getValue()).putInt(TRAILER_MAGIC).putInt(0);
        dst.put(at, trailer);
        return at + trailer.length;
    }

    /** Bytes a trailer of {@code records} entries takes. */
    static int trailerLength(int records) {
        return records * ENTRY + FOOTER;
    }

    /**
     * The records of a whole pack, checked: header, footer, trailer CRC32C, and every record
     * inside the record area, in order and without overlap. Throws {@link IllegalArgumentException}
     * naming what is wrong. The records' contents are not decoded here.
     */
    public static List<Record> records(byte[] pack, int len) {
        if (len < HEADER + FOOTER) {
            throw new IllegalArgumentException("a pack of " + len + " bytes is shorter than its header and footer");
        }
        checkHeader(pack);
        long trailer = trailerOffset(pack, len - FOOTER, len);
        return records(pack, (int) trailer, len, trailer);
    }

    /** Checks a pack's first {@link #HEADER} bytes. */
    public static void checkHeader(byte[] header) {
        ByteBuffer h = ByteBuffer.wrap(header, 0, HEADER);
        if (h.getInt() != MAGIC) {
            throw new IllegalArgumentException("bad magic: not a Ferry pack");
        }
        int version = h.get() & 0xff;
        if (version != VERSION || h.get() != 0 || h.getShort() != 0) {
            throw new IllegalArgumentException("unsupported pack version " + version + " or reserved bytes set");
        }
    }

    /**
     * Where the trailer of a pack of {@code packLength} bytes begins, from its footer at
     * {@code footer[at, at + FOOTER)}: read a pack's last {@link #FOOTER} bytes, then the trailer
     * it points at, and {@link #records(byte[], int, long, long)} gives the records without
     * reading the record area.
     */
    public static long trailerOffset(byte[] footer, int at, long packLength) {
        ByteBuffer f = ByteBuffer.wrap(footer, at, FOOTER);
        long count = f.getInt() & 0xffffffffL;
        long trailer = f.getLong();
        f.getInt(); // the CRC32C, checked with the entries
        if (f.getInt() != TRAILER_MAGIC || f.getInt() != 0) {
            throw new IllegalArgumentException("bad trailer magic: the pack is truncated or is not one");
        }
        if (trailer < HEADER || trailer + count * ENTRY != packLength - FOOTER) {
            throw new IllegalArgumentException("trailer at " + trailer + " with " + count
                    + " entries does not end where the footer begins");
        }
        return trailer;
    }

    /**
     * The records of a pack of {@code packLength} bytes from its trailer and footer, which lie at
     * {@code tail[at, ...)} and begin at {@code trailer} in the pack; checked as {@link #records(byte[], int)}
     * checks them (the header is checked apart, by {@link #checkHeader}).
     */
    public static List<Record> records(byte[] tail, int at, long packLength, long trailer) {
        long count = (packLength - FOOTER - trailer) / ENTRY;
        if (trailerOffset(tail, (int) (at + count * ENTRY), packLength) != trailer) {
            throw new IllegalArgumentException("the footer names another trailer");
        }
        int crc = ByteBuffer.wrap(tail, (int) (at + count * ENTRY + 12), 4).getInt();
        CRC32C c = new CRC32C();
        c.update(tail, at, (int) (count * ENTRY));
        if ((int) c.getValue() != crc) {
            throw new IllegalArgumentException(String.format("trailer CRC32C mismatch: footer 0x%08x, computed 0x%08x",
                    crc, (int) c.getValue()));
        }
        List<Record> out = new ArrayList<>((int) count);
        ByteBuffer t = ByteBuffer.wrap(tail, at, (int) (count * ENTRY));
        long end = HEADER;
        byte[] sha = new byte[ChunkId.LENGTH];
        for (int i = 0; i < count; i++) {
            t.get(sha);
            long off = t.getInt() & 0xffffffffL;
            long length = t.getInt() & 0xffffffffL;
            if (off < end || length < ChunkHeader.LENGTH || off + length > trailer) {
                throw new IllegalArgumentException("trailer entry " + i + " (offset " + off + ", " + length
                        + " bytes) overlaps another record or leaves the record area");
            }
            end = off + length;
            out.add(new Record(ChunkId.of(sha), (int) off, (int) length));
        }
        return out;
    }
}

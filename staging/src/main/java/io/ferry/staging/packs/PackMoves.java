package io.ferry.staging.packs;

import io.ferry.model.ChunkId;
import io.ferry.model.Names;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/**
 * Where gc moved the live records of a repacked pack ({@code docs/formats/pack.md},
 * "Garbage collection"): for each record offset of the old pack that was live, the new pack and
 * offset. Stored as {@code ferry/v2/moved/<2 hex>/<old pack>}, written durably before the old
 * pack is moved aside; manifests keep naming the old pack, and readers follow the move. Immutable.
 *
 * <pre>
 * 0      4   magic FRYM
 * 4      1   version 1
 * 5      3   reserved 0
 * 8      32  old pack name
 * 40     4   new pack count p
 * 44     32p new pack names
 * ..     4   move count n
 * ..     16n moves, by old offset: old offset, new pack number, new offset, record length (4 each)
 * end-4  4   CRC32C of everything before it
 * </pre>
 */
public final class PackMoves {
    public static final String MOVED = "ferry/v2/moved/";
    private static final int MAGIC = 0x4652594D; // FRYM
    private static final HexFormat HEX = HexFormat.of();
    /**
     * A cap on what a decoder accepts: a 64 MiB pack of 16 KiB-record blobs has about 4,000 records; small ones more.
     */
    public static final int MAX_MOVES = 1 << 22;

    private final String pack;
    private final TreeMap<Long, Moved> moves;

    /** Where one record went. */
    public record Moved(String pack, long offset, int recordLength) {}

    public PackMoves(String pack, Map<Long, Moved> moves) {
        if (!Names.isSha256Hex(pack)) {
            throw new IllegalArgumentException("a pack name is 64 lower-case hex digits, got " + pack);
        }
        this.pack = pack;
        this.moves = new TreeMap<>(moves);
    }

    public String pack() {
        return pack;
    }

    /** Where the record at {@code offset} of the old pack went, if it was moved. */
    public Optional<Moved> resolve(long offset) {
        return Optional.ofNullable(moves.get(offset));
    }

    public static String key(String pack) {
        return MOVED + pack.substring(0, 2) + "/" + pack;
    }

    /** The old pack a moves key names, or empty for another key. */
    public static Optional<String> packOf(String key) {
        String name = key.substring(key.lastIndexOf('/') + 1);
        return key.startsWith(MOVED) && Names.isSha256Hex(name) && key.equals(key(name)) ? Optional.of(name)
                : Optional.empty();
    }

    public byte[] encode() {
        List<String> targets = new ArrayList<>();
        for (Moved m : moves.values()) {
            if (!targets.contains(m.pack())) {
                targets.add(m.pack());
            }
        }
        ByteBuffer b = ByteBuffer.allocate(44 + 32 * targets.size() + 4 + 16 * moves.size() + 4);
        b.putInt(MAGIC).put((byte) 1).put((byte) 0).putShort((short) 0).put(HEX.parseHex(pack)).putInt(targets.size());
        targets.forEach(t -> b.put(HEX.parseHex(t)));
        b.putInt(moves.size());
        moves.forEach((off, m) -> b.putInt((int) (long) off).putInt(targets.indexOf(m.pack())).putInt((int) m.offset())
                .putInt(m.recordLength()));
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, b.position());
        b.putInt((int) crc.getValue());
        return b.array();
    }

    /** Decodes and checks; {@link IllegalArgumentException} naming {@code source} and what is wrong. */
    public static PackMoves decode(byte[] bytes, String source) {
        try {
            if (bytes.length < 52) {
                throw new IllegalArgumentException("too short");
            }
            CRC32C crc = new CRC32C();
            crc.update(bytes, 0, bytes.length - 4);
            ByteBuffer b = ByteBuffer.wrap(bytes);
            if (b.getInt(bytes.length - 4) != (int) crc.getValue()) {
                throw new IllegalArgumentException("CRC32C mismatch");
            }
            if (b.getInt() != MAGIC || b.get() != 1 || b.get() != 0 || b.getShort() != 0) {
                throw new IllegalArgumentException("bad magic, version or reserved bytes");
            }
            byte[] name = new byte[ChunkId.LENGTH];
            b.get(name);
            String pack = HEX.formatHex(name);
            int p = b.getInt();
            if (p < 0 || (long) p * 32 > b.remaining()) {
                throw new IllegalArgumentException("bad pack count " + p);
            }
            List<String> targets = new ArrayList<>(p);
            for (int i = 0; i < p; i++) {
                b.get(name);
                targets.add(HEX.formatHex(name));
            }
            int n = b.getInt();
            if (n < 0 || n > MAX_MOVES || (long) n * 16 != b.remaining() - 4) {
                throw new IllegalArgumentException("bad move count " + n);
            }
            Map<Long, Moved> moves = new TreeMap<>();
            for (int i = 0; i < n; i++) {
                long old = b.getInt() & 0xffffffffL;
                int t = b.getInt();
                long off = b.getInt() & 0xffffffffL;
                int len = b.getInt();
                if (t < 0 || t >= p || len < 1) {
                    throw new IllegalArgumentException("move " + i + " names pack " + t + " of " + p
                            + " or length " + len);
                }
                moves.put(old, new Moved(targets.get(t), off, len));
            }
            return new PackMoves(pack, moves);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("pack moves " + source + " are truncated", e);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("pack moves " + source + " are malformed: " + e.getMessage(), e);
        }
    }
}

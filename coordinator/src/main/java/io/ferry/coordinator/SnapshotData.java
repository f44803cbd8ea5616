package io.ferry.coordinator;

import io.ferry.model.Event;
import io.ferry.model.EventCodec;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.BitSet;
import java.util.Collection;
import java.util.Map;

/**
 * The values a {@link FoldSnapshot} is made of, written and read: strings, events (in their log
 * encoding), bit sets, arrays and maps, each with a count or -1 for null. A count read is checked
 * against the bytes left, so damaged or forged bytes never make the reader allocate more than the
 * snapshot's own size.
 */
final class SnapshotData {
    private SnapshotData() {}

    interface Writer<K, V> {
        void write(K key, V value) throws IOException;
    }

    interface Reader {
        void read() throws IOException;
    }

    static <K, V> void writeMap(DataOutputStream out, Map<K, V> map, Writer<K, V> key, Writer<K, V> value)
            throws IOException {
        out.writeInt(map.size());
        for (Map.Entry<K, V> e : map.entrySet()) {
            key.write(e.getKey(), e.getValue());
            value.write(e.getKey(), e.getValue());
        }
    }

    /** Reads a count, then calls {@code entry} that many times; each entry takes at least {@code minBytes}. */
    static void readMap(DataInputStream in, int minBytes, Reader entry) throws IOException {
        for (int i = count(in, minBytes); i > 0; i--) {
            entry.read();
        }
    }

    static void writeStrings(DataOutputStream out, Collection<String> strings) throws IOException {
        out.writeInt(strings.size());
        for (String s : strings) {
            writeString(out, s);
        }
    }

    static void writeString(DataOutputStream out, String s) throws IOException {
        if (s == null) {
            out.writeInt(-1);
            return;
        }
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    static String readString(DataInputStream in) throws IOException {
        int n = in.readInt();
        return n < 0 ? null : new String(bytes(in, n), StandardCharsets.UTF_8);
    }

    static void writeEvent(DataOutputStream out, Event e) throws IOException {
        if (e == null) {
            out.writeInt(-1);
            return;
        }
        byte[] b = EventCodec.encode(e);
        out.writeInt(b.length);
        out.write(b);
    }

    static <E extends Event> E readEvent(DataInputStream in, Class<E> type) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            return null;
        }
        Event e = EventCodec.decode(bytes(in, n));
        if (!type.isInstance(e)) {
            throw new IllegalArgumentException("a " + e.getClass().getSimpleName() + " where a " + type.getSimpleName()
                    + " belongs");
        }
        return type.cast(e);
    }

    static void writeBits(DataOutputStream out, BitSet bits) throws IOException {
        if (bits == null) {
            out.writeInt(-1);
            return;
        }
        long[] words = bits.toLongArray();
        out.writeInt(words.length);
        for (long w : words) {
            out.writeLong(w);
        }
    }

    static BitSet readBits(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            return null;
        }
        long[] words = new long[count(in, n, 8)];
        for (int i = 0; i < words.length; i++) {
            words[i] = in.readLong();
        }
        return BitSet.valueOf(words);
    }

    static BitSet orEmpty(BitSet b) {
        return b == null ? new BitSet() : b;
    }

    static void writeInts(DataOutputStream out, int[] a) throws IOException {
        out.writeInt(a == null ? -1 : a.length);
        if (a != null) {
            for (int v : a) {
                out.writeInt(v);
            }
        }
    }

    static int[] readInts(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            return null;
        }
        int[] a = new int[count(in, n, 4)];
        for (int i = 0; i < a.length; i++) {
            a[i] = in.readInt();
        }
        return a;
    }

    static void writeLongs(DataOutputStream out, long[] a) throws IOException {
        out.writeInt(a == null ? -1 : a.length);
        if (a != null) {
            for (long v : a) {
                out.writeLong(v);
            }
        }
    }

    static long[] readLongs(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            return null;
        }
        long[] a = new long[count(in, n, 8)];
        for (int i = 0; i < a.length; i++) {
            a[i] = in.readLong();
        }
        return a;
    }

    static void writeDoubles(DataOutputStream out, double[] a) throws IOException {
        out.writeInt(a == null ? -1 : a.length);
        if (a != null) {
            for (double v : a) {
                out.writeDouble(v);
            }
        }
    }

    static double[] readDoubles(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            return null;
        }
        double[] a = new double[count(in, n, 8)];
        for (int i = 0; i < a.length; i++) {
            a[i] = in.readDouble();
        }
        return a;
    }

    /** Reads a count of items of at least {@code minBytes} each, refused if the bytes left cannot hold them. */
    static int count(DataInputStream in, int minBytes) throws IOException {
        return count(in, in.readInt(), minBytes);
    }

    static int count(DataInputStream in, int n, int minBytes) throws IOException {
        if (n < 0 || (long) n * minBytes > in.available()) {
            throw new IllegalArgumentException("coordinator snapshot counts " + n + " items where "
                    + in.available() + " bytes are left");
        }
        return n;
    }

    static byte[] bytes(DataInputStream in, int n) throws IOException {
        byte[] b = new byte[count(in, n, 1)];
        in.readFully(b);
        return b;
    }
}

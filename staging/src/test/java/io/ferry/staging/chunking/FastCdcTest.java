package io.ferry.staging.chunking;

import io.ferry.compression.Digests;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FastCdcTest {
    private static List<byte[]> chunks(FastCdc cdc, byte[] b) {
        List<byte[]> out = new ArrayList<>();
        for (int at = 0; at < b.length; ) {
            int n = cdc.next(b, at, b.length);
            out.add(Arrays.copyOfRange(b, at, at + n));
            at += n;
        }
        return out;
    }

    private static Set<String> ids(List<byte[]> chunks) {
        Set<String> s = new HashSet<>();
        for (byte[] c : chunks) {
            s.add(HexFormat.of().formatHex(Digests.sha256(c, 0, c.length)));
        }
        return s;
    }

    @Test
    void chunksAreBoundedAverageNearTheAskedSizeAndTheSameBytesCutTheSameWay() {
        byte[] b = new byte[16 << 20];
        new Random(1).nextBytes(b);
        FastCdc cdc = new FastCdc(64 << 10);
        List<byte[]> first = chunks(cdc, b);
        for (int i = 0; i < first.size() - 1; i++) {
            int n = first.get(i).length;
            assertTrue(n >= cdc.min() && n <= cdc.max(), "chunk " + i + " of " + n + " bytes");
        }
        double mean = (double) b.length / first.size();
        assertTrue(mean > 0.7 * cdc.avg() && mean < 1.5 * cdc.avg(), "mean " + mean);
        assertEquals(ids(first), ids(chunks(new FastCdc(64 << 10), b.clone())));
        assertEquals(b.length, first.stream().mapToInt(c -> c.length).sum());
    }

    @Test
    void bytesInsertedNearTheStartChangeOnlyTheChunksAroundThem() {
        byte[] b = new byte[16 << 20];
        new Random(2).nextBytes(b);
        byte[] shifted = new byte[b.length + 100];
        System.arraycopy(b, 0, shifted, 0, 4096);
        System.arraycopy(b, 4096, shifted, 4196, b.length - 4096); // 100 new bytes at 4096
        FastCdc cdc = new FastCdc(64 << 10);
        Set<String> before = ids(chunks(cdc, b));
        Set<String> after = ids(chunks(cdc, shifted));
        after.removeAll(before);
        assertTrue(after.size() <= 2, after.size() + " new chunks of " + before.size());
    }

    @Test
    void runsOfZerosAndShortInputsAreCutWithinTheBounds() {
        FastCdc cdc = new FastCdc(4096);
        byte[] zeros = new byte[1 << 20];
        for (byte[] c : chunks(cdc, zeros)) {
            assertTrue(c.length <= cdc.max());
        }
        assertEquals(100, cdc.next(new byte[100], 0, 100), "shorter than the minimum: one chunk");
        assertEquals(0, cdc.next(new byte[10], 10, 10));
        assertThrows(IllegalArgumentException.class, () -> new FastCdc(1000));
        assertThrows(IllegalArgumentException.class, () -> new FastCdc(128));
        assertThrows(IllegalArgumentException.class, () -> new FastCdc(4096, 4097), "a minimum past the average");
        assertThrows(IllegalArgumentException.class, () -> new FastCdc(4096, 32));
    }

    @Test
    void theEngineCutsNothingBeforeTheAverageAndHashesLessThanAQuarterOrThreeQuartersWouldForTheSameAverage() {
        FastCdc engine = new FastCdc(64 << 10);
        assertEquals((64 << 10) - 64, engine.min());
        FastCdc quarter = new FastCdc(64 << 10, 16 << 10);
        FastCdc threeQuarters = new FastCdc(64 << 10, 48 << 10);
        byte[] b = new byte[32 << 20];
        new Random(3).nextBytes(b);
        List<byte[]> mine = chunks(engine, b);
        List<byte[]> one = chunks(quarter, b);
        List<byte[]> three = chunks(threeQuarters, b);
        // The minimum moved, the average little: cuts before the average were rare (the stricter mask).
        double a = (double) b.length / mine.size();
        double a1 = (double) b.length / one.size();
        assertTrue(Math.abs(a - a1) / a1 < 0.15, "means " + a + " and " + a1);
        // What the gear hash runs over: each chunk past its minimum.
        long hashed = mine.stream().mapToLong(c -> Math.max(0, c.length - engine.min())).sum();
        long hashed1 = one.stream().mapToLong(c -> Math.max(0, c.length - quarter.min())).sum();
        long hashed3 = three.stream().mapToLong(c -> Math.max(0, c.length - threeQuarters.min())).sum();
        assertTrue(hashed < 0.7 * hashed3 && hashed3 < 0.6 * hashed1, hashed + ", " + hashed3 + " and " + hashed1
                + " bytes hashed");
    }
}

package io.ferry.compression.internal;

import io.ferry.compression.Codecs;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class PlanesCodecTest {
    @Test
    void planesHoldByteKOfEveryElementInOrderAndTheTailAsItIs() {
        byte[] raw = new byte[19]; // two whole elements and three bytes over
        for (int i = 0; i < raw.length; i++) {
            raw[i] = (byte) i;
        }
        byte[] planes = new byte[raw.length + 4];
        PlanesCodec.split(raw, 0, raw.length, planes);
        assertArrayEquals(new byte[]{0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15, 16, 17, 18},
                Arrays.copyOf(planes, raw.length));
        byte[] back = new byte[raw.length + 3];
        PlanesCodec.join(planes, raw.length, back, 3);
        assertArrayEquals(raw, Arrays.copyOfRange(back, 3, 3 + raw.length));
    }

    @Test
    void everyLengthRoundTripsAtAnyOffset() {
        PlanesCodec codec = new PlanesCodec(1);
        SplittableRandom r = new SplittableRandom(3);
        for (int len : new int[]{0, 1, 7, 8, 9, 15, 16, 17, 4095, 65536, 65539, 262144}) {
            byte[] src = new byte[len + 5];
            r.nextBytes(src);
            byte[] out = new byte[codec.maxCompressedLength(len) + 2];
            int n = codec.compress(src, 5, len, out, 2);
            byte[] back = new byte[len + 1];
            codec.decompress(out, 2, n, back, 1, len);
            assertArrayEquals(Arrays.copyOfRange(src, 5, 5 + len), Arrays.copyOfRange(back, 1, 1 + len),
                    "length " + len);
        }
    }

    @Test
    void aFrameOfAnotherLengthIsRefused() {
        PlanesCodec codec = new PlanesCodec(1);
        byte[] src = new byte[4096];
        byte[] out = new byte[codec.maxCompressedLength(src.length)];
        int n = codec.compress(src, 0, src.length, out, 0);
        assertThrows(IllegalArgumentException.class, () -> codec.decompress(out, 0, n, new byte[8192], 0, 8192));
        assertThrows(IllegalArgumentException.class, () -> codec.decompress(out, 0, n - 1, new byte[4096], 0, 4096));
        assertEquals(Codecs.PLANES_ID, codec.id());
    }

    @Test
    void theEightByEightTransposeMatchesByteByByteRegroupingForEveryTail() {
        SplittableRandom r = new SplittableRandom(9);
        for (int len = 0; len < 300; len++) {
            byte[] src = new byte[len + 3];
            r.nextBytes(src);
            byte[] expected = new byte[len];
            int n = len / PlanesCodec.WIDTH;
            for (int k = 0; k < PlanesCodec.WIDTH; k++) {
                for (int i = 0; i < n; i++) {
                    expected[k * n + i] = src[3 + i * PlanesCodec.WIDTH + k];
                }
            }
            System.arraycopy(src, 3 + n * PlanesCodec.WIDTH, expected, n * PlanesCodec.WIDTH,
                    len - n * PlanesCodec.WIDTH);
            byte[] planes = new byte[len];
            PlanesCodec.split(src, 3, len, planes);
            assertArrayEquals(expected, planes, "length " + len);
            byte[] back = new byte[len + 2];
            PlanesCodec.join(planes, len, back, 2);
            assertArrayEquals(Arrays.copyOfRange(src, 3, 3 + len), Arrays.copyOfRange(back, 2, 2 + len),
                    "length " + len);
        }
    }
}

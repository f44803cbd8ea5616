package io.ferry.staging;

import io.ferry.compression.ChunkFormat;
import io.ferry.compression.Codecs;
import io.ferry.model.ImageRef;
import io.ferry.staging.packs.PackFormat;
import io.ferry.staging.packs.PackKeys;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The codecs a pack-layout push chooses per blob (byte planes for float fields, LZ4 for heap pages), through a real
 * pipeline on a POSIX store: what they store, and that every pipeline reads them back byte for byte.
 */
class PackCodecsTest extends PackStoreTestBase {
    /** Doubles of a smooth field with noisy low mantissa bits: what a simulation's state looks like. */
    private static byte[] field(int count, long seed) {
        Random r = new Random(seed);
        ByteBuffer b = ByteBuffer.allocate(count * 8).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < count; i++) {
            double x = i * 1e-4;
            b.putDouble(Math.sin(x) * Math.cos(0.37 * x) + 1e-9 * r.nextDouble());
        }
        return b.array();
    }

    @Test
    void floatFieldsAreStoredOverBytePlanesSmallerAndRestoredByteForByte() throws Exception {
        Fixture.write(image.resolve("fields.bin"), field(400_000, 5)); // 3.2 MB
        Fixture.write(image.resolve("text.bin"), Fixture.randomBytes(100_003, 6));
        PushResult planes = fx.pipeline.push(image, gen(1), Progress.NONE);
        Path out = tmp.resolve("out-planes");
        fx.pipeline.pull(gen(1), out, Progress.NONE);
        Fixture.assertSameTree(image, out);
        int overPlanes = codecs(fx)[Codecs.PLANES_ID];
        assertTrue(overPlanes > 100, overPlanes + " blobs over planes of " + planes.newChunks());

        // The same image into another store, planes off: plain zstd shrinks such fields by about 7%.
        Map<String, String> off = new HashMap<>(PACKS);
        off.put("staging.planes", "off");
        try (Fixture plainOnly = new Fixture(tmp.resolve("plain"), off)) {
            PushResult plain = plainOnly.pipeline.push(image, gen(1), Progress.NONE);
            assertTrue(planes.storedBytes() < 0.85 * plain.storedBytes(),
                    planes.storedBytes() + " bytes over planes against " + plain.storedBytes() + " plain");
        }
        // A pipeline that does not write planes reads them (the first store, through another pipeline).
        try (Fixture reader = new Fixture(tmp, off)) {
            Path again = tmp.resolve("out-again");
            reader.pipeline.pull(gen(1), again, Progress.NONE);
            Fixture.assertSameTree(image, again);
        }
    }

    /** Heap-like pages: small integers, pointer-like words and some noise, every third page untouched. */
    private static byte[] heap(int pages, long seed) {
        Random r = new Random(seed);
        ByteBuffer b = ByteBuffer.allocate(pages * 4096).order(ByteOrder.LITTLE_ENDIAN);
        for (int p = 0; p < pages; p++) {
            long base = 0x00007f0000000000L + ((long) r.nextInt(1 << 20) << 12);
            for (int i = 0; i < 512; i++) {
                int kind = r.nextInt(10);
                b.putLong(p % 3 == 0 ? 0 : kind < 5 ? r.nextInt(1000) : kind < 8 ? base + (r.nextInt(4096) & ~7)
                        : r.nextLong());
            }
        }
        return b.array();
    }

    /** Records of each codec among the store's packs, by codec id. */
    private static int[] codecs(Fixture f) throws Exception {
        int[] n = new int[4];
        for (String key : f.store.list(PackKeys.PACKS)) {
            byte[] pack = f.store.get(key);
            for (PackFormat.Record rec : PackFormat.records(pack, pack.length)) {
                n[ChunkFormat.header(pack, rec.offset(), rec.length(), "r").codec()]++;
            }
        }
        return n;
    }

    @Test
    void heapPagesAreStoredWithLz4AndRestoredByteForByteAlsoByAPipelineThatDoesNotWriteIt() throws Exception {
        Fixture.write(image.resolve("heap.bin"), heap(1000, 8)); // 4 MB
        Fixture.write(image.resolve("fields.bin"), field(200_000, 9));
        PushResult withLz4 = fx.pipeline.push(image, gen(1), Progress.NONE);
        Path out = tmp.resolve("out-lz4");
        fx.pipeline.pull(gen(1), out, Progress.NONE);
        Fixture.assertSameTree(image, out);
        int[] codecs = codecs(fx);
        // Each worker's first heap blob goes to zstd, whose ratio sends the next ones to LZ4; the
        // fields stay over planes.
        assertTrue(codecs[Codecs.LZ4_ID] > 150, Arrays.toString(codecs));
        assertTrue(codecs[Codecs.PLANES_ID] > 50, Arrays.toString(codecs));

        Map<String, String> off = new HashMap<>(PACKS);
        off.put("staging.lz4", "off");
        try (Fixture zstdOnly = new Fixture(tmp.resolve("zstd"), off)) {
            PushResult zstd = zstdOnly.pipeline.push(image, gen(1), Progress.NONE);
            assertEquals(0, codecs(zstdOnly)[Codecs.LZ4_ID]);
            // LZ4's price on such pages: more bytes than zstd's, bounded.
            assertTrue(zstd.storedBytes() < withLz4.storedBytes() && withLz4.storedBytes() < 1.5 * zstd.storedBytes(),
                    withLz4.storedBytes() + " bytes with LZ4 against " + zstd.storedBytes() + " with zstd only");
        }
        // A pipeline that does not write LZ4 reads it (the first store, through another pipeline).
        try (Fixture reader = new Fixture(tmp, off)) {
            Path again = tmp.resolve("out-again");
            reader.pipeline.pull(gen(1), again, Progress.NONE);
            Fixture.assertSameTree(image, again);
        }
    }
}

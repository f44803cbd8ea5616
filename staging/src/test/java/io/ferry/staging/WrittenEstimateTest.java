package io.ferry.staging;

import io.ferry.model.ImageRef;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The estimate at capture of what a push will write, from 1% of the image read and looked up as
 * the push would, set beside what the push then wrote, on a real file store: an image all new,
 * one a copy of the last, one half each, one half zeros.
 */
class WrittenEstimateTest {
    private static final int MIB = 1 << 20;
    @TempDir
    Path tmp;

    @Test
    void aOnePercentSampleSaysWhatThePushWillWrite() throws Exception {
        byte[] first = random(1, 64 * MIB);
        byte[] half = first.clone();
        System.arraycopy(random(2, 32 * MIB), 0, half, 32 * MIB, 32 * MIB);
        byte[] zeros = random(3, 64 * MIB);
        Arrays.fill(zeros, 0, 32 * MIB, (byte) 0);
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC())) {
            check(pipeline, 0, first, 1.0);
            check(pipeline, 1, first, 0.0);
            check(pipeline, 2, half, 0.5);
            check(pipeline, 3, zeros, 0.5);
        }
    }

    /**
     * Estimates generation {@code g} of {@code state}, pushes it, and compares with what it wrote
     * (about {@code share} of it).
     */
    private void check(StagingPipeline pipeline, long g, byte[] state, double share) throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("g" + g));
        Files.write(dir.resolve("memory"), state);
        PushImage image = new PushImage(dir, new ImageRef("job", g, 0));
        long estimate = pipeline.estimateWritten(List.of(image), 0.01)[0];
        long[] wrote = new long[1];
        pipeline.pushAll(List.of(image), Progress.NONE, (i, p) -> wrote[0] = p.storedBytes());
        String what = "generation " + g + ": estimated " + estimate + ", wrote " + wrote[0];
        assertEquals(share, (double) wrote[0] / state.length, 0.02, "the case is what it says: " + what);
        System.out.println(what);
        assertTrue(Math.abs(estimate - wrote[0]) <= 0.1 * state.length, what);
        if (share == 0) { // a copy: the sample cuts where the push will (the last manifest's cuts), finding every blob
            assertTrue(estimate <= 0.01 * state.length, "a copy is found known: " + what);
        }
    }

    private static byte[] random(long seed, int n) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }
}

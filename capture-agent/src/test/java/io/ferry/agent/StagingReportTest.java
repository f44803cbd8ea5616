package io.ferry.agent;

import io.ferry.model.Event;
import io.ferry.model.ImageRef;
import io.ferry.staging.PushImage;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A node's staging progress as a real push into a real file store finds it: a generation all
 * new reports every byte read as new; the next one, half a copy of the first, reports only its
 * other half new, as the push goes, not only at its end.
 */
class StagingReportTest {
    private static final int MIB = 1 << 20;
    @TempDir
    Path tmp;

    @Test
    void theProgressSaysWhatThePushFoundNewSoFar() throws Exception {
        byte[] first = new byte[24 * MIB];
        new Random(5).nextBytes(first);
        byte[] second = first.clone();
        byte[] changed = new byte[12 * MIB];
        new Random(6).nextBytes(changed);
        System.arraycopy(changed, 0, second, 12 * MIB, changed.length); // the first half as before, the rest new
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC())) {
            List<Event.StagingProgress> all = push(pipeline, 0, first);
            assertTrue(all.size() >= 2, "reported as it went: " + all);
            assertEquals(0, all.get(0).readBytes(), "a report as the reading begins: " + all);
            for (Event.StagingProgress p : all) {
                assertEquals(p.readBytes(), p.freshBytes(), "all new: " + p);
                assertTrue(p.writtenBytes() >= p.freshBytes() && p.writtenBytes() < p.freshBytes() * 1.01 + 65536,
                        "random bytes do not compress: " + p);
                assertEquals(first.length, p.totalBytes());
            }
            List<Event.StagingProgress> next = push(pipeline, 1, second);
            assertTrue(next.size() >= 2, "reported as it went: " + next);
            Event.StagingProgress last = next.get(next.size() - 1);
            assertTrue(last.freshBytes() <= 12L * MIB + MIB && last.freshBytes() >= last.readBytes() - 12L * MIB - MIB,
                    "only what changed is new: " + last);
            long reads = next.stream().mapToLong(Event.StagingProgress::readBytes).distinct().count();
            assertEquals(next.size(), reads, "each tenth once: " + next);
        }
    }

    private List<Event.StagingProgress> push(StagingPipeline pipeline, long g, byte[] state) throws Exception {
        ImageRef ref = new ImageRef("job", g, 0);
        Path dir = Files.createDirectories(tmp.resolve("image-" + g));
        Files.write(dir.resolve("state"), state);
        List<Event.StagingProgress> seen = Collections.synchronizedList(new ArrayList<>());
        StagingReport report = new StagingReport("job", g, "n0", StagingReport.rawBytes(List.of(dir)),
                e -> seen.add((Event.StagingProgress) e));
        pipeline.pushAll(List.of(new PushImage(dir, ref)), report, (image, p) -> { });
        synchronized (seen) {
            List<Event.StagingProgress> sorted = new ArrayList<>(seen);
            sorted.sort(Comparator.comparingLong(Event.StagingProgress::readBytes));
            return sorted;
        }
    }
}

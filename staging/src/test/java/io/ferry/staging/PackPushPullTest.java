package io.ferry.staging;

import io.ferry.model.Entry;
import io.ferry.model.ImageRef;
import io.ferry.model.Manifest;
import io.ferry.staging.packs.PackFormat;
import io.ferry.staging.packs.PackKeys;
import io.ferry.stores.ObjectNotFoundException;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The pack layout (staging.layout=packs) on a real POSIX store: round trips, dedup, packs, damage. */
class PackPushPullTest extends PackStoreTestBase {
    @Test
    void aRankReusesWhatItsNodePushedForAnotherRankOfTheJob() throws Exception {
        byte[] shared = Fixture.randomBytes(3_000_000, 77); // the program's code and read-only data, in every rank
        Fixture.write(image.resolve("text.bin"), shared);
        Fixture.write(image.resolve("own.bin"), Fixture.randomBytes(200_000, 1));
        PushResult rank0 = fx.pipeline.push(image, new ImageRef("job", 1, 0), Progress.NONE);
        Path other = Files.createDirectories(tmp.resolve("rank1"));
        Fixture.write(other.resolve("text.bin"), shared);
        Fixture.write(other.resolve("own.bin"), Fixture.randomBytes(200_000, 2));
        PushResult rank1 = fx.pipeline.push(other, new ImageRef("job", 1, 1), Progress.NONE);
        assertTrue(rank1.knownChunks() > 100, "rank 1 finds rank 0's blobs: " + rank1.knownChunks());
        assertTrue(rank1.storedBytes() < rank0.storedBytes() / 5,
                "rank 1 writes only its own part: " + rank1.storedBytes() + " of rank 0's " + rank0.storedBytes());
        Path out = tmp.resolve("out1");
        fx.pipeline.pull(new ImageRef("job", 1, 1), out, Progress.NONE);
        Fixture.assertSameTree(other, out);

        // The next generation of rank 1, unchanged: nothing new is written.
        PushResult next = fx.pipeline.push(other, new ImageRef("job", 2, 1), Progress.NONE);
        assertTrue(next.storedBytes() < rank0.storedBytes() / 20, "nothing changed: " + next.storedBytes());
        // Another job's ranks are not looked at.
        PushResult stranger = fx.pipeline.push(other, new ImageRef("other", 1, 1), Progress.NONE);
        assertTrue(stranger.storedBytes() > rank0.storedBytes() / 2,
                "another job writes its own: " + stranger.storedBytes());
    }

    /** Four ranks' images of generation 0: the program's 1.5 MB every rank holds, and 300 KB of each rank's own. */
    private List<PushImage> fourRanks() throws IOException {
        byte[] shared = Fixture.randomBytes(1_500_000, 77);
        List<PushImage> ranks = new ArrayList<>();
        for (int r = 0; r < 4; r++) {
            Path dir = Files.createDirectories(tmp.resolve("node/rank" + r));
            Fixture.write(dir.resolve("text.bin"), shared);
            Fixture.write(dir.resolve("own.bin"), Fixture.randomBytes(300_000, 100 + r));
            ranks.add(new PushImage(dir, new ImageRef("job", 0, r)));
        }
        return ranks;
    }

    @Test
    void aNodesRanksArePushedTogetherIntoSharedPacksWithAManifestEach() throws Exception {
        // One worker, so that which rank writes a shared blob is decided (with several, whichever worker meets it
        // first writes it, so the stored bytes could be shared out between the ranks otherwise).
        Map<String, String> one = new HashMap<>(PACKS);
        one.put("staging.workers", "1");
        fx.close();
        fx = new Fixture(tmp.resolve("one-worker"), one);
        List<PushImage> ranks = fourRanks();
        List<PushResult> told = new ArrayList<>();
        fx.pipeline.pushAll(ranks, Progress.NONE, (image, result) -> {
            assertEquals(image.ref(), result.image());
            assertTrue(fx.pipeline.repository().readManifest(image.ref()).manifest().inPacks(),
                    "its manifest is written first");
            told.add(result);
        });
        assertEquals(ranks.stream().map(PushImage::ref).toList(), told.stream().map(PushResult::image).toList());
        // The shared 1.5 MB is written once; the four ranks' own 1.2 MB, and nothing else, beside it.
        long packBytes = 0;
        for (String key : fx.store.list(PackKeys.PACKS)) {
            packBytes += fx.store.size(key);
        }
        assertTrue(packBytes < 2_800_000 + 100_000, "one copy of what the ranks share: " + packBytes);
        assertEquals(3, fx.store.list(PackKeys.PACKS).size(),
                "2.7 MB in packs of 1 MiB, not a part-filled pack per rank");
        assertEquals(packBytes, told.stream().mapToLong(PushResult::storedBytes).sum(), 4,
                "the ranks' stored bytes add up to the packs'");
        // Rank 0 wrote the shared blobs; the others found them written and wrote only their own.
        assertTrue(told.get(0).storedBytes() > 1_700_000, "rank 0 wrote its whole image: " + told.get(0));
        for (PushResult r : told.subList(1, 4)) {
            assertTrue(r.storedBytes() < 400_000, "the others only their own: " + r);
            assertTrue(r.knownChunks() > 60, "and found the shared blobs written: " + r);
        }
        for (PushResult r : told) {
            assertEquals(1_800_000, r.rawBytes());
        }
        double seconds = told.stream().mapToDouble(r -> r.elapsed().toNanos() / 1e9).sum();
        assertTrue(told.stream().allMatch(r -> r.elapsed().toNanos() > 0) && seconds < 60,
                "the group's time shared: " + seconds);
        for (PushImage i : ranks) {
            Path out = tmp.resolve("out-" + i.ref().rank());
            PullResult pulled = fx.pipeline.pull(i.ref(), out, Progress.NONE);
            Fixture.assertSameTree(i.dir(), out);
            // Its records lie among the other ranks' in the shared packs: a span read takes some of theirs too.
            assertTrue(pulled.readBytes() >= pulled.fetchedBytes() && pulled.fetchedBytes() > 1_000_000,
                    "read " + pulled.readBytes() + " for records of " + pulled.fetchedBytes());
            assertTrue(pulled.readBytes() <= packBytes, "never more than the packs hold: " + pulled.readBytes());
        }
        assertTrue(fx.pipeline.verify(Progress.NONE).ok());
    }

    @Test
    void aNodesRanksArePulledTogetherAndWhatTheyShareIsReadOnce() throws Exception {
        List<PushImage> ranks = fourRanks();
        fx.pipeline.pushAll(ranks, Progress.NONE, (image, result) -> { });
        long packBytes = 0;
        for (String key : fx.store.list(PackKeys.PACKS)) {
            packBytes += fx.store.size(key);
        }
        long alone = 0;
        for (PushImage i : ranks) {
            alone += fx.pipeline.pull(i.ref(), tmp.resolve("alone-" + i.ref().rank()), Progress.NONE).readBytes();
        }
        List<PullImage> images = ranks.stream()
                .map(i -> new PullImage(i.ref(), tmp.resolve("node-out/" + i.ref().rank()))).toList();
        List<PullResult> together = fx.pipeline.pullAll(images, Progress.NONE);
        for (int r = 0; r < 4; r++) {
            assertEquals(ranks.get(r).ref(), together.get(r).image());
            Fixture.assertSameTree(ranks.get(r).dir(), images.get(r).dest());
            assertFalse(together.get(r).committed(), "no snapshot was committed");
        }
        long read = together.stream().mapToLong(PullResult::readBytes).sum();
        long records = together.stream().mapToLong(PullResult::fetchedBytes).sum();
        // Each of the 2.7 MB of records is read once, where four pulls one after another read the
        // shared 1.5 MB four times.
        assertTrue(read <= packBytes && records <= packBytes,
                "read " + read + " and records " + records + " of packs of " + packBytes);
        assertTrue(alone > 2 * read, "rank by rank " + alone + ", together " + read);
        assertTrue(together.get(0).fetchedBytes() > 1_500_000,
                "the first rank is counted the shared records: " + together.get(0));

        // The marker is read and checked for a committed snapshot; a damaged one fails the pull of them all.
        fx.pipeline.repository().commitSnapshot("job", 0, 4);
        List<PullImage> again = ranks.stream()
                .map(i -> new PullImage(i.ref(), tmp.resolve("again/" + i.ref().rank()))).toList();
        assertTrue(fx.pipeline.pullAll(again, Progress.NONE).stream().allMatch(PullResult::committed));
        String pack = fx.store.list(PackKeys.PACKS).get(0);
        byte[] bytes = fx.store.get(pack);
        bytes[100] ^= 0x40; // a record of rank 0's shared text, which every rank needs
        fx.store.put(pack, ByteBuffer.wrap(bytes));
        List<PullImage> broken = ranks.stream()
                .map(i -> new PullImage(i.ref(), tmp.resolve("broken/" + i.ref().rank()))).toList();
        assertThrows(ImageCorruptException.class, () -> fx.pipeline.pullAll(broken, Progress.NONE));
        try (Stream<Path> left = Files.list(tmp.resolve("broken"))) {
            assertEquals(List.of(), left.toList(), "no rank's image, and no partial directory, is left");
        }
        // Two images bound for one directory are refused before anything is written.
        List<PullImage> clash = List.of(new PullImage(ranks.get(0).ref(), tmp.resolve("clash")),
                new PullImage(ranks.get(1).ref(), tmp.resolve("clash")));
        assertThrows(IllegalArgumentException.class, () -> fx.pipeline.pullAll(clash, Progress.NONE));
        assertFalse(Files.exists(tmp.resolve("clash")));
    }

    @Test
    void aBlobThatSeveralWorkersMeetAtOnceIsWrittenOnce() throws Exception {
        // Eight copies of one 1 MB file, cut and named by three workers at once: they meet the same blobs at the
        // same moments, and the first to claim each writes it while the others wait for its place.
        byte[] same = Fixture.randomBytes(1_000_000, 21);
        for (int i = 0; i < 8; i++) {
            Fixture.write(image.resolve("copy" + i), same);
        }
        PushResult pushed = fx.pipeline.push(image, gen(1), Progress.NONE);
        long packBytes = 0;
        for (String key : fx.store.list(PackKeys.PACKS)) {
            packBytes += fx.store.size(key);
        }
        assertTrue(packBytes < 1_100_000, "one copy of the file in the packs: " + packBytes);
        assertEquals(pushed.storedBytes(), packBytes, 4);
        assertEquals(7 * (pushed.chunks() / 8), pushed.knownChunks(),
                "every blob of seven copies found written: " + pushed);
        fx.pipeline.pull(gen(1), tmp.resolve("out"), Progress.NONE);
        Fixture.assertSameTree(image, tmp.resolve("out"));
    }

    @Test
    void aFailedGroupLeavesTheGroupsBeforeItPushedAndToldAndNothingOfItsOwn() throws Exception {
        List<PushImage> ranks = fourRanks();
        // Rank 3's image holds a named pipe: a push refuses what it cannot read as a file.
        Path fifo = ranks.get(3).dir().resolve("pipe");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        List<ImageRef> told = new ArrayList<>();
        Exception e = assertThrows(Exception.class, () -> fx.pipeline.pushAll(ranks, Progress.NONE,
                (image, result) -> told.add(image.ref()), 3_700_000));
        assertTrue(e.getMessage().contains("pipe"), e.getMessage());
        assertEquals(List.of(new ImageRef("job", 0, 0), new ImageRef("job", 0, 1)), told,
                "groups of two ranks: the first was pushed");
        assertTrue(fx.pipeline.repository().readManifest(new ImageRef("job", 0, 1)).manifest().inPacks());
        assertThrows(ObjectNotFoundException.class,
                () -> fx.pipeline.repository().readManifest(new ImageRef("job", 0, 2)),
                "the failed group wrote no manifest");
        Files.delete(fifo);
        told.clear();
        fx.pipeline.pushAll(ranks.subList(2, 4), Progress.NONE, (image, result) -> told.add(image.ref()), 3_700_000);
        assertEquals(List.of(new ImageRef("job", 0, 2), new ImageRef("job", 0, 3)), told);
        assertTrue(fx.pipeline.verify(Progress.NONE).ok());
    }

    @Test
    void mixedImageRoundTripsThroughPacksAndNoChunkObjectIsWritten() throws Exception {
        Fixture.write(image.resolve("empty"), new byte[0]);
        Fixture.write(image.resolve("zeros.bin"), new byte[300_001]);
        for (int n : new int[]{1, 4095, 16_384, 70_001, 5_000_000}) {
            Fixture.write(image.resolve("sizes/f" + n), Fixture.randomBytes(n, n));
        }
        byte[] mixed = Fixture.randomBytes(2_000_000, 9);
        Arrays.fill(mixed, 500_000, 1_200_000, (byte) 0);
        Fixture.write(image.resolve("deep/a/b/mixed.bin"), mixed);
        Fixture.write(image.resolve("deep/twice.bin"), Fixture.randomBytes(5_000_000, 5_000_000)); // = sizes/f5000000
        Files.createDirectories(image.resolve("emptydir"));
        Files.createSymbolicLink(image.resolve("latest"), Path.of("sizes/f1"));
        Files.setPosixFilePermissions(image.resolve("sizes/f1"), PosixFilePermissions.fromString("r--------"));
        Files.setPosixFilePermissions(image.resolve("deep/a"), PosixFilePermissions.fromString("r-x------"));

        PushResult pushed = fx.pipeline.push(image, gen(1), Progress.NONE);
        assertTrue(pushed.zeroChunks() > 0, "zero blobs are stored nowhere");
        assertTrue(pushed.knownChunks() > 100,
                "the second copy of a 5 MB file is found in this push: " + pushed.knownChunks());
        assertEquals(List.of(), fx.store.list("ferry/v1/chunks/"));
        List<String> packs = fx.store.list(PackKeys.PACKS);
        assertTrue(packs.size() >= 3 && packs.size() <= 12, "about 7 MB stored in 1 MiB packs: " + packs);
        Manifest m = fx.pipeline.repository().readManifest(gen(1)).manifest();
        assertTrue(m.inPacks());
        assertEquals(packs.size(), m.packs().size());

        Path out = tmp.resolve("out");
        PullResult pulled = fx.pipeline.pull(gen(1), out, Progress.NONE);
        Fixture.assertSameTree(image, out);
        assertTrue(pulled.fetchedChunks() < pushed.chunks() - pushed.zeroChunks(), "a blob stored once is read once");
    }

    @Test
    void scatteredRewritesAndShiftedBytesCostLittleInTheNextGeneration() throws Exception {
        byte[] data = Fixture.randomBytes(12 << 20, 1);
        Fixture.write(image.resolve("state.bin"), data);
        long first = fx.pipeline.push(image, gen(1), Progress.NONE).storedBytes();

        Random r = new Random(2); // 5% rewritten in runs of 64 KiB at random places
        for (int i = 0; i < data.length / 20 / 65_536; i++) {
            byte[] run = Fixture.randomBytes(65_536, r.nextLong());
            System.arraycopy(run, 0, data, r.nextInt(data.length - run.length), run.length);
        }
        Fixture.write(image.resolve("state.bin"), data);
        long scattered = fx.pipeline.push(image, gen(2), Progress.NONE).storedBytes();
        assertTrue(scattered < 0.15 * first, "5% scattered rewrites stored " + scattered + " of " + first);

        byte[] shifted = new byte[data.length + 100];
        System.arraycopy(data, 0, shifted, 100, data.length);
        Fixture.write(image.resolve("state.bin"), shifted);
        long shift = fx.pipeline.push(image, gen(3), Progress.NONE).storedBytes();
        assertTrue(shift < 0.10 * first, "100 bytes inserted at the start stored " + shift + " of " + first);

        Path out = tmp.resolve("out");
        fx.pipeline.pull(gen(3), out, Progress.NONE);
        Fixture.assertSameTree(image, out);
    }

    @Test
    void aFreshNodeDeduplicatesAgainstTheManifestsOnTheStore() throws Exception {
        Fixture.write(image.resolve("state.bin"), Fixture.randomBytes(3 << 20, 3));
        fx.pipeline.push(image, gen(1), Progress.NONE);
        try (Fixture other = new Fixture(tmp, PACKS)) { // same store, empty cache
            PushResult again = other.pipeline.push(image, gen(2), Progress.NONE);
            assertEquals(0, again.newChunks());
            assertEquals(again.chunks(), again.knownChunks());
            other.pipeline.pull(gen(2), tmp.resolve("out"), Progress.NONE);
        }
        Fixture.assertSameTree(image, tmp.resolve("out"));
    }

    @Test
    void aRepeatedPushOfTheSameImageWritesNothingAndTheSameManifestBytes() throws Exception {
        Fixture.write(image.resolve("state.bin"), Fixture.randomBytes(3 << 20, 8));
        PushResult first = fx.pipeline.push(image, gen(1), Progress.NONE);
        try (Fixture other = new Fixture(tmp, PACKS)) { // a retry on another agent: nothing cached
            PushResult again = other.pipeline.push(image, gen(1), Progress.NONE);
            assertEquals(0, again.newChunks());
            assertEquals(first.manifestSha256(), again.manifestSha256(),
                    "a coordinator may hold the first digest already");
        }
    }

    @Test
    void blobsOfAPackThatIsGoneAreWrittenAgain() throws Exception {
        Fixture.write(image.resolve("state.bin"), Fixture.randomBytes(3 << 20, 4));
        fx.pipeline.push(image, gen(1), Progress.NONE);
        for (String pack : fx.store.list(PackKeys.PACKS)) {
            fx.store.delete(pack); // as gc does with packs no manifest references
        }
        PushResult again = fx.pipeline.push(image, gen(2), Progress.NONE);
        assertEquals(again.chunks(), again.newChunks(), "the cache's places point at deleted packs");
        fx.pipeline.pull(gen(2), tmp.resolve("out"), Progress.NONE);
        Fixture.assertSameTree(image, tmp.resolve("out"));
    }

    @Test
    void aDamagedPackFailsThePullAndLeavesNothing() throws Exception {
        Fixture.write(image.resolve("state.bin"), Fixture.randomBytes(2 << 20, 5));
        fx.pipeline.push(image, gen(1), Progress.NONE);
        String pack = fx.store.list(PackKeys.PACKS).get(0);
        byte[] bytes = fx.store.get(pack);
        bytes[100] ^= 0x40; // inside the first record
        fx.store.put(pack, ByteBuffer.wrap(bytes));
        Path out = tmp.resolve("out");
        ImageCorruptException e = assertThrows(ImageCorruptException.class,
                () -> fx.pipeline.pull(gen(1), out, Progress.NONE));
        assertTrue(e.getMessage().contains("CRC32C") || e.getMessage().contains("SHA-256"), e.getMessage());
        assertFalse(Files.exists(out));
        try (Stream<Path> s = Files.list(tmp)) {
            assertTrue(s.noneMatch(p -> p.getFileName().toString().contains("ferry-partial")));
        }
    }

    @Test
    void filesPastTheWritebackStepPullBackIdenticalAndNoFlusherOutlivesAPull() throws Exception {
        // Two files of 40 MB, each past the 16 MiB after which a pull starts a file's writeback from its flusher.
        Fixture.write(image.resolve("a.bin"), Fixture.randomBytes(40_000_000, 11));
        byte[] b = Fixture.randomBytes(40_000_000, 12);
        Arrays.fill(b, 10_000_000, 30_000_000, (byte) 0); // a hole between the flushes
        Fixture.write(image.resolve("b.bin"), b);
        fx.pipeline.push(image, gen(1), Progress.NONE);

        Path out = tmp.resolve("out");
        fx.pipeline.pull(gen(1), out, Progress.NONE);
        Fixture.assertSameTree(image, out);
        assertNoFlusherLeft();

        List<String> packs = fx.store.list(PackKeys.PACKS);
        String last = packs.get(packs.size() - 1);
        byte[] bytes = fx.store.get(last);
        bytes[100] ^= 0x40; // a record late in the image: the files have been flushed on the way
        fx.store.put(last, ByteBuffer.wrap(bytes));
        assertThrows(ImageCorruptException.class, () -> fx.pipeline.pull(gen(1), tmp.resolve("out2"), Progress.NONE));
        assertFalse(Files.exists(tmp.resolve("out2")));
        assertNoFlusherLeft();
    }

    private static void assertNoFlusherLeft() throws InterruptedException {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("ferry-pull-flusher")) {
                t.join(10_000); // shut down by the pull: ends with its last flush
                assertFalse(t.isAlive(), "a pull's flusher thread outlived the pull");
            }
        }
    }

    @Test
    void aPackTrailerListsEveryRecordAndRefusesDamage() throws Exception {
        Fixture.write(image.resolve("state.bin"), Fixture.randomBytes(3 << 20, 6));
        PushResult pushed = fx.pipeline.push(image, gen(1), Progress.NONE);
        long records = 0;
        for (String key : fx.store.list(PackKeys.PACKS)) {
            byte[] pack = fx.store.get(key);
            records += PackFormat.records(pack, pack.length).size();
            byte[] cut = Arrays.copyOf(pack, pack.length - 1);
            assertThrows(IllegalArgumentException.class, () -> PackFormat.records(cut, cut.length));
            pack[pack.length - 30] ^= 1; // a trailer entry
            assertThrows(IllegalArgumentException.class, () -> PackFormat.records(pack, pack.length));
        }
        assertEquals(pushed.newChunks(), records);
    }

    @Test
    void theManifestLocatesEveryBlobAndItsLengthsAddUp() throws Exception {
        Fixture.write(image.resolve("a.bin"), Fixture.randomBytes(1_000_003, 7));
        fx.pipeline.push(image, gen(1), Progress.NONE);
        Manifest m = fx.pipeline.repository().readManifest(gen(1)).manifest();
        Entry.RegularFile f = (Entry.RegularFile) m.entries().stream().filter(e -> e.path().equals("a.bin"))
                .findFirst().orElseThrow();
        long[] at = f.offsets(m.chunkSize());
        assertEquals(1_000_003, at[at.length - 1]);
        assertTrue(f.chunks().size() > 20 && f.chunks().size() < 250, "16 KiB average blobs: " + f.chunks().size());
        assertEquals(64 * 1024, m.chunkSize(), "the largest blob is four times the average");
    }
}

package io.ferry.staging;

import io.ferry.model.ChunkId;
import io.ferry.model.Entry;
import io.ferry.model.ImageRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

import static io.ferry.staging.Fixture.CHUNK;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Damaged stores: every read verifies, nothing damaged is handed out, verify lists it all. */
class CorruptionTest {
    @TempDir
    Path tmp;
    Fixture fx;
    final ImageRef ref = new ImageRef("job", 7, 0);
    ChunkId second;

    @BeforeEach
    void setUp() throws IOException {
        fx = new Fixture(tmp);
        Path image = tmp.resolve("image");
        Fixture.write(image.resolve("state.bin"), Fixture.randomBytes(3 * CHUNK, 3));
        fx.pipeline.push(image, ref, Progress.NONE);
        fx.pipeline.repository().commitSnapshot("job", 7, 1);
    }

    @AfterEach
    void tearDown() throws IOException {
        fx.close();
    }

    private Path chunkFile(int index) throws IOException {
        Entry.RegularFile f = (Entry.RegularFile) fx.pipeline.repository().readManifest(ref).manifest()
                .entries().get(0);
        second = f.chunks().get(index);
        return fx.storeDir().resolve(Repository.chunkKey(second));
    }

    private ImageCorruptException pullFails() {
        ImageCorruptException e = assertThrows(ImageCorruptException.class,
                () -> fx.pipeline.pull(ref, tmp.resolve("out"), Progress.NONE));
        assertFalse(Files.exists(tmp.resolve("out")), "nothing is handed out");
        try (var s = Files.list(tmp)) {
            assertTrue(s.noneMatch(p -> p.getFileName().toString().contains("ferry-partial")),
                    "no partial directory left");
        } catch (IOException io) {
            throw new AssertionError(io);
        }
        String m = e.getMessage();
        assertTrue(m.contains("image job/7/0 file 'state.bin' chunk 1 of 3 (" + second + ")"), m);
        return e;
    }

    @Test
    void flippedByteIsCaughtOnPullAndByVerify() throws Exception {
        Path c = chunkFile(1);
        try (RandomAccessFile f = new RandomAccessFile(c.toFile(), "rw")) {
            f.seek(f.length() / 2);
            int b = f.read();
            f.seek(f.length() / 2);
            f.write(b ^ 0x01);
        }
        assertTrue(pullFails().getMessage().contains("CRC32C mismatch"));
        VerifyReport r = fx.pipeline.verify(Progress.NONE);
        assertFalse(r.ok());
        assertEquals(List.of(VerifyReport.Kind.CORRUPT_CHUNK, VerifyReport.Kind.DAMAGED_IMAGE),
                r.problems().stream().map(VerifyReport.Problem::kind).toList());
        assertTrue(r.problems().get(1).detail().contains("file 'state.bin' chunk 1"), r.problems().toString());
    }

    @Test
    void truncatedChunkIsCaught() throws Exception {
        Path c = chunkFile(1);
        try (RandomAccessFile f = new RandomAccessFile(c.toFile(), "rw")) {
            f.setLength(f.length() - 100);
        }
        assertTrue(pullFails().getMessage().contains("truncated"));
        assertFalse(fx.pipeline.verify(Progress.NONE).ok());
    }

    @Test
    void missingChunkIsCaught() throws Exception {
        Files.delete(chunkFile(1));
        assertTrue(pullFails().getMessage().endsWith("missing chunk"));
        VerifyReport r = fx.pipeline.verify(Progress.NONE);
        assertEquals(1, r.problems().size());
        assertTrue(r.problems().get(0).detail().endsWith("is missing"), r.problems().toString());
    }

    @Test
    void chunkReplacedByAnotherValidChunkFailsTheSha() throws Exception {
        Path c1 = chunkFile(1);
        Path c0 = chunkFile(0);
        chunkFile(1);
        Files.copy(c0, c1, StandardCopyOption.REPLACE_EXISTING);
        assertTrue(pullFails().getMessage().contains("SHA-256 mismatch"));
    }

    @Test
    void healthyStoreVerifiesClean() throws Exception {
        VerifyReport r = fx.pipeline.verify(Progress.NONE);
        assertTrue(r.ok(), r.problems().toString());
        assertEquals(3, r.chunks());
        assertEquals(1, r.manifests());
        assertEquals(1, r.snapshots());
    }

    @Test
    void strayAndMalformedObjectsAreReported() throws Exception {
        Fixture.write(fx.storeDir().resolve("ferry/v1/chunks/zz/notachunk"), new byte[3]);
        Fixture.write(fx.storeDir().resolve("ferry/v1/jobs/job/7/SNAPSHOT"), "garbage".getBytes());
        VerifyReport r = fx.pipeline.verify(Progress.NONE);
        assertEquals(List.of(VerifyReport.Kind.STRAY_OBJECT, VerifyReport.Kind.BAD_SNAPSHOT),
                r.problems().stream().map(VerifyReport.Problem::kind).toList());
    }

    @Test
    void aChunkThatRottedOnTheStoreIsReusedByDedupUntilTheScrubQuarantinesItThenTheNextPushHealsEveryImage()
            throws Exception {
        Path rotten = chunkFile(1);
        byte[] obj = Files.readAllBytes(rotten);
        obj[obj.length - 5] ^= 0x40; // a bit flipped in the stored bytes
        Files.write(rotten, obj);
        Path image = tmp.resolve("image");
        ImageRef next = new ImageRef("job", 8, 0);
        PushResult reused = fx.pipeline.push(image, next, Progress.NONE); // the same content: deduplicated by name
        assertEquals(0, reused.newChunks(), "a push does not read back what it reuses");
        assertThrows(ImageCorruptException.class, () -> fx.pipeline.pull(next, tmp.resolve("n"), Progress.NONE));

        VerifyReport before = fx.pipeline.verify(Progress.NONE);
        List<ChunkQuarantine.Outcome> done = ChunkQuarantine.repair(fx.pipeline.repository(), before);
        assertEquals(1, done.size(), done.toString());
        assertTrue(done.get(0).quarantined(), done.toString());
        assertFalse(Files.exists(rotten));
        try (var q = Files.list(fx.storeDir().resolve(ChunkQuarantine.QUARANTINE))) {
            assertEquals(1, q.count(), "kept aside for inspection, outside the chunks area");
        }
        assertEquals(List.of(), ChunkQuarantine.repair(fx.pipeline.repository(),
                fx.pipeline.verify(Progress.NONE)).stream()
                .filter(ChunkQuarantine.Outcome::quarantined).toList(), "nothing corrupt left to move");

        PushResult healing = fx.pipeline.push(image, new ImageRef("job", 9, 0), Progress.NONE);
        assertEquals(1, healing.newChunks(), "the missing chunk is written again");
        for (long g = 7; g <= 9; g++) { // the generations pushed before the repair are whole again too
            Path out = tmp.resolve("healed-" + g);
            fx.pipeline.pull(new ImageRef("job", g, 0), out, Progress.NONE);
            assertArrayEquals(Files.readAllBytes(image.resolve("state.bin")),
                    Files.readAllBytes(out.resolve("state.bin")));
        }
        assertTrue(fx.pipeline.verify(Progress.NONE).ok());
    }

    @Test
    void aChunkThatVerifiesWhenReadAgainIsLeftAlone() throws Exception {
        String key = Repository.chunkKey(((Entry.RegularFile) fx.pipeline.repository().readManifest(ref).manifest()
                .entries().get(0)).chunks().get(0));
        VerifyReport stale = new VerifyReport(3, 0, 1, 1,
                List.of(new VerifyReport.Problem(VerifyReport.Kind.CORRUPT_CHUNK, key,
                "unreadable: the store timed out"))); // what a scrub during an outage reports
        List<ChunkQuarantine.Outcome> done = ChunkQuarantine.repair(fx.pipeline.repository(), stale);
        assertFalse(done.get(0).quarantined(), done.toString());
        assertTrue(Files.exists(fx.storeDir().resolve(key)));
    }
}

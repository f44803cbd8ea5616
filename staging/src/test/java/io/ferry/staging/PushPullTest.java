package io.ferry.staging;

import io.ferry.compression.Digests;
import io.ferry.model.Entry;
import io.ferry.model.ImageRef;
import io.ferry.model.MalformedManifestException;
import io.ferry.model.Manifest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.ferry.staging.Fixture.CHUNK;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PushPullTest {
    @TempDir
    Path tmp;
    Fixture fx;
    Path image;
    final ImageRef ref = new ImageRef("job", 1, 0);

    @BeforeEach
    void setUp() throws IOException {
        fx = new Fixture(tmp);
        image = tmp.resolve("image");
        Files.createDirectories(image);
    }

    @AfterEach
    void tearDown() throws IOException {
        fx.close();
    }

    private void mixedImage() throws IOException {
        Fixture.write(image.resolve("empty"), new byte[0]);
        Fixture.write(image.resolve("zeros.bin"), new byte[3 * CHUNK + 5]);
        for (int n : new int[]{1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK}) {
            Fixture.write(image.resolve("sizes/f" + n), Fixture.randomBytes(n, n));
        }
        byte[] mixed = Fixture.randomBytes(4 * CHUNK, 9);
        Arrays.fill(mixed, CHUNK, 2 * CHUNK, (byte) 0);
        Fixture.write(image.resolve("deep/a/b/mixed.bin"), mixed);
        Files.createDirectories(image.resolve("emptydir"));
        Files.createSymbolicLink(image.resolve("latest"), Path.of("sizes/f1"));
        Files.setPosixFilePermissions(image.resolve("sizes/f1"), PosixFilePermissions.fromString("r--------"));
        Files.setPosixFilePermissions(image.resolve("deep/a"), PosixFilePermissions.fromString("r-x------"));
    }

    @Test
    void mixedImageRoundTripsWithModesLinksAndEmptyDirectories() throws Exception {
        mixedImage();
        PushResult pushed = fx.pipeline.push(image, ref, Progress.NONE);
        assertEquals(8 + 4 + 4, pushed.chunks()); // sizes/*, zeros.bin, mixed.bin
        assertEquals(5, pushed.zeroChunks()); // 4 of zeros.bin, 1 of mixed.bin
        PullResult pulled = fx.pipeline.pull(ref, tmp.resolve("out"), Progress.NONE);
        assertFalse(pulled.committed());
        assertEquals(pulled.fetchedBytes(), pulled.readBytes(), "chunk objects are read whole, nothing between them");
        Fixture.assertSameTree(image, tmp.resolve("out"));
    }

    @Test
    void chunkLayoutImagesOfAGroupPullAreRestoredOneByOne() throws Exception {
        mixedImage();
        fx.pipeline.push(image, ref, Progress.NONE);
        ImageRef other = new ImageRef(ref.job(), ref.generation(), ref.rank() + 1);
        fx.pipeline.push(image, other, Progress.NONE);
        List<PullResult> pulled = fx.pipeline.pullAll(List.of(new PullImage(ref, tmp.resolve("node/a")),
                new PullImage(other, tmp.resolve("node/b"))), Progress.NONE);
        assertEquals(List.of(ref, other), pulled.stream().map(PullResult::image).toList());
        Fixture.assertSameTree(image, tmp.resolve("node/a"));
        Fixture.assertSameTree(image, tmp.resolve("node/b"));
        assertEquals(pulled.get(0).fetchedBytes(), pulled.get(1).fetchedBytes(), "each read its own chunks");
    }

    @Test
    void zeroChunksCostNoIoAndComeBackAsHoles() throws Exception {
        Fixture.write(image.resolve("zeros.bin"), new byte[64 * CHUNK]);
        PushResult pushed = fx.pipeline.push(image, ref, Progress.NONE);
        assertEquals(0, pushed.newChunks());
        assertEquals(List.of(), fx.store.list("ferry/v1/chunks/"));
        fx.pipeline.pull(ref, tmp.resolve("out"), Progress.NONE);
        Path out = tmp.resolve("out/zeros.bin");
        assertEquals(64L * CHUNK, Files.size(out));
        long blocks = Long.parseLong(new String(new ProcessBuilder("stat", "-c", "%b", out.toString()).start()
                .getInputStream().readAllBytes()).trim());
        assertTrue(blocks * 512 < CHUNK, "restored zero file allocates " + blocks + " blocks");
    }

    @Test
    void pushingTheSameImageAgainWritesNoChunks() throws Exception {
        mixedImage();
        PushResult first = fx.pipeline.push(image, ref, Progress.NONE);
        PushResult again = fx.pipeline.push(image, new ImageRef("job", 2, 0), Progress.NONE);
        PushResult otherRank = fx.pipeline.push(image, new ImageRef("job", 2, 1), Progress.NONE);
        assertTrue(first.newChunks() > 0);
        assertEquals(0, again.newChunks());
        assertEquals(0, otherRank.newChunks());
        assertEquals(first.chunks() - first.zeroChunks(), again.knownChunks());
    }

    @Test
    void repeatedChunksWithinAnImageAreWrittenOnce() throws Exception {
        byte[] block = Fixture.randomBytes(CHUNK, 1);
        byte[] four = new byte[4 * CHUNK];
        for (int i = 0; i < 4; i++) {
            System.arraycopy(block, 0, four, i * CHUNK, CHUNK);
        }
        Fixture.write(image.resolve("rep.bin"), four);
        PushResult r = fx.pipeline.push(image, ref, Progress.NONE);
        assertEquals(1, r.newChunks());
        assertEquals(3, r.knownChunks());
    }

    @Test
    void largeFileStreamsThroughFewBuffers() throws Exception {
        try (Fixture small = new Fixture(tmp.resolve("small"),
                Map.of("staging.layout", "chunks", "staging.chunk-size", "64KiB",
                "staging.max-bytes-in-flight", "1MiB", "staging.workers", "2"))) {
            assertEquals(16, small.pipeline.config().buffers());
            byte[] data = Fixture.randomBytes(300 * CHUNK + 17, 5);
            Fixture.write(image.resolve("big.bin"), data);
            small.pipeline.push(image, ref, Progress.NONE);
            small.pipeline.pull(ref, tmp.resolve("out"), Progress.NONE);
            assertArrayEquals(data, Files.readAllBytes(tmp.resolve("out/big.bin")));
        }
    }

    @Test
    void pullRefusesANonEmptyDestination() throws Exception {
        mixedImage();
        fx.pipeline.push(image, ref, Progress.NONE);
        Fixture.write(tmp.resolve("out/keep.txt"), new byte[]{1});
        assertThrows(IllegalArgumentException.class, () -> fx.pipeline.pull(ref, tmp.resolve("out"), Progress.NONE));
        assertEquals(List.of(Path.of(""), Path.of("keep.txt")), Fixture.files(tmp.resolve("out")));
    }

    @Test
    void pullOfAnUnknownImageNamesIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> fx.pipeline.pull(new ImageRef("nojob", 4, 2), tmp.resolve("out"), Progress.NONE));
        assertTrue(e.getMessage().contains("nojob/4/2"), e.getMessage());
    }

    @Test
    void specialFilesAreRefused() throws Exception {
        Process p = new ProcessBuilder("mkfifo", image.resolve("pipe").toString()).start();
        assertEquals(0, p.waitFor());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> fx.pipeline.push(image, ref, Progress.NONE));
        assertTrue(e.getMessage().contains("pipe"), e.getMessage());
        assertFalse(fx.store.exists(Repository.manifestKey(ref)));
    }

    @Test
    void malformedManifestIsAClearErrorAndNothingIsWritten() throws Exception {
        Fixture.write(image.resolve("a"), Fixture.randomBytes(10, 1));
        fx.pipeline.push(image, ref, Progress.NONE);
        Files.writeString(fx.storeDir().resolve(Repository.manifestKey(ref)),
                "{\"format\":\"ferry-image-manifest\",\"version\":1}");
        MalformedManifestException e = assertThrows(MalformedManifestException.class,
                () -> fx.pipeline.pull(ref, tmp.resolve("out"), Progress.NONE));
        assertTrue(e.getMessage().contains("job/1/0.manifest"), e.getMessage());
        assertFalse(Files.exists(tmp.resolve("out")));
    }

    @Test
    void manifestSwappedAfterCommitIsRefused() throws Exception {
        Fixture.write(image.resolve("a"), Fixture.randomBytes(10, 1));
        fx.pipeline.push(image, ref, Progress.NONE);
        fx.pipeline.repository().commitSnapshot("job", 1, 1);
        Fixture.write(image.resolve("a"), Fixture.randomBytes(10, 2));
        fx.pipeline.push(image, ref, Progress.NONE); // rewrites the manifest under the committed snapshot
        ImageCorruptException e = assertThrows(ImageCorruptException.class,
                () -> fx.pipeline.pull(ref, tmp.resolve("out"), Progress.NONE));
        assertTrue(e.getMessage().contains("differs from the one its snapshot committed"), e.getMessage());
    }

    @Test
    void commitNeedsEveryRank() throws Exception {
        Fixture.write(image.resolve("a"), Fixture.randomBytes(10, 1));
        fx.pipeline.push(image, ref, Progress.NONE);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> fx.pipeline.repository().commitSnapshot("job", 1, 2));
        assertTrue(e.getMessage().contains("rank 1 has no manifest"), e.getMessage());
        assertFalse(fx.pipeline.repository().isEstablished("job", 1));
    }

    @Test
    void manifestRecordsChunkSizeAndChunksAndNoSecondWholeFileDigestByDefault() throws Exception {
        byte[] data = Fixture.randomBytes(CHUNK + 3, 4);
        Fixture.write(image.resolve("f"), data);
        fx.pipeline.push(image, ref, Progress.NONE);
        Manifest m = fx.pipeline.repository().readManifest(ref).manifest();
        assertEquals(CHUNK, m.chunkSize());
        var f = (Entry.RegularFile) m.entries().get(0);
        assertEquals(Entry.RegularFile.NOT_RECORDED, f.sha256());
        assertEquals(2, f.chunks().size());
        String json = Files.readString(fx.storeDir().resolve(Repository.manifestKey(ref)));
        assertTrue(json.contains("\"version\" : 2") && !json.contains("\"sha256\""), json);
        Path back = tmp.resolve("back");
        fx.pipeline.pull(ref, back, Progress.NONE); // every chunk checked against its id: that proves the file
        assertArrayEquals(data, Files.readAllBytes(back.resolve("f")));
    }

    @Test
    void withFileSha256OnTheManifestIsVersionOneWithEachFilesDigestAndPullChecksIt() throws Exception {
        try (Fixture v1 = new Fixture(tmp.resolve("v1"),
                Map.of("staging.layout", "chunks", "staging.chunk-size", Integer.toString(CHUNK),
                "staging.file-sha256", "true"))) {
            byte[] data = Fixture.randomBytes(CHUNK + 3, 4);
            Fixture.write(image.resolve("f"), data);
            v1.pipeline.push(image, ref, Progress.NONE);
            var f = (Entry.RegularFile) v1.pipeline.repository().readManifest(ref).manifest()
                    .entries().get(0);
            assertEquals(Digests.sha256Hex(data), f.sha256());
            assertTrue(Files.readString(v1.storeDir().resolve(Repository.manifestKey(ref)))
                    .contains("\"version\" : 1"));
            Path back = tmp.resolve("back1");
            v1.pipeline.pull(ref, back, Progress.NONE);
            assertArrayEquals(data, Files.readAllBytes(back.resolve("f")));
        }
    }
}

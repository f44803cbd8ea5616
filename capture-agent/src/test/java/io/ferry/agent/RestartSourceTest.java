package io.ferry.agent;

import io.ferry.model.Entry;
import io.ferry.model.ImageRef;
import io.ferry.staging.ImageCorruptException;
import io.ferry.staging.LocalCache;
import io.ferry.staging.Progress;
import io.ferry.staging.PushResult;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.staging.crypt.EncryptionKeyException;
import io.ferry.staging.crypt.Keys;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class RestartSourceTest {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "check recorded at staging: {0}")
    @ValueSource(booleans = {false, true})
    void restoresFromTheCacheWhenEveryChunkVerifiesAndFromTheStoreWhenOneByteDiffers(boolean crcRecorded)
            throws Exception {
        LocalCache cache = Staging.localCache(tmp.resolve("cache"));
        ImageRef ref = new ImageRef("job", 1, 0);
        Path image = cache.imageDir(ref);
        Files.createDirectories(image.resolve("sub"));
        byte[] big = new byte[9 << 20]; // three chunks, the last one short
        new Random(7).nextBytes(big);
        Arrays.fill(big, 4 << 20, 8 << 20, (byte) 0); // an all-zero chunk
        Files.write(image.resolve("sub/state.bin"), big);
        Files.writeString(image.resolve("small"), "42");
        Files.write(image.resolve("empty"), new byte[0]);
        Files.setPosixFilePermissions(image.resolve("small"), PosixFilePermissions.fromString("rwxr-x---"));
        Files.createSymbolicLink(image.resolve("link"), Path.of("small"));
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC())) {
            PushResult pushed = pipeline.push(image, ref, Progress.NONE);
            pipeline.repository().commitSnapshot("job", 1, 1);
            if (crcRecorded) {
                cache.markStaged(ref, pushed); // as the agent does: each chunk is then checked by its CRC32C
                assertEquals(pushed.manifestSha256(), cache.stagedCheck(ref).orElseThrow().manifestSha256());
                long chunks = pipeline.repository().readManifest(ref).manifest().entries().stream()
                        .filter(e -> e instanceof Entry.RegularFile)
                        .mapToLong(e -> ((Entry.RegularFile) e).chunks().size()).sum();
                assertEquals(chunks, cache.stagedCheck(ref).orElseThrow().chunkCrc32c().length,
                        "one CRC32C per chunk or blob");
            } else {
                cache.markStaged(ref); // as older agents did: SHA-256
                assertEquals(Optional.empty(), cache.stagedCheck(ref));
            }

            Path target = tmp.resolve("restart");
            assertEquals("local", RestartSource.materialise(pipeline, cache, ref, target));
            assertArrayEquals(big, Files.readAllBytes(target.resolve("sub/state.bin")));
            assertEquals("42", Files.readString(target.resolve("small")));
            assertEquals(0, Files.size(target.resolve("empty")));
            assertEquals("rwxr-x---",
                    PosixFilePermissions.toString(Files.getPosixFilePermissions(target.resolve("small"))));
            assertEquals(Path.of("small"), Files.readSymbolicLink(target.resolve("link")));

            try (RandomAccessFile f = new RandomAccessFile(image.resolve("sub/state.bin").toFile(), "rw")) {
                f.seek((4 << 20) + 12345); // inside the zero chunk
                f.write(1);
            }
            assertEquals("remote", RestartSource.materialise(pipeline, cache, ref, target));
            assertArrayEquals(big, Files.readAllBytes(target.resolve("sub/state.bin")));
            try (RandomAccessFile f = new RandomAccessFile(image.resolve("sub/state.bin").toFile(), "rw")) {
                f.seek((4 << 20) + 12345);
                f.write(0); // mended
                f.seek(777); // a bit flipped in a chunk of random bytes
                int b = f.read();
                f.seek(777);
                f.write(b ^ 0x10);
            }
            assertEquals("remote", RestartSource.materialise(pipeline, cache, ref, target));
            assertArrayEquals(big, Files.readAllBytes(target.resolve("sub/state.bin")));
        }
    }

    @Test
    void anEncryptedImageRestoresFromTheCacheCheckedByItsKeyedNamesAndAnotherKeyFailsInOneLine() throws Exception {
        LocalCache cache = Staging.localCache(tmp.resolve("cache"));
        ImageRef ref = new ImageRef("job", 1, 0);
        Path image = cache.imageDir(ref);
        byte[] big = new byte[3 << 20];
        new Random(11).nextBytes(big);
        Files.createDirectories(image);
        Files.write(image.resolve("state.bin"), big);
        var key = Keys.parse("42".repeat(32), "test key");
        var other = Keys.parse("43".repeat(32), "other test key");
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC(),
                     Optional.of(key))) {
            pipeline.push(image, ref, Progress.NONE);
            pipeline.repository().commitSnapshot("job", 1, 1);
            cache.markStaged(ref); // no CRC32C recorded: each blob is checked against its name, an HMAC-SHA256
            Path target = tmp.resolve("restart");
            assertEquals("local", RestartSource.materialise(pipeline, cache, ref, target));
            assertArrayEquals(big, Files.readAllBytes(target.resolve("state.bin")));
            try (StagingPipeline wrong = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC(),
                    Optional.of(other))) {
                var e = Assertions.assertThrows(
                        EncryptionKeyException.class,
                        () -> RestartSource.materialise(wrong, cache, ref, target));
                assertEquals("generation 1 of job job is encrypted with key id " + key.id()
                        + "; the configured key has id "
                        + other.id() + " (a key of before a rotation goes in encryption.previous-key-files)",
                        e.getMessage());
            }
            // After a rotation to the other key, with the old one kept as a previous key, the cached copy of the
            // generation sealed before still restores locally, checked by the names of its own key.
            try (StagingPipeline rotated = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC(),
                    Optional.of(other.withPrevious(List.of(key))))) {
                Path again = tmp.resolve("restart-rotated");
                assertEquals("local", RestartSource.materialise(rotated, cache, ref, again));
                assertArrayEquals(big, Files.readAllBytes(again.resolve("state.bin")));
            }
            try (RandomAccessFile f = new RandomAccessFile(image.resolve("state.bin").toFile(), "rw")) {
                f.seek(100_000);
                int b = f.read();
                f.seek(100_000);
                f.write(b ^ 1);
            }
            assertEquals("remote", RestartSource.materialise(pipeline, cache, ref, target));
            assertArrayEquals(big, Files.readAllBytes(target.resolve("state.bin")));
        }
    }

    @Test
    void aCheckRecordedForAnotherManifestOrCutShortIsNotUsedAndTheCopyIsCheckedBySha256() throws Exception {
        LocalCache cache = Staging.localCache(tmp.resolve("cache"));
        ImageRef ref = new ImageRef("job", 2, 0);
        Path image = cache.imageDir(ref);
        Files.createDirectories(image);
        Files.writeString(image.resolve("state"), "first");
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC())) {
            cache.markStaged(ref, pipeline.push(image, ref, Progress.NONE));
            Files.writeString(image.resolve("state"), "other"); // same size; pushed again: the store's manifest changes
            pipeline.push(image, ref, Progress.NONE);
            pipeline.repository().commitSnapshot("job", 2, 1); // committed as it is now
            Path target = tmp.resolve("restart");
            assertEquals("local", RestartSource.materialise(pipeline, cache, ref, target), "verified by SHA-256");
            assertEquals("other", Files.readString(target.resolve("state")));

            Path marker = image.getParent().resolve(".staged-0");
            cache.markStaged(ref, pipeline.push(image, ref, Progress.NONE));
            byte[] whole = Files.readAllBytes(marker);
            Files.write(marker, Arrays.copyOf(whole, whole.length - 2)); // a torn record
            assertEquals(Optional.empty(), cache.stagedCheck(ref));
            assertEquals("local", RestartSource.materialise(pipeline, cache, ref, target));
            assertEquals("other", Files.readString(target.resolve("state")));
        }
    }

    @Test
    void noTierIsUsedWhenTheManifestOnTheStoreIsNotTheOneTheCommitMarkerNames() throws Exception {
        LocalCache cache = Staging.localCache(tmp.resolve("cache"));
        ImageRef ref = new ImageRef("job", 3, 0);
        Path image = cache.imageDir(ref);
        Files.createDirectories(image);
        Files.writeString(image.resolve("state"), "committed");
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC())) {
            pipeline.push(image, ref, Progress.NONE);
            pipeline.repository().commitSnapshot("job", 3, 1);
            // After the commit, the image in the cache and its manifest on the store are replaced together (a
            // late or forged push): cache and store agree with each other, not with the commit.
            Files.writeString(image.resolve("state"), "swapped!!");
            cache.markStaged(ref, pipeline.push(image, ref, Progress.NONE));
            Path target = tmp.resolve("restart");
            ImageCorruptException e = Assertions.assertThrows(
                    ImageCorruptException.class,
                    () -> RestartSource.materialise(pipeline, cache, ref, target));
            Assertions.assertTrue(e.getMessage()
                    .contains("is not the one its snapshot committed"),
                    e.getMessage());
            Assertions.assertFalse(Files.exists(target.resolve("state")));
            Assertions.assertThrows(ImageCorruptException.class,
                    () -> RestartSource.tier(pipeline, cache, ref, List.of()));
        }
    }
}

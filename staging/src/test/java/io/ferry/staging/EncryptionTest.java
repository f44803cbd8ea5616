package io.ferry.staging;

import io.ferry.model.ChunkId;
import io.ferry.model.Entry;
import io.ferry.model.ImageRef;
import io.ferry.model.Manifest;
import io.ferry.staging.crypt.EncryptionKeyException;
import io.ferry.staging.crypt.Keys;
import io.ferry.staging.packs.PackKeys;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Encryption at rest on a real POSIX store: round trips, what the store shows, keys, damage. */
class EncryptionTest {
    static final Keys A = Keys.parse("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", "test key A");
    static final Keys B = Keys.parse("ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100", "test key B");
    static final String MARKER = "FERRY-PLAINTEXT-MARKER-7c1e";
    @TempDir
    Path tmp;

    private static StagingPipeline pipeline(Store store, Optional<Keys> keys) {
        return Staging.pipeline(store, StagingConfig.from(PackStoreTestBase.PACKS), Clock.systemUTC(), keys);
    }

    private Store store(String name) throws IOException {
        return Stores.open(tmp.resolve(name).toUri(), Map.of());
    }

    /**
     * An image whose text file repeats a marker (it compresses, so the zstd path is taken) beside
     * random and zero bytes.
     */
    private Path image(String name) throws IOException {
        Path dir = Files.createDirectories(tmp.resolve(name));
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 20_000; i++) {
            text.append(MARKER).append(' ').append(i).append('\n');
        }
        Fixture.write(dir.resolve("state/text.log"), text.toString().getBytes(StandardCharsets.US_ASCII));
        Fixture.write(dir.resolve("state/random.bin"), Fixture.randomBytes(700_000, 5));
        byte[] raw = Fixture.randomBytes(300_000, 6);
        // incompressible: raw path
        System.arraycopy(MARKER.getBytes(StandardCharsets.US_ASCII), 0, raw, 1000, MARKER.length());
        Fixture.write(dir.resolve("state/raw.bin"), raw);
        Fixture.write(dir.resolve("state/zeros.bin"), new byte[200_000]);
        Files.createSymbolicLink(dir.resolve("latest"), Path.of("state"));
        return dir;
    }

    private static List<Path> objects(Path storeDir) throws IOException {
        try (Stream<Path> s = Files.walk(storeDir)) {
            return s.filter(Files::isRegularFile).toList();
        }
    }

    private static Set<ChunkId> blobIds(Manifest m) {
        Set<ChunkId> out = new HashSet<>();
        for (Entry e : m.entries()) {
            if (e instanceof Entry.RegularFile f) {
                f.chunks().stream().filter(c -> !c.isZero()).forEach(out::add);
            }
        }
        return out;
    }

    @Test
    void anEncryptedImageRoundTripsByteForByteAndNoStoredObjectHoldsItsPlaintext() throws Exception {
        Path img = image("img");
        try (Store store = store("store"); StagingPipeline p = pipeline(store, Optional.of(A))) {
            p.push(img, new ImageRef("job", 1, 0), Progress.NONE);
            p.repository().commitSnapshot("job", 1, 1);
            p.pull(new ImageRef("job", 1, 0), tmp.resolve("out"), Progress.NONE);
            Fixture.assertSameTree(img, tmp.resolve("out"));
            Manifest m = p.repository().readManifest(new ImageRef("job", 1, 0)).manifest();
            assertEquals(A.id(), m.keyId());
            assertTrue(p.verify(Progress.NONE).ok());
        }
        byte[] marker = MARKER.getBytes(StandardCharsets.US_ASCII);
        List<Path> stored = objects(tmp.resolve("store"));
        assertTrue(stored.stream().anyMatch(f -> f.toString().contains("/packs/")), stored.toString());
        for (Path f : stored) {
            byte[] bytes = Files.readAllBytes(f);
            assertFalse(contains(bytes, marker), f + " holds the plaintext marker");
            assertFalse(contains(bytes, "FRYC".getBytes(StandardCharsets.US_ASCII)), f + " holds a clear record");
        }
        String manifest = Files.readString(tmp.resolve("store/ferry/v1/jobs/job/1/0.manifest"));
        assertTrue(manifest.contains("\"version\" : 4")
                && manifest.contains("\"keyId\" : \"" + A.id() + "\""), manifest);
    }

    private static boolean contains(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    @Test
    void equalPlaintextsGetUnrelatedNamesUnderOtherKeysAndTheSameKeyDeduplicates() throws Exception {
        Path img = image("img");
        Set<ChunkId> clear;
        Set<ChunkId> underA;
        Set<ChunkId> underB;
        try (Store s = store("clear"); StagingPipeline p = pipeline(s, Optional.empty())) {
            p.push(img, new ImageRef("job", 1, 0), Progress.NONE);
            clear = blobIds(p.repository().readManifest(new ImageRef("job", 1, 0)).manifest());
        }
        try (Store s = store("b"); StagingPipeline p = pipeline(s, Optional.of(B))) {
            p.push(img, new ImageRef("job", 1, 0), Progress.NONE);
            underB = blobIds(p.repository().readManifest(new ImageRef("job", 1, 0)).manifest());
        }
        try (Store s = store("a"); StagingPipeline p = pipeline(s, Optional.of(A))) {
            PushResult first = p.push(img, new ImageRef("job", 1, 0), Progress.NONE);
            underA = blobIds(p.repository().readManifest(new ImageRef("job", 1, 0)).manifest());
            PushResult second = p.push(img, new ImageRef("job", 2, 0), Progress.NONE);
            assertEquals(second.chunks(), second.knownChunks() + second.zeroChunks(),
                    "the same key finds every blob again");
            assertTrue(second.storedBytes() < first.storedBytes() / 20,
                    "nothing new is stored: " + second.storedBytes());
            // A pipeline opened afresh (no node cache) reads the earlier manifest and deduplicates too.
            try (StagingPipeline again = pipeline(s, Optional.of(A))) {
                PushResult third = again.push(img, new ImageRef("job", 3, 0), Progress.NONE);
                assertEquals(third.chunks(), third.knownChunks() + third.zeroChunks());
            }
        }
        assertEquals(clear.size(), underA.size());
        assertEquals(clear.size(), underB.size());
        Set<ChunkId> both = new HashSet<>(underA);
        both.retainAll(underB);
        assertTrue(both.isEmpty(), "equal plaintexts show as equal names under two keys: " + both);
        both = new HashSet<>(underA);
        both.retainAll(clear);
        assertTrue(both.isEmpty(), "an encrypted name is the SHA-256 of the plaintext: " + both);
    }

    @Test
    void aWrongOrMissingKeyFailsInOneLineAndLosesNothing() throws Exception {
        Path img = image("img");
        ImageRef ref = new ImageRef("job", 3, 0);
        try (Store store = store("store")) {
            try (StagingPipeline p = pipeline(store, Optional.of(A))) {
                p.push(img, ref, Progress.NONE);
                p.repository().commitSnapshot("job", 3, 1);
            }
            try (StagingPipeline wrong = pipeline(store, Optional.of(B))) {
                EncryptionKeyException e = assertThrows(EncryptionKeyException.class,
                        () -> wrong.pull(ref, tmp.resolve("out-b"), Progress.NONE));
                assertEquals("generation 3 of job job is encrypted with key id " + A.id()
                        + "; the configured key has id "
                        + B.id() + " (a key of before a rotation goes in encryption.previous-key-files)",
                        e.getMessage());
                EncryptionKeyException v = assertThrows(EncryptionKeyException.class,
                        () -> wrong.verify(Progress.NONE));
                assertFalse(v.getMessage().contains("\n"), v.getMessage());
                assertTrue(v.getMessage()
                        .matches("cannot verify the store: ferry/v2/packs/[0-9a-f]{2}/[0-9a-f]{64} record at \\d+"
                        + " \\(blob [0-9a-f]{64}\\) is encrypted with key id " + A.id()
                        + "; the configured key has id " + B.id()
                        + " \\(a key of before a rotation goes in encryption.previous-key-files\\)"),
                        v.getMessage());
                // Even handed a report that blames the pack, a repair with the wrong key leaves it alone.
                String pack = store.list(PackKeys.PACKS).get(0);
                VerifyReport blamed = new VerifyReport(1, 1, 1, 1,
                        List.of(new VerifyReport.Problem(VerifyReport.Kind.CORRUPT_CHUNK, pack, "test")));
                List<ChunkQuarantine.Outcome> done = PackQuarantine.repair(wrong.repository(), blamed);
                assertFalse(done.get(0).quarantined(), done.toString());
                // A push under the other key deduplicates nothing against it, and both images pull under their keys.
                PushResult other = wrong.push(img, new ImageRef("job", 4, 0), Progress.NONE);
                assertEquals(0, other.knownChunks());
            }
            try (StagingPipeline none = pipeline(store, Optional.empty())) {
                EncryptionKeyException e = assertThrows(EncryptionKeyException.class,
                        () -> none.pull(ref, tmp.resolve("out-none"), Progress.NONE));
                assertEquals("generation 3 of job job is encrypted with key id " + A.id()
                        + "; no key is configured: set encryption.key-file or FERRY_ENCRYPTION_KEY", e.getMessage());
                assertThrows(EncryptionKeyException.class, () -> none.verify(Progress.NONE));
            }
            assertFalse(Files.exists(tmp.resolve("out-b")) || Files.exists(tmp.resolve("out-none")));
            assertTrue(store.list(PackQuarantine.QUARANTINE).isEmpty());
            try (StagingPipeline right = pipeline(store, Optional.of(A))) {
                right.pull(ref, tmp.resolve("out-a"), Progress.NONE);
                Fixture.assertSameTree(img, tmp.resolve("out-a"));
            }
        }
    }

    @Test
    void aFlippedBitInASealedRecordIsDamageThatVerifyFindsAndRepairQuarantines() throws Exception {
        Path img = image("img");
        ImageRef ref = new ImageRef("job", 1, 0);
        try (Store store = store("store"); StagingPipeline p = pipeline(store, Optional.of(A))) {
            p.push(img, ref, Progress.NONE);
            p.repository().commitSnapshot("job", 1, 1);
            String pack = store.list(PackKeys.PACKS).get(0);
            byte[] bytes = store.get(pack);
            bytes[8 + 40] ^= 0x04; // inside the first record's ciphertext (8-byte pack header, 28-byte sealed header)
            store.put(pack, ByteBuffer.wrap(bytes));
            ImageCorruptException pulled = assertThrows(ImageCorruptException.class,
                    () -> p.pull(ref, tmp.resolve("out"), Progress.NONE));
            assertTrue(pulled.getMessage().contains("AES-GCM tag mismatch"), pulled.getMessage());
            VerifyReport report = p.verify(Progress.NONE);
            assertTrue(report.problems().stream().anyMatch(x -> x.kind() == VerifyReport.Kind.CORRUPT_CHUNK
                    && x.key().equals(pack) && x.detail().contains("AES-GCM tag mismatch")),
                    report.problems().toString());
            List<ChunkQuarantine.Outcome> done = PackQuarantine.repair(p.repository(), report);
            assertTrue(done.get(0).quarantined(), done.toString());
            assertFalse(store.exists(pack));
            // The next push writes the damaged blob again; a heal maps the old image's record to that copy.
            p.push(img, new ImageRef("job", 2, 0), Progress.NONE);
            PackHeal.run(p.repository());
            p.pull(ref, tmp.resolve("healed"), Progress.NONE);
            Fixture.assertSameTree(img, tmp.resolve("healed"));
        }
    }

    @Test
    void gcRepacksSealedRecordsByteForByteAndTheImagesStillOpen() throws Exception {
        try (Store store = store("store"); StagingPipeline p = pipeline(store, Optional.of(A))) {
            Repository repo = p.repository();
            byte[] kept = Fixture.randomBytes(512 << 10, 1);
            Path g0 = Files.createDirectories(tmp.resolve("g0"));
            Fixture.write(g0.resolve("a.bin"), kept);
            Fixture.write(g0.resolve("b.bin"), Fixture.randomBytes(3 << 20, 2));
            p.push(g0, new ImageRef("job", 0, 0), Progress.NONE);
            repo.commitSnapshot("job", 0, 1);
            Path g1 = Files.createDirectories(tmp.resolve("g1"));
            Fixture.write(g1.resolve("a.bin"), kept);
            Fixture.write(g1.resolve("b.bin"), Fixture.randomBytes(3 << 20, 3));
            p.push(g1, new ImageRef("job", 1, 0), Progress.NONE);
            repo.commitSnapshot("job", 1, 1);
            StoreRetention.prune(repo, "job", 1, 0, false); // generation 0's b.bin is dead, its a.bin lives on in 1
            Instant t0 = Instant.parse("2026-11-24T10:00:00Z");
            StoreGc.Collected first = StoreGc.run(repo, Duration.ofHours(1),
                    Clock.fixed(t0, ZoneOffset.UTC), false);
            assertTrue(first.repacked() >= 1, first.toString());
            assertTrue(p.verify(Progress.NONE).ok());
            p.pull(new ImageRef("job", 1, 0), tmp.resolve("out"), Progress.NONE);
            Fixture.assertSameTree(g1, tmp.resolve("out"));
        }
    }

    @Test
    void theChunkLayoutAndPlaintextFileDigestsRefuseEncryption() throws Exception {
        try (Store store = store("store")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Staging.pipeline(store,
                    StagingConfig.from(Map.of("staging.layout", "chunks")), Clock.systemUTC(), Optional.of(A)));
            assertTrue(e.getMessage().contains("staging.layout=packs"), e.getMessage());
            IllegalArgumentException digest = assertThrows(IllegalArgumentException.class, () -> Staging.pipeline(store,
                    StagingConfig.from(Map.of("staging.file-sha256", "true")), Clock.systemUTC(), Optional.of(A)));
            assertTrue(digest.getMessage()
                    .startsWith("staging.file-sha256=true would write each file's plaintext SHA-256"),
                    digest.getMessage());
        }
    }

    @Test
    void anOpenedStoreTakesTheKeyFromTheEnvironmentOrAFile() throws Exception {
        Path keyFile = tmp.resolve("key");
        Files.writeString(keyFile, "00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff\n");
        Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("rw-------"));
        String uri = tmp.resolve("store").toUri().toString();
        try (OpenedStore o = OpenedStore.open(uri, Map.of("encryption.key-file", keyFile.toString()), Map.of())) {
            assertEquals(A.id(), o.pipeline().repository().blobs().keyId());
        }
        try (OpenedStore o = OpenedStore.open(uri, Map.of(), Map.of(Keys.VARIABLE,
                "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"))) {
            assertEquals(A.id(), o.pipeline().repository().blobs().keyId());
        }
        try (OpenedStore o = OpenedStore.open(uri, Map.of(), Map.of())) {
            assertEquals("", o.pipeline().repository().blobs().keyId());
        }
    }

    /**
     * A key rotation: the new key current, the old one in encryption.previous-key-files (read
     * from real key files, as a site configures them). Pushes seal with the new key; what the old
     * one sealed still pulls and verifies; without the old key, verify names it and says where it goes.
     */
    @Test
    void aRotatedKeyOpensWhatThePreviousKeySealedAndSealsOnlyWithTheNewOne() throws Exception {
        Path img = image("img");
        Path keyA = Files.writeString(tmp.resolve("a.key"),
                "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n");
        Path keyB = Files.writeString(tmp.resolve("b.key"),
                "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100\n");
        for (Path k : List.of(keyA, keyB)) { // key files are read only when only their owner may read them
            Files.setPosixFilePermissions(k, PosixFilePermissions.fromString("rw-------"));
        }
        Keys ring = Keys.resolveWithPrevious(Map.of("encryption.key-file", keyB.toString(),
                "encryption.previous-key-files", keyA + ", " + keyB), Map.of()).orElseThrow();
        assertEquals(B.id(), ring.id());
        assertEquals(List.of(A.id()), ring.previous().stream().map(Keys::id).toList(),
                "the current key is not its own previous");
        try (Store store = store("store")) {
            try (StagingPipeline p = pipeline(store, Optional.of(A))) {
                p.push(img, new ImageRef("job", 1, 0), Progress.NONE);
                p.repository().commitSnapshot("job", 1, 1);
            }
            try (StagingPipeline p = pipeline(store, Optional.of(ring))) {
                PushResult after = p.push(img, new ImageRef("job", 2, 0), Progress.NONE);
                assertEquals(0, after.knownChunks(),
                        "blobs under the new key have new names: nothing is shared with the old");
                p.repository().commitSnapshot("job", 2, 1);
                assertEquals(B.id(), p.repository().readManifest(new ImageRef("job", 2, 0)).manifest().keyId());
                for (long g = 1; g <= 2; g++) {
                    p.pull(new ImageRef("job", g, 0), tmp.resolve("out-" + g), Progress.NONE);
                    Fixture.assertSameTree(img, tmp.resolve("out-" + g));
                }
                VerifyReport v = p.verify(Progress.NONE);
                assertTrue(v.ok(), v.problems().toString());
            }
            try (StagingPipeline newOnly = pipeline(store, Optional.of(B))) {
                EncryptionKeyException e = assertThrows(EncryptionKeyException.class,
                        () -> newOnly.verify(Progress.NONE));
                assertTrue(e.getMessage().contains("key id " + A.id())
                        && e.getMessage().contains("encryption.previous-key-files"),
                        e.getMessage());
                newOnly.pull(new ImageRef("job", 2, 0), tmp.resolve("out-new"), Progress.NONE);
                Fixture.assertSameTree(img, tmp.resolve("out-new"));
            }
        }
        IllegalArgumentException noCurrent = assertThrows(IllegalArgumentException.class,
                () -> Keys.resolveWithPrevious( Map.of("encryption.previous-key-files", keyA.toString()), Map.of()));
        assertTrue(noCurrent.getMessage().startsWith("encryption.previous-key-files needs a current key"),
                noCurrent.getMessage());
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class, () -> Keys.resolveWithPrevious(
                Map.of("encryption.key-file", keyB.toString(), "encryption.previous-key-files",
                        tmp.resolve("gone.key").toString()),
                Map.of()));
        assertEquals("encryption.previous-key-files=" + tmp.resolve("gone.key") + ": cannot read the key file"
                + " (NoSuchFileException)", missing.getMessage());
    }
}

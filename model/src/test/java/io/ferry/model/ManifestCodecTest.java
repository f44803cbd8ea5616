package io.ferry.model;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ManifestCodecTest {
    private static final String SHA = "ab".repeat(32);
    private static final ChunkId C1 = ChunkId.parse("01".repeat(32));

    private static Manifest sample() {
        return new Manifest(new ImageRef("job", 3, 1), 4096, List.of(
                new Entry.Directory("d", 0750),
                new Entry.RegularFile("d/state.bin", 0640, 4097 + 4096, SHA, List.of(C1, ChunkId.ZERO, C1)),
                new Entry.RegularFile("empty", 0600, 0, SHA, List.of()),
                new Entry.Symlink("latest", "d/state.bin")));
    }

    /** A pack-layout image: blobs of varying lengths in two packs, an all-zero blob, one blob twice. */
    static Manifest packed() {
        ChunkId b2 = ChunkId.parse("02".repeat(32));
        return new Manifest(new ImageRef("job", 4, 0), 262144, List.of(
                new Entry.Directory("d", 0750),
                new Entry.RegularFile("d/state.bin", 0640, 70_000 + 5_000 + 70_000, Entry.RegularFile.NOT_RECORDED,
                        List.of(C1, ChunkId.ZERO, C1),
                        List.of(new BlobPlace(70_000, 0, 8, 31_000), BlobPlace.zero(5_000),
                                new BlobPlace(70_000, 0, 8, 31_000))),
                new Entry.RegularFile("b", 0600, 17, SHA, List.of(b2), List.of(new BlobPlace(17, 1, 8, 37))),
                new Entry.RegularFile("empty", 0600, 0, Entry.RegularFile.NOT_RECORDED, List.of(), List.of())),
                List.of("aa".repeat(32), "bb".repeat(32)));
    }

    @Test
    void packLayoutManifestRoundTripsAsVersionThree() throws Exception {
        Manifest m = packed();
        String json = new String(ManifestCodec.encode(m), StandardCharsets.UTF_8);
        assertTrue(json.contains("\"version\" : 3") && json.contains("\"packs\"") && json.contains("\"blobs\""), json);
        assertEquals(m, ManifestCodec.decodeManifest(ManifestCodec.encode(m), "test"));
        assertTrue(m.inPacks());
        assertEquals(List.of(0L, 70_000L, 75_000L, 145_000L),
                Arrays.stream(((Entry.RegularFile) m.entries().get(1)).offsets(m.chunkSize()))
                .boxed().toList());
    }

    @Test
    void packLayoutManifestsThatDoNotAddUpOrPointNowhereAreMalformed() {
        String json = new String(ManifestCodec.encode(packed()), StandardCharsets.UTF_8);
        assertMalformed(json.replace("\"size\" : 145000", "\"size\" : 145001"), "add up to 145000");
        assertMalformed(json.replace("[ \"" + "02".repeat(32) + "\", 17, 1,", "[ \"" + "02".repeat(32) + "\", 17, 2,"),
                "names pack 2 of 2");
        assertMalformed(json.replace("[ \"zero\", 5000 ]", "[ \"zero\", 5000, 0, 8, 9 ]"),
                "all-zero blob has no pack record");
        assertMalformed(json.replace("\"bb", "\"../"), "packs");
        assertMalformed(json.replace("[ \"" + "02".repeat(32) + "\", 17, 1, 8, 37 ]",
                "[ \"" + "02".repeat(32) + "\", 17 ]"), "needs its pack");
        assertMalformed(json.replace("\"chunkSize\" : 262144", "\"chunkSize\" : 65536"),
                "exceeds the largest blob size");
    }

    @Test
    void manifestRoundTrips() throws Exception {
        Manifest m = sample();
        assertEquals(m, ManifestCodec.decodeManifest(ManifestCodec.encode(m), "test"));
        assertEquals(8193, m.rawBytes());
    }

    @Test
    void markerRoundTrips() throws Exception {
        SnapshotMarker s = new SnapshotMarker("job", 3, 2, Map.of(0, SHA, 1, SHA),
                Instant.parse("2026-11-22T10:00:00Z"));
        assertEquals(s, ManifestCodec.decodeMarker(ManifestCodec.encode(s), "test"));
    }

    @Test
    void markerIsStreamedByteForByteAsThePrettyPrintedTreeWas() throws Exception {
        Map<Integer, String> digests = new HashMap<>();
        for (int r = 0; r < 12; r++) { // 10 and 11 sort after 9 numerically, not as text
            digests.put(r, Integer.toHexString(r).repeat(64).substring(0, 64));
        }
        SnapshotMarker s = new SnapshotMarker("job", 3, 12, digests, Instant.parse("2026-11-22T10:00:00Z"));
        ObjectMapper json = new ObjectMapper();
        ObjectNode root = json.createObjectNode();
        root.put("format", ManifestCodec.MARKER_FORMAT).put("version", ManifestCodec.VERSION);
        root.put("job", "job").put("generation", 3L).put("ranks", 12);
        ObjectNode m = root.putObject("manifestSha256");
        for (int r = 0; r < 12; r++) {
            m.put(Integer.toString(r), digests.get(r));
        }
        root.put("committedAt", "2026-11-22T10:00:00Z");
        assertEquals(json.writerWithDefaultPrettyPrinter().writeValueAsString(root),
                new String(ManifestCodec.encode(s), StandardCharsets.UTF_8));
    }

    @Test
    void notJsonIsMalformed() {
        MalformedManifestException e = assertThrows(MalformedManifestException.class,
                () -> ManifestCodec.decodeManifest("{\"format\":".getBytes(StandardCharsets.UTF_8), "j/1/0"));
        assertTrue(e.getMessage().contains("j/1/0"), e.getMessage());
    }

    @Test
    void wrongFormatOrVersionIsMalformed() {
        String json = new String(ManifestCodec.encode(sample()), StandardCharsets.UTF_8);
        assertMalformed(json.replace("ferry-image-manifest", "something-else"), "format");
        assertMalformed(json.replace("\"version\" : 1", "\"version\" : 5"),
                "unsupported version 5 (this Ferry reads 1 to 4)");
        assertMalformed(json.replace("\"version\" : 1", "\"version\" : 4"), "field 'keyId' must be a string");
    }

    @Test
    void anEncryptedImageIsVersionFourWithItsKeyIdAndAClearOneIsUnchanged() throws Exception {
        ImageRef ref = new ImageRef("sim", 5, 0);
        String pack = "ab".repeat(32);
        Entry.RegularFile f = new Entry.RegularFile("state.bin", 0644, 5000, Entry.RegularFile.NOT_RECORDED,
                List.of(ChunkId.parse("cd".repeat(32))), List.of(new BlobPlace(5000, 0, 8, 300)));
        Manifest clear = new Manifest(ref, 262144, List.of(f), List.of(pack));
        String clearJson = new String(ManifestCodec.encode(clear), StandardCharsets.UTF_8);
        assertTrue(clearJson.contains("\"version\" : 3") && !clearJson.contains("keyId"), clearJson);
        Manifest sealed = new Manifest(ref, 262144, List.of(f), List.of(pack), "1a2b3c4d5e6f7081");
        byte[] bytes = ManifestCodec.encode(sealed);
        String json = new String(bytes, StandardCharsets.UTF_8);
        assertTrue(json.contains("\"version\" : 4") && json.contains("\"keyId\" : \"1a2b3c4d5e6f7081\""), json);
        assertEquals(sealed, ManifestCodec.decodeManifest(bytes, "src"));
        assertEquals(clearJson, json.replace("\"version\" : 4", "\"version\" : 3")
                .replaceAll(",\\s*\"keyId\" : \"1a2b3c4d5e6f7081\"", ""), "version 4 is version 3 and its key id");
        assertMalformed(json.replace("1a2b3c4d5e6f7081", "1A2B"), "key id must be empty or 16 lower-case hex digits");
        assertThrows(IllegalArgumentException.class, () -> new Manifest(ref, 262144, List.of(
                new Entry.RegularFile("a", 0644, 10, Entry.RegularFile.NOT_RECORDED,
                        List.of(ChunkId.parse("cd".repeat(32))))),
                List.of(), "1a2b3c4d5e6f7081"), "an encrypted image is in packs");
    }

    @Test
    void versionTwoLeavesTheWholeFileDigestOutAndVersionOneStillNeedsIt() throws Exception {
        Manifest v2 = new Manifest(new ImageRef("job", 3, 1), 4096, List.of(
                new Entry.RegularFile("a", 0640, 4097, Entry.RegularFile.NOT_RECORDED, List.of(C1, ChunkId.ZERO)),
                new Entry.RegularFile("b", 0640, 1, SHA, List.of(C1))));
        String json = new String(ManifestCodec.encode(v2), StandardCharsets.UTF_8);
        assertTrue(json.contains("\"version\" : 2"), json);
        assertEquals(1, json.split("\"sha256\"", -1).length - 1, "only b's digest: " + json);
        assertEquals(v2, ManifestCodec.decodeManifest(json.getBytes(StandardCharsets.UTF_8), "test"));
        assertTrue(new String(ManifestCodec.encode(sample()), StandardCharsets.UTF_8).contains("\"version\" : 1"),
                "every file with its digest: written as version 1, as older Ferry reads");

        String v1 = json.replace("\"version\" : 2", "\"version\" : 1");
        assertMalformed(v1, "field 'sha256' must be a string");
        assertMalformed(v1.replace("\"size\" : 4097", "\"size\" : 4097, \"sha256\" : \"\""),
                "sha256 must be 64 lower-case hex");
        assertMalformed(json.replace(SHA, "not-hex"), "sha256 must be 64 lower-case hex");
    }

    @Test
    void missingAndMistypedFieldsAreNamed() {
        String json = new String(ManifestCodec.encode(sample()), StandardCharsets.UTF_8);
        assertMalformed(json.replace("\"chunkSize\"", "\"chunkSizeX\""), "chunkSize");
        assertMalformed(json.replace("\"size\" : 8193", "\"size\" : \"big\""), "size");
        assertMalformed(json.replace("\"mode\" : \"0640\"", "\"mode\" : \"rw\""), "mode");
    }

    @Test
    void chunkListThatDoesNotFitTheSizeIsMalformed() {
        String json = new String(ManifestCodec.encode(sample()), StandardCharsets.UTF_8);
        assertMalformed(json.replace("\"size\" : 8193", "\"size\" : 100000"), "needs 25 chunks, lists 3");
    }

    @Test
    void traversalAndBadChunkIdsAreMalformed() {
        String json = new String(ManifestCodec.encode(sample()), StandardCharsets.UTF_8);
        assertMalformed(json.replace("\"d/state.bin\"", "\"../../etc/passwd\""), "unsafe image path");
        assertMalformed(json.replace("\"zero\"", "\"xyz\""), "chunk id");
    }

    @Test
    void pathsUnderASymlinkAreMalformed() {
        String json = new String(ManifestCodec.encode(sample()), StandardCharsets.UTF_8);
        assertMalformed(json.replace("\"empty\"", "\"latest/x\""), "lies under a file or symlink");
    }

    @Test
    void markerWithMissingRankIsMalformed() {
        String json = new String(ManifestCodec.encode(new SnapshotMarker("job", 3, 1, Map.of(0, SHA), Instant.EPOCH)),
                StandardCharsets.UTF_8).replace("\"ranks\" : 1", "\"ranks\" : 2");
        assertThrows(MalformedManifestException.class,
                () -> ManifestCodec.decodeMarker(json.getBytes(StandardCharsets.UTF_8), "m"));
    }

    @Test
    void chunkIdsCompareByValue() {
        assertEquals(ChunkId.parse("01".repeat(32)), C1);
        assertEquals(C1.hashCode(), ChunkId.of(C1.bytes()).hashCode());
        assertNotEquals(ChunkId.ZERO, ChunkId.of(new byte[32]));
        assertEquals("zero", ChunkId.ZERO.toString());
    }

    private static void assertMalformed(String json, String expected) {
        MalformedManifestException e = assertThrows(MalformedManifestException.class,
                () -> ManifestCodec.decodeManifest(json.getBytes(StandardCharsets.UTF_8), "src"));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}

package io.ferry.model;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ShardedMarkerTest {
    private static final String A = "ab".repeat(32);
    private static final String B = "cd".repeat(32);
    private static final Instant AT = Instant.parse("2026-11-23T10:00:00Z");

    @Test
    void headAndShardRoundTripAndTheHeadIsReadAsACommitMarker() throws Exception {
        ShardedMarker.Head h = new ShardedMarker.Head("job", 4, 5, 2, List.of(A, B, A), AT);
        CommitMarker read = ManifestCodec.decodeCommitMarker(ShardedMarker.encode(h), "test");
        assertEquals(h, read);
        assertEquals(2, h.shardOf(4));
        assertEquals(4, h.firstRank(2));
        assertEquals(1, h.ranksIn(2), "the last shard holds what is left");
        assertEquals(2, h.ranksIn(0));
        assertThrows(IllegalArgumentException.class, () -> h.shardOf(5));

        ShardedMarker.Shard s = new ShardedMarker.Shard("job", 4, 2, List.of(A, B));
        assertEquals(s, ShardedMarker.decodeShard(ShardedMarker.encode(s), "test"));
    }

    @Test
    void aVersionOneMarkerIsStillReadAsACommitMarker() throws Exception {
        SnapshotMarker s = new SnapshotMarker("job", 3, 2, Map.of(0, A, 1, B), AT);
        assertEquals(s, ManifestCodec.decodeCommitMarker(ManifestCodec.encode(s), "test"));
    }

    @Test
    void theOneObjectDecoderSaysASharedMarkerNeedsItsShards() {
        byte[] head = ShardedMarker.encode(new ShardedMarker.Head("job", 4, 3, 2, List.of(A, B), AT));
        MalformedManifestException e = assertThrows(MalformedManifestException.class,
                () -> ManifestCodec.decodeMarker(head, "k"));
        assertTrue(e.getMessage().contains("is sharded"), e.getMessage());
    }

    @Test
    void malformedHeadsAndShardsNameTheProblem() {
        String head = new String(ShardedMarker.encode(new ShardedMarker.Head("job", 4, 3, 2, List.of(A, B), AT)),
                StandardCharsets.UTF_8);
        assertMalformedHead(head.replace("\"version\" : 2", "\"version\" : 3"),
                "unsupported version 3 (this Ferry reads 1 to 2)");
        assertMalformedHead(head.replace("\"ranks\" : 3", "\"ranks\" : 5"), "lists 2 shards for 5 ranks");
        assertMalformedHead(head.replace(B, "zz"), "shard 1 has no valid digest");
        assertMalformedHead(head.replace("\"shardRanks\" : 2", "\"shardRanks\" : 0"), "must be >= 1");
        assertMalformedHead(head.replace("\"job\" : \"job\"", "\"job\" : \"../x\""), "job");

        String shard = new String(ShardedMarker.encode(new ShardedMarker.Shard("job", 4, 2, List.of(A, B))),
                StandardCharsets.UTF_8);
        assertMalformedShard(shard.replace(B, "nope"), "rank 3 has no valid manifest digest");
        assertMalformedShard(shard.replace("\"firstRank\" : 2", "\"firstRank\" : -1"), "firstRank must be >= 0");
        assertMalformedShard(shard.replace("ferry-snapshot-digests", "ferry-snapshot"), "field 'format'");
        assertMalformedShard("[]", "not a JSON object");
    }

    private static void assertMalformedHead(String json, String expected) {
        MalformedManifestException e = assertThrows(MalformedManifestException.class,
                () -> ManifestCodec.decodeCommitMarker(json.getBytes(StandardCharsets.UTF_8), "jobs/job/4/SNAPSHOT"));
        assertTrue(e.getMessage().contains(expected) && e.getMessage().contains("jobs/job/4/SNAPSHOT"), e.getMessage());
    }

    private static void assertMalformedShard(String json, String expected) {
        MalformedManifestException e = assertThrows(MalformedManifestException.class,
                () -> ShardedMarker.decodeShard(json.getBytes(StandardCharsets.UTF_8), "jobs/job/4/SNAPSHOT.1"));
        assertTrue(e.getMessage().contains(expected) && e.getMessage().contains("SNAPSHOT.1"), e.getMessage());
    }
}

package io.ferry.model;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;

/**
 * The commit marker of a snapshot of many ranks, in shards (docs/formats/manifest.md,
 * "Sharded marker"). The {@code SNAPSHOT} object ({@link Head}, version 2) holds the SHA-256 of
 * each digest shard; shard {@code i} ({@code SNAPSHOT.i}, a {@link Shard}) lists the manifest
 * digests of ranks {@code i*shardRanks} up to {@code (i+1)*shardRanks - 1}. The head is still
 * the one object written last, so committing stays one atomic put; a shard swapped after the
 * commit no longer matches the head. Reading one rank's digest costs the head and one shard:
 * 70 KB and 69 KB at a million ranks with 1,024 ranks per shard, where the one-object marker
 * was 87 MB.
 */
public final class ShardedMarker {
    public static final String SHARD_FORMAT = "ferry-snapshot-digests";
    public static final int HEAD_VERSION = 2;

    private ShardedMarker() {}

    /** Version 2 of the {@code SNAPSHOT} object: the shards' digests, not the ranks'. */
    public record Head(String job, long generation, int ranks, int shardRanks, List<String> shardSha256,
                       Instant committedAt) implements CommitMarker {
        public Head {
            Names.requireJob(job);
            Names.requireGeneration(generation);
            if (ranks < 1 || shardRanks < 1) {
                throw new IllegalArgumentException("snapshot " + job + "/" + generation
                        + ": ranks and shardRanks must be >= 1, got " + ranks + " and " + shardRanks);
            }
            shardSha256 = List.copyOf(shardSha256);
            int shards = (int) ((ranks + (long) shardRanks - 1) / shardRanks);
            if (shardSha256.size() != shards) {
                throw new IllegalArgumentException("snapshot " + job + "/" + generation + ": lists "
                        + shardSha256.size() + " shards for " + ranks + " ranks of " + shardRanks + " per shard");
            }
            for (int i = 0; i < shards; i++) {
                if (!Names.isSha256Hex(shardSha256.get(i))) {
                    throw new IllegalArgumentException("snapshot " + job + "/" + generation
                            + ": shard " + i + " has no valid digest");
                }
            }
            if (committedAt == null) {
                throw new IllegalArgumentException("snapshot " + job + "/" + generation + ": no commit time");
            }
        }

        /** The shard that lists {@code rank}'s manifest digest. */
        public int shardOf(int rank) {
            if (rank < 0 || rank >= ranks) {
                throw new IllegalArgumentException("snapshot " + job + "/" + generation + " has ranks 0.." + (ranks - 1)
                        + ", not " + rank);
            }
            return rank / shardRanks;
        }

        public int firstRank(int shard) {
            return shard * shardRanks;
        }

        /** How many ranks shard {@code shard} lists: shardRanks, fewer in the last one. */
        public int ranksIn(int shard) {
            return Math.min(shardRanks, ranks - firstRank(shard));
        }
    }

    /** One shard: the manifest digests of consecutive ranks from {@code firstRank}. */
    public record Shard(String job, long generation, int firstRank, List<String> manifestSha256) {
        public Shard {
            Names.requireJob(job);
            Names.requireGeneration(generation);
            if (firstRank < 0) {
                throw new IllegalArgumentException("shard of " + job + "/" + generation + ": firstRank must be >= 0");
            }
            manifestSha256 = List.copyOf(manifestSha256);
            if (manifestSha256.isEmpty()) {
                throw new IllegalArgumentException("shard of " + job + "/" + generation + " lists no rank");
            }
            for (int i = 0; i < manifestSha256.size(); i++) {
                if (!Names.isSha256Hex(manifestSha256.get(i))) {
                    throw new IllegalArgumentException("shard of " + job + "/" + generation + ": rank "
                            + (firstRank + i) + " has no valid manifest digest");
                }
            }
        }
    }

    public static byte[] encode(Head h) {
        return write(256 + 70 * h.shardSha256().size(), g -> {
            g.writeStringField("format", ManifestCodec.MARKER_FORMAT);
            g.writeNumberField("version", HEAD_VERSION);
            g.writeStringField("job", h.job());
            g.writeNumberField("generation", h.generation());
            g.writeNumberField("ranks", h.ranks());
            g.writeNumberField("shardRanks", h.shardRanks());
            g.writeArrayFieldStart("shardSha256");
            for (String d : h.shardSha256()) {
                g.writeString(d);
            }
            g.writeEndArray();
            g.writeStringField("committedAt", h.committedAt().toString());
        });
    }

    public static byte[] encode(Shard s) {
        return write(256 + 70 * s.manifestSha256().size(), g -> {
            g.writeStringField("format", SHARD_FORMAT);
            g.writeNumberField("version", ManifestCodec.VERSION);
            g.writeStringField("job", s.job());
            g.writeNumberField("generation", s.generation());
            g.writeNumberField("firstRank", s.firstRank());
            g.writeArrayFieldStart("manifestSha256");
            for (String d : s.manifestSha256()) {
                g.writeString(d);
            }
            g.writeEndArray();
        });
    }

    /** Decodes a version-2 {@code SNAPSHOT} object already parsed by {@link ManifestCodec#decodeCommitMarker}. */
    static Head decodeHead(JsonNode root) {
        return new Head(ManifestCodec.text(root, "job"), ManifestCodec.longField(root, "generation"),
                Math.toIntExact(ManifestCodec.longField(root, "ranks")),
                Math.toIntExact(ManifestCodec.longField(root, "shardRanks")), strings(root, "shardSha256"),
                Instant.parse(ManifestCodec.text(root, "committedAt")));
    }

    public static Shard decodeShard(byte[] json, String source) throws MalformedManifestException {
        try {
            JsonNode root = ManifestCodec.parse(json, SHARD_FORMAT);
            return new Shard(ManifestCodec.text(root, "job"), ManifestCodec.longField(root, "generation"),
                    Math.toIntExact(ManifestCodec.longField(root, "firstRank")), strings(root, "manifestSha256"));
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new MalformedManifestException("malformed snapshot digest shard " + source + ": "
                    + e.getMessage(), e);
        }
    }

    private static List<String> strings(JsonNode root, String field) {
        JsonNode a = root.get(field);
        if (a == null || !a.isArray()) {
            throw new IllegalArgumentException("field '" + field + "' must be an array");
        }
        List<String> out = new ArrayList<>(a.size());
        for (int i = 0; i < a.size(); i++) {
            if (!a.get(i).isTextual()) {
                throw new IllegalArgumentException(field + "[" + i + "] must be a string");
            }
            out.add(a.get(i).asText());
        }
        return out;
    }

    private interface Body {
        void write(JsonGenerator g) throws IOException;
    }

    private static byte[] write(int sizeHint, Body body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(sizeHint);
        try (JsonGenerator g = ManifestCodec.generator(out)) {
            g.writeStartObject();
            body.write(g);
            g.writeEndObject();
        } catch (IOException e) {
            throw new IllegalStateException("cannot encode JSON", e);
        }
        return out.toByteArray();
    }
}

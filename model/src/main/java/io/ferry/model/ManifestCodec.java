package io.ferry.model;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON encoding of {@link Manifest} and {@link SnapshotMarker}, as specified in
 * {@code docs/formats/manifest.md}. Decoding is strict: unknown formats or versions, missing
 * or mistyped fields, and records that fail validation are a {@link MalformedManifestException}
 * naming the source and the field. Thread-safe.
 */
public final class ManifestCodec {
    public static final String MANIFEST_FORMAT = "ferry-image-manifest";
    public static final String MARKER_FORMAT = "ferry-snapshot";
    public static final int VERSION = 1;
    /** Manifest version 2: a file's whole-file {@code sha256} is optional (its chunk ids prove it). */
    public static final int MANIFEST_V2 = 2;
    /** Manifest version 3: the pack layout; files list blobs with their places, the manifest names its packs. */
    public static final int MANIFEST_V3 = 3;
    /** Manifest version 4: version 3 whose blobs are encrypted; {@code keyId} names the key. */
    public static final int MANIFEST_V4 = 4;
    private static final ObjectMapper JSON = new ObjectMapper();

    private ManifestCodec() {}

    public static byte[] encode(Manifest m) {
        ObjectNode root = JSON.createObjectNode();
        boolean v1 = m.entries().stream().noneMatch(e -> e instanceof Entry.RegularFile f
                && f.sha256().equals(Entry.RegularFile.NOT_RECORDED));
        boolean v3 = m.inPacks() || m.encrypted();
        // An encrypted image is version 4, so that a Ferry without encryption refuses it ("unsupported
        // version 4") instead of reading sealed records as damaged ones; every other manifest is
        // byte for byte what it was before encryption existed.
        root.put("format", MANIFEST_FORMAT)
                .put("version", m.encrypted() ? MANIFEST_V4 : v3 ? MANIFEST_V3 : v1 ? VERSION : MANIFEST_V2);
        root.put("job", m.image().job()).put("generation", m.image().generation()).put("rank", m.image().rank());
        root.put("chunkSize", m.chunkSize());
        if (m.encrypted()) {
            root.put("keyId", m.keyId());
        }
        if (v3) {
            ArrayNode packs = root.putArray("packs");
            m.packs().forEach(packs::add);
        }
        ArrayNode files = root.putArray("entries");
        for (Entry e : m.entries()) {
            ObjectNode n = files.addObject().put("path", e.path());
            if (e instanceof Entry.RegularFile f) {
                n.put("type", "file").put("mode", octal(f.mode())).put("size", f.size());
                if (!f.sha256().equals(Entry.RegularFile.NOT_RECORDED)) {
                    n.put("sha256", f.sha256());
                }
                if (v3) {
                    ArrayNode blobs = n.putArray("blobs");
                    for (int i = 0; i < f.chunks().size(); i++) {
                        BlobPlace p = f.places().get(i);
                        ArrayNode b = blobs.addArray().add(f.chunks().get(i).toString()).add(p.length());
                        if (!p.isZero()) {
                            b.add(p.pack()).add(p.offset()).add(p.recordLength());
                        }
                    }
                } else {
                    ArrayNode chunks = n.putArray("chunks");
                    f.chunks().forEach(c -> chunks.add(c.toString()));
                }
            } else if (e instanceof Entry.Directory d) {
                n.put("type", "dir").put("mode", octal(d.mode()));
            } else if (e instanceof Entry.Symlink s) {
                n.put("type", "symlink").put("target", s.target());
            } else {
                throw new AssertionError(e);
            }
        }
        return bytes(root);
    }

    public static Manifest decodeManifest(byte[] json, String source) throws MalformedManifestException {
        try {
            JsonNode root = parse(json, MANIFEST_FORMAT, VERSION, MANIFEST_V4);
            long version = root.get("version").asLong();
            boolean digestOptional = version >= MANIFEST_V2;
            boolean v3 = version >= MANIFEST_V3;
            String keyId = version == MANIFEST_V4 ? text(root, "keyId") : "";
            if (version == MANIFEST_V4 && keyId.isEmpty()) {
                throw new IllegalArgumentException("field 'keyId' must name the key of an encrypted image");
            }
            ImageRef ref = new ImageRef(text(root, "job"), longField(root, "generation"),
                    Math.toIntExact(longField(root, "rank")));
            int chunkSize = Math.toIntExact(longField(root, "chunkSize"));
            JsonNode entries = root.get("entries");
            if (entries == null || !entries.isArray()) {
                throw new IllegalArgumentException("field 'entries' must be an array");
            }
            List<String> packs = new ArrayList<>();
            if (v3) {
                JsonNode p = root.get("packs");
                if (p == null || !p.isArray()) {
                    throw new IllegalArgumentException("field 'packs' must be an array");
                }
                for (JsonNode n : p) {
                    if (!n.isTextual() || !Names.isSha256Hex(n.asText())) {
                        throw new IllegalArgumentException("field 'packs' must hold pack names of"
                                + " 64 lower-case hex digits");
                    }
                    packs.add(n.asText());
                }
            }
            List<Entry> out = new ArrayList<>(entries.size());
            for (int i = 0; i < entries.size(); i++) {
                out.add(entry(entries.get(i), i, digestOptional, v3));
            }
            return new Manifest(ref, chunkSize, out, packs, keyId);
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new MalformedManifestException("malformed manifest " + source + ": " + e.getMessage(), e);
        }
    }

    /**
     * The marker, streamed (a marker of a million ranks is tens of MiB: no tree of it is built),
     * byte for byte what the pretty-printed tree gave: ranks in ascending order.
     */
    public static byte[] encode(SnapshotMarker s) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256 + 84 * s.ranks());
        try (JsonGenerator g = generator(out)) {
            g.writeStartObject();
            g.writeStringField("format", MARKER_FORMAT);
            g.writeNumberField("version", VERSION);
            g.writeStringField("job", s.job());
            g.writeNumberField("generation", s.generation());
            g.writeNumberField("ranks", s.ranks());
            g.writeObjectFieldStart("manifestSha256");
            for (int r = 0; r < s.ranks(); r++) { // exactly the ranks 0..ranks-1 (SnapshotMarker checks)
                g.writeStringField(Integer.toString(r), s.manifestSha256().get(r));
            }
            g.writeEndObject();
            g.writeStringField("committedAt", s.committedAt().toString());
            g.writeEndObject();
        } catch (IOException e) {
            throw new IllegalStateException("cannot encode JSON", e);
        }
        return out.toByteArray();
    }

    /** A pretty-printing streaming generator, as the tree encoder prints. */
    static JsonGenerator generator(OutputStream out) throws IOException {
        JsonGenerator g = JSON.getFactory().createGenerator(out);
        g.setPrettyPrinter(new DefaultPrettyPrinter());
        return g;
    }

    /** A version-1 marker (every rank's digest in it); a sharded one is refused: {@link #decodeCommitMarker}. */
    public static SnapshotMarker decodeMarker(byte[] json, String source) throws MalformedManifestException {
        CommitMarker m = decodeCommitMarker(json, source);
        if (m instanceof SnapshotMarker s) {
            return s;
        }
        throw new MalformedManifestException("snapshot marker " + source + " is sharded (version "
                + ShardedMarker.HEAD_VERSION + "): read it with its shards", null);
    }

    /** A {@code SNAPSHOT} object of either version: 1 (every rank's digest) or 2 (sharded). */
    public static CommitMarker decodeCommitMarker(byte[] json, String source) throws MalformedManifestException {
        try {
            JsonNode root = parse(json, MARKER_FORMAT, VERSION, ShardedMarker.HEAD_VERSION);
            if (root.get("version").asLong() == ShardedMarker.HEAD_VERSION) {
                return ShardedMarker.decodeHead(root);
            }
            JsonNode manifests = root.get("manifestSha256");
            if (manifests == null || !manifests.isObject()) {
                throw new IllegalArgumentException("field 'manifestSha256' must be an object");
            }
            Map<Integer, String> digests = new HashMap<>();
            for (var it = manifests.fields(); it.hasNext(); ) {
                var en = it.next();
                digests.put(Integer.parseInt(en.getKey()), en.getValue().asText());
            }
            return new SnapshotMarker(text(root, "job"), longField(root, "generation"),
                    Math.toIntExact(longField(root, "ranks")), digests, Instant.parse(text(root, "committedAt")));
        } catch (IllegalArgumentException | ArithmeticException | DateTimeParseException e) {
            throw new MalformedManifestException("malformed snapshot marker " + source + ": " + e.getMessage(), e);
        }
    }

    private static Entry entry(JsonNode n, int i, boolean digestOptional, boolean v3) {
        if (n == null || !n.isObject()) {
            throw new IllegalArgumentException("entries[" + i + "] must be an object");
        }
        String path = text(n, "path");
        String type = text(n, "type");
        try {
            return switch (type) {
                case "file" -> {
                    if (v3) {
                        yield blobFile(n, path);
                    }
                    JsonNode chunks = n.get("chunks");
                    if (chunks == null || !chunks.isArray()) {
                        throw new IllegalArgumentException("field 'chunks' must be an array");
                    }
                    List<ChunkId> ids = new ArrayList<>(chunks.size());
                    for (JsonNode c : chunks) {
                        ids.add(ChunkId.parse(c.isTextual() ? c.asText() : null));
                    }
                    String sha = digestOptional && n.get("sha256") == null ? Entry.RegularFile.NOT_RECORDED
                            : text(n, "sha256");
                    if (!Names.isSha256Hex(sha) && !(digestOptional && sha.equals(Entry.RegularFile.NOT_RECORDED))) {
                        throw new IllegalArgumentException("file " + path
                                + ": sha256 must be 64 lower-case hex digits");
                    }
                    yield new Entry.RegularFile(path, mode(n), longField(n, "size"), sha, ids);
                }
                case "dir" -> new Entry.Directory(path, mode(n));
                case "symlink" -> new Entry.Symlink(path, text(n, "target"));
                default -> throw new IllegalArgumentException("unknown type '" + type + "'");
            };
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("entries[" + i + "] (" + path + "): " + e.getMessage(), e);
        }
    }

    /**
     * A version-3 file: {@code blobs} as {@code [id, length, pack, offset, recordLength]} or {@code ["zero", length]}.
     */
    private static Entry blobFile(JsonNode n, String path) {
        JsonNode blobs = n.get("blobs");
        if (blobs == null || !blobs.isArray()) {
            throw new IllegalArgumentException("field 'blobs' must be an array");
        }
        List<ChunkId> ids = new ArrayList<>(blobs.size());
        List<BlobPlace> places = new ArrayList<>(blobs.size());
        for (int j = 0; j < blobs.size(); j++) {
            JsonNode b = blobs.get(j);
            if (b == null || !b.isArray() || (b.size() != 2 && b.size() != 5) || !b.get(0).isTextual()) {
                throw new IllegalArgumentException("blobs[" + j
                        + "] must be [id, length, pack, offset, recordLength] or [\"zero\", length]");
            }
            ChunkId id = ChunkId.parse(b.get(0).asText());
            if (id.isZero() != (b.size() == 2)) {
                throw new IllegalArgumentException("blobs[" + j + "]: "
                        + (id.isZero() ? "an all-zero blob has no pack record"
                        : "a stored blob needs its pack, offset and record length"));
            }
            int len = intAt(b, 1, j);
            places.add(id.isZero() ? BlobPlace.zero(len)
                    : new BlobPlace(len, intAt(b, 2, j), longAt(b, 3, j), intAt(b, 4, j)));
            ids.add(id);
        }
        String sha = n.get("sha256") == null ? Entry.RegularFile.NOT_RECORDED : text(n, "sha256");
        return new Entry.RegularFile(path, mode(n), longField(n, "size"), sha, ids, places);
    }

    private static long longAt(JsonNode array, int index, int blob) {
        JsonNode v = array.get(index);
        if (v == null || !v.isIntegralNumber() || !v.canConvertToLong()) {
            throw new IllegalArgumentException("blobs[" + blob + "][" + index + "] must be an integer");
        }
        return v.asLong();
    }

    private static int intAt(JsonNode array, int index, int blob) {
        return Math.toIntExact(longAt(array, index, blob));
    }

    static JsonNode parse(byte[] json, String format) {
        return parse(json, format, VERSION, VERSION);
    }

    /** Parses and checks the format and that the version is in {@code oldest..newest}. */
    private static JsonNode parse(byte[] json, String format, int oldest, int newest) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new IllegalArgumentException("not JSON: " + e.getMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException("not a JSON object");
        }
        if (!format.equals(textOrNull(root, "format"))) {
            throw new IllegalArgumentException("field 'format' must be '" + format + "'");
        }
        long version = longField(root, "version");
        if (version < oldest || version > newest) {
            throw new IllegalArgumentException("unsupported version " + version + " (this Ferry reads "
                    + (oldest == newest ? oldest : oldest + " to " + newest) + ")");
        }
        return root;
    }

    private static int mode(JsonNode n) {
        String m = text(n, "mode");
        if (!m.matches("0[0-7]{1,4}")) {
            throw new IllegalArgumentException("field 'mode' must be octal like '0644', got '" + m + "'");
        }
        return Integer.parseInt(m, 8);
    }

    private static String octal(int mode) {
        return String.format("%04o", mode);
    }

    private static String textOrNull(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v != null && v.isTextual() ? v.asText() : null;
    }

    static String text(JsonNode n, String field) {
        String v = textOrNull(n, field);
        if (v == null) {
            throw new IllegalArgumentException("field '" + field + "' must be a string");
        }
        return v;
    }

    static long longField(JsonNode n, String field) {
        JsonNode v = n.get(field);
        if (v == null || !v.isIntegralNumber() || !v.canConvertToLong()) {
            throw new IllegalArgumentException("field '" + field + "' must be an integer");
        }
        return v.asLong();
    }

    private static byte[] bytes(ObjectNode root) {
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode JSON", e);
        }
    }
}

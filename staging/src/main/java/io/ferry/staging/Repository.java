package io.ferry.staging;

import io.ferry.compression.Digests;
import io.ferry.model.ChunkId;
import io.ferry.model.ImageRef;
import io.ferry.model.MalformedManifestException;
import io.ferry.model.Manifest;
import io.ferry.model.ManifestCodec;
import io.ferry.model.Names;
import io.ferry.model.SnapshotMarker;
import io.ferry.stores.ObjectNotFoundException;
import io.ferry.stores.Store;
import io.ferry.stores.StoreException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Ferry's layout over a {@link Store} (DESIGN.md, "Store layout"):
 * <pre>
 * ferry/v1/chunks/&lt;first 2 hex&gt;/&lt;sha256&gt;          immutable chunk objects
 * ferry/v1/jobs/&lt;job&gt;/&lt;generation&gt;/&lt;rank&gt;.manifest image manifest (JSON)
 * ferry/v1/jobs/&lt;job&gt;/&lt;generation&gt;/SNAPSHOT       commit marker, written last
 * </pre>
 * Thread-safe, as its store is.
 */
public final class Repository {
    static final String CHUNKS = "ferry/v1/chunks/";
    static final String JOBS = "ferry/v1/jobs/";
    private final Store store;
    private final Clock clock;

    public Repository(Store store, Clock clock) {
        this.store = store;
        this.clock = clock;
    }

    public Store store() {
        return store;
    }

    public static String chunkKey(ChunkId id) {
        if (id.isZero()) {
            throw new IllegalArgumentException("zero chunks are never stored");
        }
        String hex = id.toString();
        return CHUNKS + hex.substring(0, 2) + "/" + hex;
    }

    public static String manifestKey(ImageRef ref) {
        return JOBS + ref.job() + "/" + ref.generation() + "/" + ref.rank() + ".manifest";
    }

    public static String markerKey(String job, long generation) {
        return JOBS + Names.requireJob(job) + "/" + Names.requireGeneration(generation) + "/SNAPSHOT";
    }

    /** Writes a manifest (after its chunks are durable) and returns the SHA-256 of its bytes. */
    public String putManifest(Manifest m) throws StoreException {
        byte[] bytes = ManifestCodec.encode(m);
        store.put(manifestKey(m.image()), ByteBuffer.wrap(bytes));
        return Digests.sha256Hex(bytes);
    }

    /** A manifest as stored, with the digest of its bytes. */
    public record StoredManifest(Manifest manifest, String sha256) {}

    public StoredManifest readManifest(ImageRef ref) throws IOException {
        byte[] bytes = store.get(manifestKey(ref));
        Manifest m = ManifestCodec.decodeManifest(bytes, manifestKey(ref));
        if (!m.image().equals(ref)) {
            throw new MalformedManifestException("manifest " + manifestKey(ref) + " describes " + m.image(), null);
        }
        return new StoredManifest(m, Digests.sha256Hex(bytes));
    }

    /**
     * Establishes a snapshot: checks that every rank 0..ranks-1 has a readable manifest, then
     * writes the commit marker, last, in one atomic put. Idempotent.
     */
    public SnapshotMarker commitSnapshot(String job, long generation, int ranks) throws IOException {
        return commitSnapshot(job, generation, ranks, r -> null);
    }

    /**
     * {@link #commitSnapshot(String, long, int)} with the digests of manifests already read
     * and checked by the caller ({@link #readManifest}; {@code known} gives null for a rank it
     * has not read): only the others are read here. The coordinator reads each rank's manifest
     * as the rank is staged, so that establishing a snapshot of a million ranks does not start
     * with a million reads.
     */
    public SnapshotMarker commitSnapshot(String job, long generation, int ranks,
                                         java.util.function.IntFunction<String> known) throws IOException {
        Map<Integer, String> digests = new HashMap<>();
        for (int r = 0; r < ranks; r++) {
            String d = known.apply(r);
            if (d != null) {
                digests.put(r, d);
                continue;
            }
            ImageRef ref = new ImageRef(job, generation, r);
            try {
                digests.put(r, readManifest(ref).sha256());
            } catch (ObjectNotFoundException e) {
                throw new IllegalStateException("cannot commit snapshot " + job + "/" + generation
                        + ": rank " + r + " has no manifest in " + store.uri(), e);
            }
        }
        SnapshotMarker marker = new SnapshotMarker(job, generation, ranks, digests, clock.instant());
        store.put(markerKey(job, generation), ByteBuffer.wrap(ManifestCodec.encode(marker)));
        return marker;
    }

    /** The commit marker of a generation, if it was established on this store. */
    public Optional<SnapshotMarker> readMarker(String job, long generation) throws IOException {
        String key = markerKey(job, generation);
        try {
            return Optional.of(ManifestCodec.decodeMarker(store.get(key), key));
        } catch (ObjectNotFoundException e) {
            return Optional.empty();
        }
    }

    public boolean isEstablished(String job, long generation) throws StoreException {
        return store.exists(markerKey(job, generation));
    }

    /** What a listing of the jobs area shows for one generation. */
    public record GenerationListing(String job, long generation, List<Integer> ranks, boolean committed) {}

    /** Every job and generation with manifests or a marker, in order. Skips foreign keys. */
    public List<GenerationListing> listGenerations() throws StoreException {
        return listUnder(JOBS);
    }

    /** {@link #listGenerations()} of one job: lists only its own keys. */
    public List<GenerationListing> listGenerations(String job) throws StoreException {
        return listUnder(JOBS + Names.requireJob(job) + "/");
    }

    private List<GenerationListing> listUnder(String prefix) throws StoreException {
        Map<String, Map<Long, TreeSet<Integer>>> ranks = new TreeMap<>();
        Map<String, TreeSet<Long>> committed = new HashMap<>();
        for (String key : store.list(prefix)) {
            String[] p = key.substring(JOBS.length()).split("/");
            if (p.length != 3 || !p[1].matches("\\d{1,18}")) {
                continue;
            }
            long gen = Long.parseLong(p[1]);
            if (p[2].equals("SNAPSHOT")) {
                committed.computeIfAbsent(p[0], k -> new TreeSet<>()).add(gen);
                ranks.computeIfAbsent(p[0], k -> new TreeMap<>()).computeIfAbsent(gen, k -> new TreeSet<>());
            } else if (p[2].matches("\\d{1,9}\\.manifest")) {
                int rank = Integer.parseInt(p[2].substring(0, p[2].indexOf('.')));
                ranks.computeIfAbsent(p[0], k -> new TreeMap<>()).computeIfAbsent(gen, k -> new TreeSet<>()).add(rank);
            }
        }
        List<GenerationListing> out = new java.util.ArrayList<>();
        ranks.forEach((job, gens) -> gens.forEach((gen, rs) -> out.add(new GenerationListing(job, gen,
                List.copyOf(rs), committed.getOrDefault(job, new TreeSet<>()).contains(gen)))));
        return out;
    }

    /** Keys of all chunk objects. */
    public List<String> listChunkKeys() throws StoreException {
        return store.list(CHUNKS);
    }

    /** The chunk id a chunk key names, or empty for a key that is not a chunk's. */
    public static Optional<ChunkId> chunkIdOf(String key) {
        String name = key.substring(key.lastIndexOf('/') + 1);
        if (!key.startsWith(CHUNKS) || !name.matches("[0-9a-f]{64}")
                || !key.equals(CHUNKS + name.substring(0, 2) + "/" + name)) {
            return Optional.empty();
        }
        return Optional.of(ChunkId.parse(name));
    }
}

package io.ferry.staging;

import io.ferry.compression.Digests;
import io.ferry.model.ChunkId;
import io.ferry.model.DaemonThreads;
import io.ferry.model.ImageRef;
import io.ferry.model.MalformedManifestException;
import io.ferry.model.Manifest;
import io.ferry.model.ManifestCodec;
import io.ferry.model.Names;
import io.ferry.model.ShardedMarker;
import io.ferry.model.SnapshotMarker;
import io.ferry.stores.ObjectNotFoundException;
import io.ferry.stores.Store;
import io.ferry.stores.StoreException;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;

/**
 * Ferry's layout over a {@link Store} (DESIGN.md, "Store layout"):
 * <pre>
 * ferry/v1/chunks/&lt;first 2 hex&gt;/&lt;sha256&gt;          immutable chunk objects
 * ferry/v1/jobs/&lt;job&gt;/&lt;generation&gt;/&lt;rank&gt;.manifest image manifest (JSON)
 * ferry/v1/jobs/&lt;job&gt;/&lt;generation&gt;/SNAPSHOT.&lt;i&gt;   digest shard i of a sharded marker (more ranks than
 * a shard holds) ferry/v1/jobs/&lt;job&gt;/&lt;generation&gt;/SNAPSHOT       commit marker, written last
 * </pre>
 * Thread-safe, as its store is.
 */
public final class Repository {
    static final String CHUNKS = "ferry/v1/chunks/";
    static final String JOBS = "ferry/v1/jobs/";
    /**
     * Ranks per digest shard of a commit marker: a snapshot of up to this many ranks keeps every
     * digest in the {@code SNAPSHOT} object (86 KB at most, version 1, as older Ferry wrote it).
     * A million ranks give 1,024 shards of 69 KB and a 72 KB head.
     */
    public static final int MARKER_SHARD_RANKS = 1024;
    /** Shard puts of one commit in flight at once (a million ranks: 1,024 puts). */
    private static final int SHARD_PUTS = 8;
    private final Store store;
    private final Clock clock;
    private final int markerShardRanks;
    private final Blobs blobs;

    public Repository(Store store, Clock clock) {
        this(store, clock, MARKER_SHARD_RANKS);
    }

    /** A repository whose pushes name and write blobs as {@code blobs} says (encrypted, or in the clear). */
    public Repository(Store store, Clock clock, Blobs blobs) {
        this(store, clock, MARKER_SHARD_RANKS, blobs);
    }

    /** With {@code markerShardRanks} ranks per marker shard (tests shard small snapshots). */
    public Repository(Store store, Clock clock, int markerShardRanks) {
        this(store, clock, markerShardRanks, Blobs.CLEAR);
    }

    private Repository(Store store, Clock clock, int markerShardRanks, Blobs blobs) {
        if (markerShardRanks < 1) {
            throw new IllegalArgumentException("markerShardRanks must be >= 1, got " + markerShardRanks);
        }
        this.store = store;
        this.clock = clock;
        this.markerShardRanks = markerShardRanks;
        this.blobs = blobs;
    }

    public Store store() {
        return store;
    }

    /** How blobs are named and their records written and read: in the clear or encrypted. */
    public Blobs blobs() {
        return blobs;
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

    /** Digest shard {@code shard} of a sharded commit marker. */
    public static String markerShardKey(String job, long generation, int shard) {
        return markerKey(job, generation) + "." + shard;
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
        byte[] bytes = store.getAtMost(manifestKey(ref), ReadLimits.MANIFEST);
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
                                         IntFunction<String> known) throws IOException {
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
        byte[] head = ranks <= markerShardRanks ? ManifestCodec.encode(marker)
                : ShardedMarker.encode(putShards(marker));
        store.put(markerKey(job, generation), ByteBuffer.wrap(head));
        return marker;
    }

    /** Writes the digest shards of {@code m}, SHARD_PUTS at a time; returns the head that names them. */
    private ShardedMarker.Head putShards(SnapshotMarker m) throws IOException {
        int shards = (m.ranks() + markerShardRanks - 1) / markerShardRanks;
        String[] sha = new String[shards];
        ExecutorService puts = Executors.newFixedThreadPool(
                Math.min(SHARD_PUTS, shards), DaemonThreads.named("ferry-marker-shards"));
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < shards; i++) {
                int shard = i;
                done.add(puts.submit(() -> {
                    int first = shard * markerShardRanks;
                    int n = Math.min(markerShardRanks, m.ranks() - first);
                    List<String> d = new ArrayList<>(n);
                    for (int r = first; r < first + n; r++) {
                        d.add(m.manifestSha256().get(r));
                    }
                    byte[] bytes = ShardedMarker.encode(new ShardedMarker.Shard(m.job(), m.generation(), first, d));
                    store.put(markerShardKey(m.job(), m.generation(), shard), ByteBuffer.wrap(bytes));
                    sha[shard] = Digests.sha256Hex(bytes);
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("commit of " + m.job() + "/" + m.generation() + " interrupted");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IllegalStateException("writing the marker shards of " + m.job() + "/"
                    + m.generation(), e.getCause());
        } finally {
            puts.shutdownNow();
        }
        return new ShardedMarker.Head(m.job(), m.generation(), m.ranks(), markerShardRanks, List.of(sha),
                m.committedAt());
    }

    /**
     * The commit of a generation, if it was established on this store: its {@code SNAPSHOT}
     * object only, each rank's digest read on demand (a restart reads the shard of its ranks,
     * not the whole marker).
     */
    public Optional<CommittedDigests> committed(String job, long generation) throws IOException {
        String key = markerKey(job, generation);
        try {
            return Optional.of(new CommittedDigests(this,
                    ManifestCodec.decodeCommitMarker(store.getAtMost(key, ReadLimits.MARKER), key)));
        } catch (ObjectNotFoundException e) {
            return Optional.empty();
        }
    }

    /** The whole commit marker of a generation (every shard read and checked), if it was established. */
    public Optional<SnapshotMarker> readMarker(String job, long generation) throws IOException {
        Optional<CommittedDigests> c = committed(job, generation);
        return c.isEmpty() ? Optional.empty() : Optional.of(c.get().whole());
    }

    public boolean isEstablished(String job, long generation) throws StoreException {
        return store.exists(markerKey(job, generation));
    }

    /** What a listing of the jobs area shows for one generation. */
    public record GenerationListing(String job, long generation, List<Integer> ranks, boolean committed,
                                    List<String> markerShards) {
        public GenerationListing(String job, long generation, List<Integer> ranks, boolean committed) {
            this(job, generation, ranks, committed, List.of());
        }
    }

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
        Map<String, List<String>> shards = new HashMap<>(); // "job/generation" -> shard keys
        for (String key : store.list(prefix)) {
            String[] p = key.substring(JOBS.length()).split("/");
            if (p.length != 3 || !p[1].matches("\\d{1,18}")) {
                continue;
            }
            long gen = Long.parseLong(p[1]);
            if (p[2].equals("SNAPSHOT")) {
                committed.computeIfAbsent(p[0], k -> new TreeSet<>()).add(gen);
                ranks.computeIfAbsent(p[0], k -> new TreeMap<>()).computeIfAbsent(gen, k -> new TreeSet<>());
            } else if (p[2].matches("SNAPSHOT\\.\\d{1,9}")) {
                shards.computeIfAbsent(p[0] + "/" + gen, k -> new ArrayList<>()).add(key);
                ranks.computeIfAbsent(p[0], k -> new TreeMap<>()).computeIfAbsent(gen, k -> new TreeSet<>());
            } else if (p[2].matches("\\d{1,9}\\.manifest")) {
                int rank = Integer.parseInt(p[2].substring(0, p[2].indexOf('.')));
                ranks.computeIfAbsent(p[0], k -> new TreeMap<>()).computeIfAbsent(gen, k -> new TreeSet<>()).add(rank);
            }
        }
        List<GenerationListing> out = new ArrayList<>();
        ranks.forEach((job, gens) -> gens.forEach((gen, rs) -> out.add(new GenerationListing(job, gen,
                List.copyOf(rs), committed.getOrDefault(job, new TreeSet<>()).contains(gen),
                List.copyOf(shards.getOrDefault(job + "/" + gen, List.of()))))));
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

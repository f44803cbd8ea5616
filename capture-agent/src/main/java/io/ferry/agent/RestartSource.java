package io.ferry.agent;

import io.ferry.agent.peer.PeerAuth;
import io.ferry.agent.peer.PeerClient;
import io.ferry.model.Entry;
import io.ferry.model.ImageRef;
import io.ferry.model.Manifest;
import io.ferry.model.PeerAddresses;
import io.ferry.staging.LocalCache;
import io.ferry.staging.Progress;
import io.ferry.staging.StagingPipeline;
import io.ferry.staging.internal.FileTrees;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Materialises one rank's image for a restart from the nearest tier that verifies: the
 * node-local cache when every file there matches the committed manifest (layout and sizes,
 * nothing missing, nothing extra; every chunk's CRC32C recorded when this node pushed it as
 * that manifest, else its SHA-256) — labelled {@code partner} when that copy is a
 * partner copy another node put here — else another node's cache (where the rank ran, or its
 * partner: {@code partner}, fetched agent to agent and verified the same way), else the remote
 * store (every chunk verified). Nothing restarts from bytes that were not verified; a copy that
 * does not verify is skipped for the next source.
 */
public final class RestartSource {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(RestartSource.class);
    private static final int CORES = Runtime.getRuntime().availableProcessors();
    /** The restart copy's unit of I/O: small enough to stay in the CPU's cache between read, check and write. */
    private static final int PIECE = 256 << 10;

    private RestartSource() {}

    /** {@link #materialise(StagingPipeline, LocalCache, ImageRef, Path, List)} with no peers. */
    public static String materialise(StagingPipeline pipeline, LocalCache cache, ImageRef ref, Path target)
            throws IOException {
        return materialise(pipeline, cache, ref, target, List.of());
    }

    /**
     * Fills {@code target} (absent) with the image of {@code ref}; returns the tier used:
     * "local", "partner" or "remote".
     *
     * @param peers other nodes whose caches may hold the image, nearest first
     */
    public static String materialise(StagingPipeline pipeline, LocalCache cache, ImageRef ref, Path target,
                                     List<PeerAddresses.Peer> peers) throws IOException {
        return materialise(pipeline, cache, ref, target, peers, new java.util.HashSet<>());
    }

    /**
     * As {@link #materialise(StagingPipeline, LocalCache, ImageRef, Path, List)}; {@code unreachable}
     * names peers found unreachable (skipped, and added to when one is), shared across the ranks
     * of one restore so that a lost host costs one connection timeout, not one per rank.
     */
    public static String materialise(StagingPipeline pipeline, LocalCache cache, ImageRef ref, Path target,
                                     List<PeerAddresses.Peer> peers, Set<String> unreachable) throws IOException {
        return materialise(pipeline, cache, ref, target, peers, unreachable, committedDigest(pipeline, ref), PeerAuth.NONE);
    }

    /**
     * As {@link #materialise(StagingPipeline, LocalCache, ImageRef, Path, List, Set)}, for a rank
     * of a committed generation whose manifest digest the node read from the commit marker
     * ({@code committedManifestSha256}): every tier is checked against it. The manifest the store
     * holds must have those bytes (else the image is refused as swapped after the commit); the
     * node's own copy is checked against that manifest, by the CRC32C its staging recorded for
     * exactly that manifest, or by SHA-256. Each peer asked is shown {@code auth}'s secret.
     */
    public static String materialise(StagingPipeline pipeline, LocalCache cache, ImageRef ref, Path target,
                                     List<PeerAddresses.Peer> peers, Set<String> unreachable,
                                     String committedManifestSha256, PeerAuth auth) throws IOException {
        java.util.Optional<String> near = nearby(pipeline, cache, ref, target, peers, unreachable, committedManifestSha256, auth);
        if (near.isPresent()) {
            return near.get();
        }
        pipeline.pull(ref, target, Progress.NONE, committedManifestSha256);
        return "remote";
    }

    /**
     * The tiers of {@link #materialise(StagingPipeline, LocalCache, ImageRef, Path, List, Set, String, PeerAuth)}
     * short of the remote store: "local" or "partner" when a copy here or on a peer verified into
     * {@code target}, else empty, with {@code target} absent, for the caller to pull it from the
     * store (a node pulls its ranks that no cache holds together: {@link StagingPipeline#pullAllCommitted}).
     */
    public static java.util.Optional<String> nearby(StagingPipeline pipeline, LocalCache cache, ImageRef ref, Path target,
                                                    List<PeerAddresses.Peer> peers, Set<String> unreachable,
                                                    String committedManifestSha256, PeerAuth auth) throws IOException {
        io.ferry.staging.Repository.StoredManifest sm = committedManifest(pipeline, ref, committedManifestSha256);
        Manifest m = sm.manifest();
        Path local = cache.imageDir(ref);
        FileTrees.delete(target);
        if (Files.isDirectory(local) && copyVerified(local, m, target, localCheck(cache, ref, sm), pipeline.repository().blobs())) {
            return java.util.Optional.of(cache.isPartnerCopy(ref) ? "partner" : "local");
        }
        for (PeerAddresses.Peer peer : peers) {
            if (unreachable.contains(peer.node())) {
                continue;
            }
            FileTrees.delete(target);
            Files.createDirectories(target.getParent());
            try {
                if (PeerClient.get(peer, ref, target, auth) && copyVerified(target, m, null, null, pipeline.repository().blobs())) {
                    return java.util.Optional.of("partner");
                }
                LOG.warn("ferry agent: rank " + ref.rank() + " of " + ref.job() + " generation "
                        + ref.generation() + ": " + peer.node() + "'s copy " + (Files.isDirectory(target)
                        ? "does not verify against the manifest" : "is not there") + "; trying the next source");
            } catch (IOException e) {
                if (e instanceof PeerClient.Unreachable) {
                    unreachable.add(peer.node());
                }
                LOG.warn("ferry agent: rank " + ref.rank() + " of " + ref.job() + ": fetching from "
                        + peer.node() + " failed (" + e.getMessage() + "); trying the next source");
            }
        }
        FileTrees.delete(target);
        return java.util.Optional.empty();
    }

    /** The manifest of {@code ref} as the store holds it, refused unless its bytes are the ones committed. */
    private static io.ferry.staging.Repository.StoredManifest committedManifest(StagingPipeline pipeline, ImageRef ref,
                                                                                String committedManifestSha256)
            throws IOException {
        io.ferry.staging.Repository.StoredManifest sm = pipeline.repository().readManifest(ref);
        if (!sm.sha256().equals(committedManifestSha256)) {
            throw new io.ferry.staging.ImageCorruptException("image " + ref + ": the manifest on the store (SHA-256 "
                    + sm.sha256() + ") is not the one its snapshot committed (" + committedManifestSha256
                    + "); no copy of it is used", null);
        }
        return sm;
    }

    /**
     * The tier a restart of {@code ref} would use, without copying: "local (...)", "partner (...)"
     * or "remote (...)". A peer's copy is planned when the peer says it holds one; it is
     * verified only when fetched.
     */
    public static String plan(StagingPipeline pipeline, LocalCache cache, ImageRef ref, List<PeerAddresses.Peer> peers)
            throws IOException {
        return plan(pipeline, cache, ref, peers, committedDigest(pipeline, ref), PeerAuth.NONE);
    }

    /**
     * {@link #plan(StagingPipeline, LocalCache, ImageRef, List)} against the manifest digest the commit
     * marker gives, showing each peer asked {@code auth}'s secret.
     */
    public static String plan(StagingPipeline pipeline, LocalCache cache, ImageRef ref, List<PeerAddresses.Peer> peers,
                              String committedManifestSha256, PeerAuth auth) throws IOException {
        io.ferry.staging.Repository.StoredManifest sm = committedManifest(pipeline, ref, committedManifestSha256);
        Manifest m = sm.manifest();
        Path local = cache.imageDir(ref);
        if (Files.isDirectory(local) && copyVerified(local, m, null, localCheck(cache, ref, sm), pipeline.repository().blobs())) {
            return cache.isPartnerCopy(ref) ? "partner (a partner copy in this node's cache, verified against the manifest)"
                    : "local (cache copy verified against the manifest)";
        }
        for (PeerAddresses.Peer peer : peers) {
            try {
                if (PeerClient.has(peer, ref, auth).isPresent()) {
                    return "partner (in " + peer.node() + "'s cache)";
                }
            } catch (IOException e) {
                // unreachable: the next one
            }
        }
        return "remote (" + (Files.isDirectory(local) ? "cache copy does not verify" : "not in this node's cache")
                + (peers.isEmpty() ? "" : ", nor with " + String.join(", ", peers.stream().map(PeerAddresses.Peer::node).toList()))
                + ")";
    }

    /** The tier alone ({@code local}, {@code partner} or {@code remote}) of {@link #plan}. */
    public static String tier(StagingPipeline pipeline, LocalCache cache, ImageRef ref, List<PeerAddresses.Peer> peers)
            throws IOException {
        return tier(pipeline, cache, ref, peers, committedDigest(pipeline, ref), PeerAuth.NONE);
    }

    /** {@link #tier(StagingPipeline, LocalCache, ImageRef, List)} against the commit marker's digest, showing peers {@code auth}. */
    public static String tier(StagingPipeline pipeline, LocalCache cache, ImageRef ref, List<PeerAddresses.Peer> peers,
                              String committedManifestSha256, PeerAuth auth) throws IOException {
        String p = plan(pipeline, cache, ref, peers, committedManifestSha256, auth);
        return p.substring(0, p.indexOf(' '));
    }

    /** The digest {@code ref}'s commit marker gives its manifest; an error when the generation is not committed. */
    private static String committedDigest(StagingPipeline pipeline, ImageRef ref) throws IOException {
        return pipeline.repository().committed(ref.job(), ref.generation())
                .orElseThrow(() -> new IOException("generation " + ref.generation() + " of " + ref.job()
                        + " has no commit marker on " + pipeline.repository().store().uri()))
                .manifestSha256(ref.rank());
    }

    /**
     * The CRC32C of each chunk of the cached copy of {@code ref}, in manifest order, when this
     * node pushed that copy as the manifest the store holds now ({@link LocalCache#markStaged(ImageRef,
     * io.ferry.staging.PushResult)}); else null, and the copy is checked by SHA-256. The choice:
     * on the node-local tier the threat is a damaged disk or a torn write, not a forger (whoever
     * can write the cache can write the rank's memory), and a CRC32C per 4 MiB chunk catches
     * those at 10 GB/s and more per core where SHA-256 runs at ~1 GB/s; copies that crossed a
     * network or another node's disk (partner copies, the store) are checked by SHA-256.
     */
    private static int[] localCheck(LocalCache cache, ImageRef ref, io.ferry.staging.Repository.StoredManifest sm)
            throws IOException {
        if (cache.isPartnerCopy(ref)) {
            return null;
        }
        int chunks = sm.manifest().entries().stream().filter(e -> e instanceof Entry.RegularFile)
                .mapToInt(e -> ((Entry.RegularFile) e).chunks().size()).sum();
        return cache.stagedCheck(ref).filter(c -> c.manifestSha256().equals(sm.sha256()) && c.chunkCrc32c().length == chunks)
                .map(LocalCache.StagedCheck::chunkCrc32c).orElse(null);
    }

    /**
     * Copies a cached image into {@code target} and verifies it in the same pass: the layout
     * first (every entry of the manifest there with its type, size or link target, nothing
     * else), then every chunk of every file, read once, checked against the manifest's chunk id
     * (the SHA-256 of its raw bytes, or their HMAC-SHA256 under {@code blobs}' naming key when the image is
     * encrypted; an all-zero chunk must be zeros) and written, chunks spread
     * over the cores. Every byte of every file is covered by exactly one chunk, so this verifies
     * what the whole-file digests would, reading the image once instead of twice. Returns false
     * (leaving a partial {@code target} for the caller to delete) when anything differs. With a
     * null {@code target} it verifies {@code dir} in place (a copy fetched from a peer). With
     * {@code crc32c} (every chunk's, in manifest order: {@link #localCheck}) each chunk is checked
     * against its CRC32C instead of its SHA-256.
     */
    static boolean copyVerified(Path dir, Manifest m, Path target, int[] crc32c, io.ferry.staging.Blobs blobs) throws IOException {
        if ((crc32c == null && !blobs.opens(m.keyId())) || !layoutMatches(dir, m)) {
            return false;
        }
        boolean copy = target != null;
        if (copy) {
            Files.createDirectories(target);
        }
        java.util.Map<String, Integer> firstChunk = new java.util.HashMap<>(); // each file's first chunk, in manifest order
        int counted = 0;
        for (Entry e : m.entries()) {
            if (e instanceof Entry.RegularFile f) {
                firstChunk.put(f.path(), counted);
                counted += f.chunks().size();
            }
        }
        List<Entry> entries = new ArrayList<>(m.entries());
        entries.sort(java.util.Comparator.comparing(Entry::path)); // parents before children
        List<java.nio.channels.FileChannel> open = new ArrayList<>();
        List<Runnable> runsOfChunks = new ArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean ok = new java.util.concurrent.atomic.AtomicBoolean(true);
        java.util.concurrent.atomic.AtomicReference<IOException> failed = new java.util.concurrent.atomic.AtomicReference<>();
        int chunkSize = m.chunkSize();
        // Direct buffers: the bytes go from the page cache into the buffer and back out once each (as cat's);
        // a heap array would be copied through a temporary direct buffer both ways.
        ThreadLocal<java.nio.ByteBuffer> buffers = ThreadLocal.withInitial(() -> java.nio.ByteBuffer.allocateDirect(PIECE));
        try {
            for (Entry e : entries) {
                Path src = dir.resolve(e.path());
                Path dst = copy ? target.resolve(e.path()) : null;
                if (!copy && !(e instanceof Entry.RegularFile)) {
                    continue; // the layout check covered it
                }
                if (e instanceof Entry.Directory) {
                    Files.createDirectories(dst);
                } else if (e instanceof Entry.Symlink l) {
                    Files.createDirectories(dst.getParent());
                    Files.createSymbolicLink(dst, Path.of(l.target()));
                } else if (e instanceof Entry.RegularFile f) {
                    java.nio.channels.FileChannel out = null;
                    if (copy) {
                        Files.createDirectories(dst.getParent());
                        out = java.nio.channels.FileChannel.open(dst, java.nio.file.StandardOpenOption.CREATE_NEW,
                                java.nio.file.StandardOpenOption.WRITE);
                        open.add(out);
                    }
                    java.nio.channels.FileChannel sink = out;
                    int first = firstChunk.get(f.path());
                    long[] offsets = f.offsets(chunkSize); // fixed chunks, or blobs cut by content (pack layout)
                    // Contiguous runs of chunks, each read in order through its own descriptor, so the kernel's
                    // readahead follows each run. With CRC32C (cheap) a file is one run, copied like cat copies
                    // it (writes of two threads into one file take turns on its lock); files go in parallel.
                    // With SHA-256 (~1 GB/s per core) a file is split over the cores, runs of 4 chunks at least.
                    int n = f.chunks().size();
                    int runs = crc32c != null ? 1 : Math.max(1, Math.min(CORES, n / 4));
                    for (int k = 0; k < runs; k++) {
                        int from = (int) ((long) n * k / runs);
                        int to = (int) ((long) n * (k + 1) / runs);
                        runsOfChunks.add(() -> {
                            if (!ok.get()) {
                                return;
                            }
                            try (java.nio.channels.FileChannel in = java.nio.channels.FileChannel.open(src)) {
                                java.nio.ByteBuffer buf = buffers.get();
                                for (int i = from; i < to && ok.get(); i++) {
                                    long at = offsets[i];
                                    int len = (int) (offsets[i + 1] - at);
                                    ChunkCheck check = crc32c != null ? new ChunkCheck.Crc(crc32c[first + i])
                                            : ChunkCheck.of(f.chunks().get(i), blobs, m.keyId());
                                    // in pieces that stay in the CPU's cache: read, checked, written
                                    for (int done = 0; done < len; ) {
                                        int piece = Math.min(PIECE, len - done);
                                        buf.clear().limit(piece);
                                        while (buf.hasRemaining()) {
                                            if (in.read(buf, at + done + buf.position()) < 0) {
                                                ok.set(false); // shorter than it was a moment ago
                                                return;
                                            }
                                        }
                                        buf.flip();
                                        check.update(buf.duplicate());
                                        while (sink != null && buf.hasRemaining()) {
                                            sink.write(buf, at + done + buf.position());
                                        }
                                        done += piece;
                                    }
                                    if (!check.matches()) {
                                        ok.set(false); // the caller removes what was written
                                        return;
                                    }
                                }
                            } catch (IOException x) {
                                failed.compareAndSet(null, x);
                                ok.set(false);
                            }
                        });
                    }
                }
            }
            int threads = Math.max(1, Math.min(CORES, runsOfChunks.size()));
            if (threads <= 1) {
                runsOfChunks.forEach(Runnable::run);
            } else {
                java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads, r -> {
                    Thread t = new Thread(r, "ferry-restart-copy");
                    t.setDaemon(true);
                    return t;
                });
                try {
                    for (java.util.concurrent.Future<?> f : pool.invokeAll(runsOfChunks.stream()
                            .map(java.util.concurrent.Executors::callable).toList())) {
                        f.get();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException("restart copy interrupted");
                } catch (java.util.concurrent.ExecutionException e) {
                    throw new IOException("restart copy failed: " + e.getCause(), e.getCause());
                } finally {
                    pool.shutdownNow();
                }
            }
        } finally {
            for (java.nio.channels.FileChannel c : open) {
                c.close();
            }
        }
        if (failed.get() != null) {
            throw failed.get();
        }
        if (!ok.get()) {
            return false;
        }
        if (!copy) {
            return true;
        }
        for (Entry e : entries) { // what Files.copy(COPY_ATTRIBUTES) kept: permission bits and modification time
            if (e instanceof Entry.RegularFile) {
                Path src = dir.resolve(e.path());
                Path dst = target.resolve(e.path());
                Files.setPosixFilePermissions(dst, Files.getPosixFilePermissions(src, LinkOption.NOFOLLOW_LINKS));
                Files.setLastModifiedTime(dst, Files.getLastModifiedTime(src, LinkOption.NOFOLLOW_LINKS));
            }
        }
        return true;
    }

    /** The check of one chunk, fed its bytes in order. */
    private interface ChunkCheck {
        void update(java.nio.ByteBuffer bytes);

        boolean matches();

        /** The check of chunk {@code id} of a manifest that records {@code keyId} (the current key, a previous one, or none). */
        static ChunkCheck of(io.ferry.model.ChunkId id, io.ferry.staging.Blobs blobs, String keyId) {
            return id.isZero() ? new Zeros() : new Named(id, blobs.namer(keyId));
        }

        /** Against the CRC32C recorded when this node pushed the chunk. */
        final class Crc implements ChunkCheck {
            private final java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
            private final int expected;

            Crc(int expected) {
                this.expected = expected;
            }

            public void update(java.nio.ByteBuffer bytes) {
                crc.update(bytes);
            }

            public boolean matches() {
                return (int) crc.getValue() == expected;
            }
        }

        /** Against the chunk id: the SHA-256 of its raw bytes, or their keyed hash when the store is encrypted. */
        record Named(io.ferry.model.ChunkId id, io.ferry.staging.Blobs.Namer namer) implements ChunkCheck {
            public void update(java.nio.ByteBuffer bytes) {
                namer.update(bytes);
            }

            public boolean matches() {
                return id.equals(namer.name());
            }
        }

        /** An all-zero chunk: every byte zero. */
        final class Zeros implements ChunkCheck {
            private static final java.nio.ByteBuffer ZEROS = java.nio.ByteBuffer.allocateDirect(PIECE).asReadOnlyBuffer();
            private boolean zero = true;

            public void update(java.nio.ByteBuffer bytes) {
                zero = zero && bytes.mismatch(ZEROS.duplicate().limit(bytes.remaining())) == -1;
            }

            public boolean matches() {
                return zero;
            }
        }
    }

    /** {@link #matches} without reading the files' bytes: types, sizes, link targets, nothing extra. */
    private static boolean layoutMatches(Path dir, Manifest m) throws IOException {
        Set<String> expected = new HashSet<>();
        for (Entry e : m.entries()) {
            expected.add(e.path());
            Path p = dir.resolve(e.path());
            if (e instanceof Entry.RegularFile f) {
                if (!Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) || Files.size(p) != f.size()) {
                    return false;
                }
            } else if (e instanceof Entry.Symlink s) {
                if (!Files.isSymbolicLink(p) || !Files.readSymbolicLink(p).toString().equals(s.target())) {
                    return false;
                }
            } else if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                return false;
            }
        }
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(p -> !p.equals(dir)).map(p -> dir.relativize(p).toString()).allMatch(expected::contains);
        }
    }
}

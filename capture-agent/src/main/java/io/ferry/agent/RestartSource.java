package io.ferry.agent;

import io.ferry.agent.peer.PeerAuth;
import io.ferry.agent.peer.PeerClient;
import io.ferry.model.Entry;
import io.ferry.model.ImageRef;
import io.ferry.model.Manifest;
import io.ferry.model.PeerAddresses;
import io.ferry.staging.ImageCorruptException;
import io.ferry.staging.LocalCache;
import io.ferry.staging.Progress;
import io.ferry.staging.Repository;
import io.ferry.staging.StagingPipeline;
import io.ferry.staging.internal.FileTrees;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

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
    private static final Logger LOG = LoggerFactory.getLogger(RestartSource.class);

    private RestartSource() {}

    /**
     * The sources a restore may use beyond this node's cache and the remote store, and what it checks
     * them against: an argument of {@link #materialise(StagingPipeline, LocalCache, ImageRef, Path, Sources)}.
     * {@link #none()} is the default; the other methods return a copy with one input changed.
     *
     * @param peers other nodes whose caches may hold the image, nearest first
     * @param unreachable names peers found unreachable (skipped, and added to when one is), shared across the
     *                    ranks of one restore so that a lost host costs one connection timeout, not one per rank
     * @param committedManifestSha256 the manifest digest the node read from the commit marker, against which
     *                                every tier is checked; null: read from the commit marker here
     * @param auth the secret each peer asked is shown
     */
    public record Sources(List<PeerAddresses.Peer> peers, Set<String> unreachable, String committedManifestSha256,
                          PeerAuth auth) {
        public Sources {
            Objects.requireNonNull(peers, "peers");
            Objects.requireNonNull(unreachable, "unreachable");
            Objects.requireNonNull(auth, "auth");
        }

        /**
         * No peers, a new (empty) set of unreachable peers, the digest read from the commit marker, no
         * secret shown: the node's cache, else the store.
         */
        public static Sources none() {
            return new Sources(List.of(), new HashSet<>(), null, PeerAuth.NONE);
        }

        /** These sources asking {@code peers} (nearest first). */
        public Sources peers(List<PeerAddresses.Peer> peers) {
            return new Sources(peers, unreachable, committedManifestSha256, auth);
        }

        /** These sources skipping, and adding to, {@code unreachable}. */
        public Sources unreachable(Set<String> unreachable) {
            return new Sources(peers, unreachable, committedManifestSha256, auth);
        }

        /** These sources checked against {@code committedManifestSha256} (null: the commit marker's). */
        public Sources committedManifestSha256(String committedManifestSha256) {
            return new Sources(peers, unreachable, committedManifestSha256, auth);
        }

        /** These sources showing each peer asked {@code auth}'s secret. */
        public Sources auth(PeerAuth auth) {
            return new Sources(peers, unreachable, committedManifestSha256, auth);
        }
    }

    /** {@link #materialise(StagingPipeline, LocalCache, ImageRef, Path, Sources)} with {@link Sources#none()}. */
    public static String materialise(StagingPipeline pipeline, LocalCache cache, ImageRef ref, Path target)
            throws IOException {
        return materialise(pipeline, cache, ref, target, Sources.none());
    }

    /**
     * Fills {@code target} (absent) with the image of {@code ref}; returns the tier used:
     * "local", "partner" or "remote". Every tier is checked against the committed manifest digest of
     * {@code sources} (read from the commit marker when it gives none): the manifest the store
     * holds must have those bytes (else the image is refused as swapped after the commit); the
     * node's own copy is checked against that manifest, by the CRC32C its staging recorded for
     * exactly that manifest, or by SHA-256. Each peer asked is shown {@code sources}' secret.
     *
     * @param sources the peers to ask (nearest first), those found unreachable, the committed
     *                manifest digest, the secret shown to peers
     */
    public static String materialise(StagingPipeline pipeline, LocalCache cache, ImageRef ref, Path target,
                                     Sources sources) throws IOException {
        String committedManifestSha256 = sources.committedManifestSha256() != null
                ? sources.committedManifestSha256() : committedDigest(pipeline, ref);
        Optional<String> near = nearby(pipeline, cache, ref, target, sources.peers(),
                sources.unreachable(), committedManifestSha256, sources.auth());
        if (near.isPresent()) {
            return near.get();
        }
        pipeline.pull(ref, target, Progress.NONE, committedManifestSha256);
        return "remote";
    }

    /**
     * The tiers of {@link #materialise(StagingPipeline, LocalCache, ImageRef, Path, Sources)} short of
     * the remote store, checked against {@code committedManifestSha256}: "local" or "partner" when a
     * copy here or on a peer verified into {@code target}, else empty, with {@code target} absent, for
     * the caller to pull it from the store (a node pulls its ranks that no cache holds together:
     * {@link StagingPipeline#pullAllCommitted}).
     */
    public static Optional<String> nearby(StagingPipeline pipeline, LocalCache cache,
            ImageRef ref, Path target,
                                                    List<PeerAddresses.Peer> peers, Set<String> unreachable,
                                                    String committedManifestSha256, PeerAuth auth) throws IOException {
        Repository.StoredManifest sm = committedManifest(pipeline, ref, committedManifestSha256);
        Manifest m = sm.manifest();
        FileTrees.delete(target);
        if (localCopyVerifies(pipeline, cache, ref, sm, target)) {
            return Optional.of(cache.isPartnerCopy(ref) ? "partner" : "local");
        }
        for (PeerAddresses.Peer peer : peers) {
            if (unreachable.contains(peer.node())) {
                continue;
            }
            FileTrees.delete(target);
            Files.createDirectories(target.getParent());
            try {
                if (PeerClient.get(peer, ref, target, auth)
                        && VerifiedCopy.copy(target, m, null, null, pipeline.repository().blobs())) {
                    return Optional.of("partner");
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
        return Optional.empty();
    }

    /**
     * Whether this node's cached copy of {@code ref} verifies against {@code sm} (copied into
     * {@code target} as it is read, unless null). An I/O error reading it (EIO, EACCES: a fault of
     * this node's disk, not of the image) counts as a copy that does not verify, so the restore
     * goes on to a partner's copy or the store instead of failing.
     */
    private static boolean localCopyVerifies(StagingPipeline pipeline, LocalCache cache, ImageRef ref,
                                             Repository.StoredManifest sm, Path target)
            throws InterruptedIOException {
        Path local = cache.imageDir(ref);
        try {
            return Files.isDirectory(local)
                    && VerifiedCopy.copy(local, sm.manifest(), target, localCheck(cache, ref, sm),
                    pipeline.repository().blobs());
        } catch (InterruptedIOException stop) {
            throw stop;
        } catch (IOException | UncheckedIOException e) {
            LOG.warn("ferry agent: rank " + ref.rank() + " of " + ref.job() + " generation " + ref.generation()
                    + ": reading this node's cached copy failed (" + e.getMessage() + "); trying the next source");
            return false;
        }
    }

    /** The manifest of {@code ref} as the store holds it, refused unless its bytes are the ones committed. */
    private static Repository.StoredManifest committedManifest(StagingPipeline pipeline, ImageRef ref,
                                                                                String committedManifestSha256)
            throws IOException {
        Repository.StoredManifest sm = pipeline.repository().readManifest(ref);
        if (!sm.sha256().equals(committedManifestSha256)) {
            throw new ImageCorruptException("image " + ref + ": the manifest on the store (SHA-256 "
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
        Repository.StoredManifest sm = committedManifest(pipeline, ref, committedManifestSha256);
        Path local = cache.imageDir(ref);
        if (localCopyVerifies(pipeline, cache, ref, sm, null)) {
            return cache.isPartnerCopy(ref)
                    ? "partner (a partner copy in this node's cache, verified against the manifest)"
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
                + (peers.isEmpty() ? "" : ", nor with "
                        + String.join(", ", peers.stream().map(PeerAddresses.Peer::node).toList()))
                + ")";
    }

    /** The tier alone ({@code local}, {@code partner} or {@code remote}) of {@link #plan}. */
    public static String tier(StagingPipeline pipeline, LocalCache cache, ImageRef ref, List<PeerAddresses.Peer> peers)
            throws IOException {
        return tier(pipeline, cache, ref, peers, committedDigest(pipeline, ref), PeerAuth.NONE);
    }

    /**
     * {@link #tier(StagingPipeline, LocalCache, ImageRef, List)} against the commit marker's
     * digest, showing peers {@code auth}.
     */
    public static String tier(StagingPipeline pipeline, LocalCache cache, ImageRef ref, List<PeerAddresses.Peer> peers,
                              String committedManifestSha256, PeerAuth auth) throws IOException {
        String p = plan(pipeline, cache, ref, peers, committedManifestSha256, auth);
        return p.substring(0, p.indexOf(' '));
    }

    /** The digest {@code ref}'s commit marker gives its manifest; an error when the generation is not committed. */
    private static String committedDigest(StagingPipeline pipeline, ImageRef ref) throws IOException {
        return pipeline.repository().committed(ref.job(), ref.generation())
                .orElseThrow(() -> new RestoreErrors.NotCommitted("generation " + ref.generation() + " of " + ref.job()
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
    private static int[] localCheck(LocalCache cache, ImageRef ref, Repository.StoredManifest sm)
            throws IOException {
        if (cache.isPartnerCopy(ref)) {
            return null;
        }
        int chunks = sm.manifest().entries().stream().filter(e -> e instanceof Entry.RegularFile)
                .mapToInt(e -> ((Entry.RegularFile) e).chunks().size()).sum();
        return cache.stagedCheck(ref)
                .filter(c -> c.manifestSha256().equals(sm.sha256()) && c.chunkCrc32c().length == chunks)
                .map(LocalCache.StagedCheck::chunkCrc32c).orElse(null);
    }
}

package io.ferry.staging;

import io.ferry.model.ChunkId;
import io.ferry.model.Entry;
import io.ferry.model.ImageRef;
import io.ferry.staging.packs.PackKeys;
import io.ferry.stores.ObjectNotFoundException;
import io.ferry.stores.Store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Garbage collection of chunks and packs no manifest references ({@code ferry store gc}), in two
 * runs at least {@code grace} apart, as fossil collection (Duplicacy) does it, so that it is
 * safe while pushes run on other nodes:
 * <ol>
 * <li>A run finds the chunks no manifest on the store references, records the time
 *     ({@code ferry/v1/gc/FOSSILS}, written first), then moves each to
 *     {@code ferry/v1/fossils/}: from then on a push does not find it and uploads it again,
 *     instead of counting on a chunk about to go.</li>
 * <li>A run at least {@code grace} later deletes each fossil no manifest references then, and
 *     puts back any that one does: a push that found the chunk before it was moved has written
 *     its manifest by then, as long as pushes take less than {@code grace}.</li>
 * </ol>
 * Packs (the pack layout) are collected whole, as chunks are: a pack goes once no manifest
 * references any blob in it. A pack whose live records are less than half its bytes is
 * repacked first ({@link PackUse}): its live records are copied into new packs and a moves
 * object says where, and then it goes as garbage ({@code docs/formats/pack.md}, "Garbage collection").
 * Each run also deletes the temporary objects interrupted puts left (a killed push on a POSIX
 * or HDFS store) once they are older than {@code grace} ({@link Store#deleteAbandoned}).
 * Killed at any point, the store still verifies: only chunks unreferenced at the scan are
 * moved (copied, then deleted), and fossils are only deleted once unreferenced twice. A
 * manifest that cannot be read stops the collection (what it references is unknown).
 */
public final class StoreGc {
    static final String FOSSILS = "ferry/v1/fossils/";
    static final String RECORD = "ferry/v1/gc/FOSSILS";

    private StoreGc() {}

    /**
     * What a run did: fossils deleted and put back (second step), chunks moved aside (first
     * step), or when it may go on; and the temporary objects of interrupted puts, older than the
     * grace period, it deleted.
     */
    public record Collected(int referenced, int deleted, long deletedBytes, int restored, int fossilized,
                            long fossilizedBytes, Instant waitUntil, int abandoned, int repacked, long repackedBytes) {
        Collected(int referenced, int deleted, long deletedBytes, int restored, int fossilized, long fossilizedBytes,
                  Instant waitUntil, int abandoned) {
            this(referenced, deleted, deletedBytes, restored, fossilized, fossilizedBytes, waitUntil, abandoned, 0, 0);
        }
    }

    public static Collected run(Repository repo, Duration grace, Clock clock, boolean dryRun) throws IOException {
        Store store = repo.store();
        // Interrupted puts' temporary objects: a put takes less than the grace period, as for fossils.
        int abandoned = store.deleteAbandoned(grace, dryRun);
        PackUse packs = new PackUse(store);
        Set<String> referenced = referencedChunkKeys(repo, packs);
        referenced.addAll(packs.referencedPackKeys());
        int deleted = 0;
        int restored = 0;
        long deletedBytes = 0;
        Instant since = fossilizedAt(store);
        if (since == null && !store.list(FOSSILS).isEmpty() && !dryRun) {
            since = clock.instant(); // fossils without a record (tampered with): their grace starts now
            store.put(RECORD, ByteBuffer.wrap(("fossilized-at " + since.toEpochMilli() + "\n").getBytes(StandardCharsets.UTF_8)));
        }
        if (since != null) {
            Instant due = since.plus(grace);
            if (clock.instant().isBefore(due)) {
                return new Collected(referenced.size(), 0, 0, 0, 0, 0, due, abandoned);
            }
            for (String fossil : store.list(FOSSILS)) {
                String chunk = liveKey(fossil);
                if (dryRun) {
                    continue;
                }
                byte[] bytes = store.getAtMost(fossil, Math.max(ReadLimits.CHUNK, ReadLimits.PACK));
                if (referenced.contains(chunk)) {
                    if (!store.exists(chunk)) {
                        store.put(chunk, ByteBuffer.wrap(bytes)); // a manifest written since needs it back
                    }
                    restored++;
                } else {
                    deleted++;
                    deletedBytes += bytes.length;
                }
                store.delete(fossil);
            }
            if (!dryRun) {
                store.delete(RECORD);
            }
        }
        if (!dryRun) {
            Set<String> fossilPacks = new HashSet<>();
            store.list(FOSSILS + "packs/").forEach(k -> fossilPacks.add(k.substring(k.lastIndexOf('/') + 1)));
            for (String key : packs.unneededMoves(fossilPacks)) {
                store.delete(key); // no manifest names the pack, which is gone: nothing follows these moves
            }
        }
        int fossilized = 0;
        long fossilizedBytes = 0;
        List<String> garbage = new java.util.ArrayList<>(repo.listChunkKeys().stream()
                .filter(k -> Repository.chunkIdOf(k).isPresent() && !referenced.contains(k)).toList());
        // A pack goes when no manifest references any blob in it; one that is mostly dead is repacked below.
        store.list(PackKeys.PACKS).stream().filter(k -> PackKeys.nameOf(k).isPresent() && !referenced.contains(k))
                .forEach(garbage::add);
        // Mostly dead packs: their live records go into new packs, then the old ones go as garbage below.
        // (after the listing above: the packs a repack writes are in use)
        PackUse.Repacked repacked = packs.repack(dryRun);
        garbage.addAll(repacked.oldPackKeys());
        if (!garbage.isEmpty() && !dryRun) {
            store.put(RECORD, ByteBuffer.wrap(("fossilized-at " + clock.millis() + "\n").getBytes(StandardCharsets.UTF_8)));
            for (String chunk : garbage) {
                byte[] bytes;
                try {
                    bytes = store.getAtMost(chunk, Math.max(ReadLimits.CHUNK, ReadLimits.PACK));
                } catch (ObjectNotFoundException gone) {
                    continue;
                }
                store.put(fossilKey(chunk), ByteBuffer.wrap(bytes));
                store.delete(chunk);
                fossilized++;
                fossilizedBytes += bytes.length;
            }
        } else {
            fossilized = garbage.size();
        }
        return new Collected(referenced.size(), deleted, deletedBytes, restored, fossilized, fossilizedBytes,
                fossilized > 0 ? clock.instant().plus(grace) : null, abandoned, repacked.oldPackKeys().size(),
                repacked.bytesCopied());
    }

    /** Every chunk key a manifest on the store references, committed or not (a push in flight writes its own). */
    static Set<String> referencedChunkKeys(Repository repo, PackUse packs) throws IOException {
        Set<String> keys = new HashSet<>();
        for (Repository.GenerationListing g : repo.listGenerations()) {
            for (int r : g.ranks()) {
                ImageRef ref = new ImageRef(g.job(), g.generation(), r);
                Repository.StoredManifest m;
                try {
                    m = repo.readManifest(ref);
                } catch (ObjectNotFoundException prunedMeanwhile) {
                    continue;
                } catch (IOException | RuntimeException e) {
                    throw new IOException("gc stops: manifest " + Repository.manifestKey(ref) + " cannot be read, so what it"
                            + " references is unknown (" + e.getMessage() + "); repair or remove it first", e);
                }
                packs.add(m.manifest());
                for (Entry e : m.manifest().entries()) {
                    if (e instanceof Entry.RegularFile f && !f.inPacks()) {
                        for (ChunkId id : f.chunks()) {
                            if (!id.isZero()) {
                                keys.add(Repository.chunkKey(id));
                            }
                        }
                    }
                }
            }
        }
        return keys;
    }

    /** Where a chunk or pack is kept while it is a fossil: packs under {@code fossils/packs/}, chunks as before. */
    static String fossilKey(String key) {
        return key.startsWith(PackKeys.PACKS) ? FOSSILS + "packs/" + key.substring(PackKeys.PACKS.length())
                : FOSSILS + key.substring(Repository.CHUNKS.length());
    }

    /** The key a fossil came from. */
    static String liveKey(String fossil) {
        String rest = fossil.substring(FOSSILS.length());
        return rest.startsWith("packs/") ? PackKeys.PACKS + rest.substring("packs/".length()) : Repository.CHUNKS + rest;
    }

    /** When the fossils were moved aside (the record is written before the first move), or null. */
    private static Instant fossilizedAt(Store store) throws IOException {
        byte[] b;
        try {
            b = store.getAtMost(RECORD, ReadLimits.GC_RECORD);
        } catch (ObjectNotFoundException none) {
            return null;
        }
        String s = new String(b, StandardCharsets.UTF_8).trim();
        try {
            if (s.startsWith("fossilized-at ")) {
                return Instant.ofEpochMilli(Long.parseLong(s.substring("fossilized-at ".length())));
            }
        } catch (NumberFormatException bad) {
            // said below
        }
        throw new IOException("gc record " + RECORD + " in " + store.uri() + " is damaged ('" + s
                + "'): write 'fossilized-at <epoch ms>' with the time of the last gc, or the current time, to go on");
    }
}

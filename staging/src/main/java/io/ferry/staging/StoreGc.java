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
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Garbage collection of chunks and packs no manifest references ({@code ferry store gc}), in two
 * runs at least {@code grace} apart, as fossil collection (Duplicacy) does it, so that it is
 * safe while pushes run on other nodes:
 * <ol>
 * <li>A run finds the chunks no manifest on the store references and moves each to
 *     {@code ferry/v1/fossils/}: from then on a push does not find it and uploads it again,
 *     instead of counting on a chunk about to go. The record {@code ferry/v1/gc/FOSSILS} says
 *     {@code fossilizing-since T} before the first move and {@code fossilized-at T} with the
 *     time after the last, so the grace counts from the last move. A run that finds the first
 *     (a run killed while moving) lets the grace start again then.</li>
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
 *
 * <p>Two runs on one store never overlap: a run that changes anything holds the store's
 * {@link GcLease} from start to end (a dry run, which changes nothing, takes none), and one that
 * finds it held by another refuses with {@link GcLease.HeldException}, naming the holder.
 */
public final class StoreGc {
    static final String FOSSILS = "ferry/v1/fossils/";
    static final String RECORD = "ferry/v1/gc/FOSSILS";
    private static final String FOSSILIZED_AT = "fossilized-at ";
    private static final String FOSSILIZING_SINCE = "fossilizing-since ";

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

    /** A run in as many passes as {@link #passesFor} gives for this store and this JVM's heap. */
    public static Collected run(Repository repo, Duration grace, Clock clock, boolean dryRun) throws IOException {
        return run(repo, grace, clock, dryRun, 0);
    }

    /**
     * A run in {@code passes} passes (0: as many as {@link #passesFor} gives), each over a range
     * of the 256 pack folders: a pass reads every manifest again and counts only the records
     * that lie in its range, so gc's memory is one range's live records, not the store's.
     */
    public static Collected run(Repository repo, Duration grace, Clock clock, boolean dryRun, int passes)
            throws IOException {
        return run(repo, grace, clock, dryRun, passes, GcLease.Holder.current(), GcLease.DEFAULT_LENGTH);
    }

    /**
     * {@link #run(Repository, Duration, Clock, boolean, int)} holding the store's gc lease as
     * {@code holder}, for {@code lease} at a time (renewed every third of it while the run goes on).
     */
    public static Collected run(Repository repo, Duration grace, Clock clock, boolean dryRun, int passes,
                                GcLease.Holder holder, Duration lease) throws IOException {
        if (dryRun) {
            return collect(repo, grace, clock, true, passes, null);
        }
        try (GcLease held = GcLease.acquire(repo.store(), holder, lease, clock)) {
            Collected c = collect(repo, grace, clock, false, passes, held);
            held.check(); // lost at the very end: say so rather than claim a clean run
            return c;
        }
    }

    private static Collected collect(Repository repo, Duration grace, Clock clock, boolean dryRun,
            int passes, GcLease lease) throws IOException {
        Store store = repo.store();
        // Interrupted puts' temporary objects: a put takes less than the grace period, as for fossils.
        int abandoned = store.deleteAbandoned(grace, dryRun);
        PackNames present = PackNames.list(store);
        int n = passes > 0 ? Math.min(passes, 256) : passesFor(present.size(), Runtime.getRuntime().maxMemory());
        Instant since = fossilizedAt(store);
        if ((since == null && !store.list(FOSSILS).isEmpty()) || Instant.MAX.equals(since)) {
            // Fossils without a record (tampered with), or moved by a run killed before it said when it
            // was done: the grace starts now, after every move there was.
            since = clock.instant();
            if (!dryRun) {
                store.put(RECORD, record(FOSSILIZED_AT, since.toEpochMilli()));
            }
        }
        if (since != null && clock.instant().isBefore(since.plus(grace))) {
            Set<String> referenced = referencedChunkKeys(repo, null, true);
            return new Collected(referenced.size(), 0, 0, 0, 0, 0, since.plus(grace), abandoned);
        }
        Passes t = new Passes(repo, present, since != null, clock, dryRun, lease);
        for (int pass = 0; pass < n; pass++) {
            t.keep();
            t.pass(256 * pass / n, 256 * (pass + 1) / n, pass == 0);
        }
        if (t.recordWritten) {
            store.put(RECORD, record(FOSSILIZED_AT, clock.millis())); // after the last move: the grace counts from here
        } else if (t.due && !dryRun) {
            store.delete(RECORD); // every old fossil is dealt with, and this run moved none aside
        }
        return new Collected(t.referenced, t.deleted, t.deletedBytes, t.restored, t.fossilized, t.fossilizedBytes,
                t.fossilized > 0 ? clock.instant().plus(grace) : null, abandoned, t.repacked, t.repackedBytes);
    }

    /**
     * How many passes gc makes over a store of {@code packs} packs with {@code heapBytes} of heap:
     * enough that one pass's live records (at most a pack's worth of 64 KiB blobs per pack, 16
     * bytes each, {@link LiveRecords}) fit in a quarter of the heap. One for any store of under
     * about 8,000 packs per 256 MiB of heap (256 GiB of 32 MiB packs).
     */
    static int passesFor(long packs, long heapBytes) {
        long perPack = (PackUse.REPACK_SIZE / (64 << 10)) * 16L;
        long budget = Math.max(heapBytes / 4, 1);
        return (int) Math.max(1, Math.min(256, (packs * perPack + budget - 1) / budget));
    }

    /**
     * The passes of one run: what they share (the store, the packs present when the run began,
     * whether old fossils are due, the clock, whether this is a dry run), and what they did, summed.
     */
    private static final class Passes {
        final Repository repo;
        final PackNames present;
        final boolean due;
        final Clock clock;
        final boolean dryRun;
        /** The store's gc lease, null for a dry run. */
        final GcLease lease;
        int referenced;
        int deleted;
        long deletedBytes;
        int restored;
        int fossilized;
        long fossilizedBytes;
        int repacked;
        long repackedBytes;
        boolean recordWritten;

        Passes(Repository repo, PackNames present, boolean due, Clock clock, boolean dryRun, GcLease lease) {
            this.lease = lease;
            this.repo = repo;
            this.present = present;
            this.due = due;
            this.clock = clock;
            this.dryRun = dryRun;
        }

        /** Stops the run if it lost its lease (another gc took it over after it expired). */
        void keep() throws IOException {
            if (lease != null) {
                lease.check();
            }
        }

        /**
         * One pass over the pack folders {@code [from, to)} (and, when {@code chunks}, over the chunks
         * of the chunk layout): the old fossils there deleted or put back when {@code due}, moves
         * objects no manifest needs dropped, mostly dead packs repacked, and what no manifest
         * references moved aside, after the record of when (written once a run, before its first move).
         */
        void pass(int from, int to, boolean chunks) throws IOException {
            Store store = repo.store();
            PackUse packs = new PackUse(store, present, from, to);
            // the first pass deals with the chunk layout's
            Set<String> referenced = referencedChunkKeys(repo, packs, chunks);
            referenced.addAll(packs.referencedPackKeys());
            this.referenced += referenced.size();
            List<String> fossils = new ArrayList<>();
            if (chunks) {
                store.list(FOSSILS).stream().filter(k -> !k.startsWith(FOSSILS + "packs/")).forEach(fossils::add);
            }
            Set<String> fossilPacks = new HashSet<>();
            for (int folder = from; folder < to; folder++) {
                for (String k : store.list(FOSSILS + "packs/" + PackNames.folder(folder))) {
                    fossils.add(k);
                    fossilPacks.add(k.substring(k.lastIndexOf('/') + 1));
                }
            }
            if (due && !dryRun) {
                for (String fossil : fossils) {
                    keep();
                    String live = liveKey(fossil);
                    byte[] bytes = store.getAtMost(fossil, Math.max(ReadLimits.CHUNK, ReadLimits.PACK));
                    if (referenced.contains(live)) {
                        if (!store.exists(live)) {
                            store.put(live, ByteBuffer.wrap(bytes)); // a manifest written since needs it back
                        }
                        restored++;
                    } else {
                        deleted++;
                        deletedBytes += bytes.length;
                    }
                    store.delete(fossil);
                    if (fossil.startsWith(FOSSILS + "packs/")) {
                        fossilPacks.remove(fossil.substring(fossil.lastIndexOf('/') + 1));
                    }
                }
            }
            if (!dryRun) {
                for (String key : packs.unneededMoves(fossilPacks)) {
                    store.delete(key); // no manifest names the pack, which is gone: nothing follows these moves
                }
            }
            List<String> garbage = new ArrayList<>();
            if (chunks) {
                repo.listChunkKeys().stream()
                        .filter(k -> Repository.chunkIdOf(k).isPresent() && !referenced.contains(k))
                        .forEach(garbage::add);
            }
            // A pack goes when no manifest references any blob in it; one that is mostly dead is repacked below.
            present.inFolders(from, to).stream().map(PackKeys::packKey).filter(k -> !referenced.contains(k))
                    .forEach(garbage::add);
            // Mostly dead packs: their live records go into new packs, then the old ones go as garbage below.
            // (after the listing above: the packs a repack writes are in use)
            PackUse.Repacked done = packs.repack(dryRun);
            garbage.addAll(done.oldPackKeys());
            repacked += done.oldPackKeys().size();
            repackedBytes += done.bytesCopied();
            if (dryRun) {
                fossilized += garbage.size();
                return;
            }
            for (String key : garbage) {
                keep();
                byte[] bytes;
                try {
                    bytes = store.getAtMost(key, Math.max(ReadLimits.CHUNK, ReadLimits.PACK));
                } catch (ObjectNotFoundException gone) {
                    continue;
                }
                if (!recordWritten) {
                    store.put(RECORD, record(FOSSILIZING_SINCE, clock.millis()));
                    recordWritten = true;
                }
                store.put(fossilKey(key), ByteBuffer.wrap(bytes));
                store.delete(key);
                fossilized++;
                fossilizedBytes += bytes.length;
            }
        }
    }

    private static ByteBuffer record(String what, long epochMillis) {
        return ByteBuffer.wrap((what + epochMillis + "\n").getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Every chunk key a manifest on the store references, committed or not (a push in flight
     * writes its own), unless not {@code chunks}; and, given {@code packs}, what each manifest uses of the packs.
     */
    static Set<String> referencedChunkKeys(Repository repo, PackUse packs, boolean chunks) throws IOException {
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
                    throw new IOException("gc stops: manifest " + Repository.manifestKey(ref)
                            + " cannot be read, so what it"
                            + " references is unknown (" + e.getMessage() + "); repair or remove it first", e);
                }
                if (packs != null) {
                    packs.add(m.manifest());
                }
                for (Entry e : m.manifest().entries()) {
                    if (chunks && e instanceof Entry.RegularFile f && !f.inPacks()) {
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
        return rest.startsWith("packs/") ? PackKeys.PACKS + rest.substring("packs/".length())
                : Repository.CHUNKS + rest;
    }

    /**
     * When the last fossil was moved aside, or null when there is no record, or
     * {@link Instant#MAX} when the run that moved them was killed before it said when it was done.
     */
    private static Instant fossilizedAt(Store store) throws IOException {
        byte[] b;
        try {
            b = store.getAtMost(RECORD, ReadLimits.GC_RECORD);
        } catch (ObjectNotFoundException none) {
            return null;
        }
        String s = new String(b, StandardCharsets.UTF_8).trim();
        try {
            if (s.startsWith(FOSSILIZED_AT)) {
                return Instant.ofEpochMilli(Long.parseLong(s.substring(FOSSILIZED_AT.length())));
            }
            if (s.startsWith(FOSSILIZING_SINCE)) {
                Long.parseLong(s.substring(FOSSILIZING_SINCE.length()));
                return Instant.MAX;
            }
        } catch (NumberFormatException bad) {
            // said below
        }
        throw new IOException("gc record " + RECORD + " in " + store.uri() + " is damaged ('" + s
                + "'): write 'fossilized-at <epoch ms>' with the time of the last gc, or the current time, to go on");
    }
}

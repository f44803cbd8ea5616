package io.ferry.staging;

import io.ferry.compression.CorruptChunkException;
import io.ferry.model.BlobPlace;
import io.ferry.model.ChunkId;
import io.ferry.staging.crypt.EncryptionKeyException;
import io.ferry.staging.packs.PackFormat;
import io.ferry.staging.packs.PackKeys;
import io.ferry.staging.packs.PackMoves;
import io.ferry.stores.ObjectNotFoundException;
import io.ferry.stores.Store;
import io.ferry.stores.StoreException;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Heals the damaged records of quarantined packs ({@link PackQuarantine}) from sound copies of
 * the same blobs elsewhere on the store: the second half of {@code ferry store verify --repair}.
 * A push never reuses a place in a quarantined pack, so the next push that holds a damaged
 * blob's bytes writes them again into a new pack; this pass finds such a copy (by the blob's
 * name, in the trailers of the packs on the store), checks it (CRC32C, decompression, SHA-256
 * against the name, raw length), and adds the damaged record's offset to the quarantined pack's
 * moves object, which is written again whole, in one atomic put. Images that used the damaged
 * record then resolve it to the copy, as they resolve the pack's sound records: older
 * generations come back, as they do when a quarantined chunk object is written again. A damaged
 * record no copy exists for stays as it is, for a later run. Run it like gc, one at a time per
 * store; pushes may run meanwhile (it only adds places that are verified and durable).
 */
public final class PackHeal {
    private PackHeal() {}

    /** What one run did: records healed, records still without a copy, and a line per quarantined pack it changed. */
    public record Healed(int healed, int missing, List<String> details) {}

    public static Healed run(Repository repo) throws StoreException {
        Store store = repo.store();
        // Blob name -> the damaged records (quarantined pack, offset) that need it.
        Map<ChunkId, List<Wanted>> wanted = new LinkedHashMap<>();
        Map<String, TreeMap<Long, PackMoves.Moved>> moves = new HashMap<>();
        for (String key : store.list(PackQuarantine.QUARANTINE)) {
            String pack = PackQuarantine.packOf(key);
            if (pack == null) {
                continue;
            }
            byte[] bytes;
            List<PackFormat.Record> records;
            try {
                bytes = store.getAtMost(key, ReadLimits.PACK);
                records = PackFormat.records(bytes, bytes.length);
            } catch (ObjectNotFoundException | IllegalArgumentException unreadable) {
                continue; // a trailer that cannot be read names no blob: nothing to heal from it
            }
            TreeMap<Long, PackMoves.Moved> known = new TreeMap<>();
            try {
                PackMoves m = PackMoves.decode(store.getAtMost(PackMoves.key(pack), ReadLimits.MOVES), pack);
                for (PackFormat.Record r : records) {
                    m.resolve(r.offset()).ifPresent(to -> known.put((long) r.offset(), to));
                }
            } catch (ObjectNotFoundException none) {
                // quarantined before any record was copied out
            }
            moves.put(pack, known);
            for (PackFormat.Record r : records) {
                if (!known.containsKey((long) r.offset())) {
                    wanted.computeIfAbsent(r.id(), k -> new ArrayList<>()).add(new Wanted(pack, r.offset()));
                }
            }
        }
        if (wanted.isEmpty()) {
            return new Healed(0, 0, List.of());
        }
        Map<ChunkId, PackMoves.Moved> copies = findCopies(store, repo.blobs(), wanted);
        List<String> details = new ArrayList<>();
        int healed = 0;
        int missing = 0;
        Map<String, Integer> added = new LinkedHashMap<>();
        for (Map.Entry<ChunkId, List<Wanted>> e : wanted.entrySet()) {
            PackMoves.Moved copy = copies.get(e.getKey());
            for (Wanted w : e.getValue()) {
                if (copy == null) {
                    missing++;
                } else {
                    moves.get(w.pack()).put(w.offset(), copy);
                    added.merge(w.pack(), 1, Integer::sum);
                    healed++;
                }
            }
        }
        for (Map.Entry<String, Integer> a : added.entrySet()) {
            store.put(PackMoves.key(a.getKey()),
                    ByteBuffer.wrap(new PackMoves(a.getKey(), moves.get(a.getKey())).encode()));
            details.add("healed " + a.getValue() + " damaged record(s) of quarantined pack " + a.getKey()
                    + " from copies on the store");
        }
        return new Healed(healed, missing, details);
    }

    private record Wanted(String pack, long offset) {}

    /** A sound record of each wanted blob in the packs on the store, read from their trailers and checked. */
    private static Map<ChunkId, PackMoves.Moved> findCopies(Store store, Blobs blobs, Map<ChunkId, List<Wanted>> wanted)
            throws StoreException {
        Map<ChunkId, PackMoves.Moved> out = new HashMap<>();
        byte[] raw = new byte[BlobPlace.MAX_LENGTH];
        for (String key : store.list(PackKeys.PACKS)) {
            Optional<String> name = PackKeys.nameOf(key);
            if (name.isEmpty() || out.size() == wanted.size()) {
                continue;
            }
            List<PackFormat.Record> records;
            try {
                records = trailer(store, key);
            } catch (ObjectNotFoundException | IllegalArgumentException goneOrDamaged) {
                continue; // the scrub reports it; no copy is taken from it
            }
            for (PackFormat.Record r : records) {
                if (!wanted.containsKey(r.id()) || out.containsKey(r.id())) {
                    continue;
                }
                byte[] record = new byte[r.length()];
                store.readRange(key, r.offset(), record, 0, r.length());
                try {
                    blobs.decode(record, 0, r.length(), r.id(), raw, "copy of blob " + r.id() + " in " + key);
                    out.put(r.id(), new PackMoves.Moved(name.get(), r.offset(), r.length()));
                } catch (CorruptChunkException | EncryptionKeyException notProvenSound) {
                    // damaged, or sealed with a key this configuration lacks: not a proven copy; look further
                }
            }
        }
        return out;
    }

    /** A pack's records from its header and tail alone: the footer, then the trailer it points at. */
    static List<PackFormat.Record> trailer(Store store, String key) throws StoreException {
        long size = store.size(key);
        if (size < PackFormat.HEADER + PackFormat.FOOTER || size > PackFormat.MAX_PACK) {
            throw new IllegalArgumentException("pack " + key + " of " + size + " bytes");
        }
        byte[] header = new byte[PackFormat.HEADER];
        store.readRange(key, 0, header, 0, header.length);
        PackFormat.checkHeader(header);
        byte[] footer = new byte[PackFormat.FOOTER];
        store.readRange(key, size - PackFormat.FOOTER, footer, 0, footer.length);
        long at = PackFormat.trailerOffset(footer, 0, size);
        byte[] tail = new byte[(int) (size - at)];
        store.readRange(key, at, tail, 0, tail.length);
        return PackFormat.records(tail, 0, size, at);
    }
}

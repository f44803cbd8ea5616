package io.ferry.staging;

import io.ferry.model.BlobPlace;
import io.ferry.model.Entry;
import io.ferry.model.Manifest;
import io.ferry.staging.packs.PackFormat;
import io.ferry.staging.packs.PackKeys;
import io.ferry.staging.packs.PackMoves;
import io.ferry.staging.packs.PackResolver;
import io.ferry.staging.packs.PackWriter;
import io.ferry.stores.ObjectNotFoundException;
import io.ferry.stores.Store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What the manifests on a store use of its packs, for {@link StoreGc}: every record a manifest
 * names, followed to where gc moved it, per pack. From it, gc keeps the packs in use, repacks
 * those that are mostly dead (copies their live records into new packs, writes a
 * {@link PackMoves} object, then lets the old pack go as garbage), and drops moves objects no
 * manifest needs any more. It covers the packs of a range of pack folders (a gc pass's): the
 * records that lie elsewhere are not counted, so its memory is that range's live records.
 * Single use, not thread-safe.
 */
final class PackUse {
    /** A pack whose live records take less than this share of its bytes is repacked. */
    static final double REPACK_BELOW = 0.5;
    /** Size of the packs a repack writes: {@code staging.pack-size}'s default (gc runs without a job's settings). */
    static final int REPACK_SIZE = 32 << 20;
    private final Store store;
    private final PackNames present;
    /** The pack folders (first byte of the name) this covers: {@code [from, to)}. */
    private final int from;
    private final int to;
    private final PackResolver resolver;
    /**
     * Live records of each pack (8 to 16 bytes each: gc's memory grows with the live records, see docs/operators.md).
     */
    private final Map<String, LiveRecords> live = new HashMap<>();
    /** Packs in this range some manifest names, or that a record in use moved out of (whether there now or moved). */
    private final Set<String> named = new HashSet<>();
    /** Whether each pack the manifest being counted leads to is on the store (cleared per manifest: bounded). */
    private final Map<String, Boolean> presentInManifest = new HashMap<>();

    /** The packs whose folder is in {@code [from, to)}, of those {@code present} on the store. */
    PackUse(Store store, PackNames present, int from, int to) {
        this.store = store;
        this.present = present;
        this.from = from;
        this.to = to;
        // Each record of a manifest asks whether its pack is there: asked once per pack per manifest.
        this.resolver = new PackResolver(store, name -> presentInManifest.computeIfAbsent(name, present::contains));
    }

    /** A pack whose moves a record in use was followed through: its moves object is needed. */
    private void followed(String pack) {
        if (covers(pack)) {
            named.add(pack);
        }
    }

    private boolean covers(String pack) {
        int folder = PackNames.folderOf(pack);
        return folder >= from && folder < to;
    }

    /** Counts the records a pack-layout manifest names. */
    void add(Manifest m) throws IOException {
        presentInManifest.clear();
        m.packs().stream().filter(this::covers).forEach(named::add);
        for (Entry e : m.entries()) {
            if (e instanceof Entry.RegularFile f && f.inPacks()) {
                for (BlobPlace p : f.places()) {
                    if (!p.isZero()) {
                        PackResolver.Place at = resolver.resolve(m.packs().get(p.pack()), p.offset(), p.recordLength(),
                                this::followed);
                        if (!covers(at.pack())) {
                            continue; // another pass counts it
                        }
                        live.computeIfAbsent(at.pack(), k -> new LiveRecords()).add(at.offset(), at.recordLength());
                    }
                }
            }
        }
    }

    /**
     * Keys of the packs a record in use lies in (where the record is now, or the pack a manifest names if it is gone).
     */
    Set<String> referencedPackKeys() {
        Set<String> keys = new HashSet<>();
        live.keySet().forEach(p -> keys.add(PackKeys.packKey(p)));
        return keys;
    }

    /** What a repack did: the old packs (garbage now), the packs written, and the live bytes copied. */
    record Repacked(List<String> oldPackKeys, int packsWritten, long bytesCopied) {}

    /**
     * Repacks every pack in this range whose live records are less than half its bytes, and that
     * holds at least one dead record (a small pack is mostly header and trailer): the
     * live records go into new packs (durable first), then the moves object (durable), and only
     * then is the old pack returned as garbage for the caller to move aside. Killed at any point,
     * every manifest still resolves: the old pack stays until its moves object is written.
     */
    Repacked repack(boolean dryRun) throws IOException {
        List<String> old = new ArrayList<>();
        PackWriter writer = new PackWriter(store, REPACK_SIZE);
        Map<String, PackMoves> moved = new HashMap<>();
        long copied = 0;
        for (Map.Entry<String, LiveRecords> en : live.entrySet()) {
            String pack = en.getKey();
            if (!present.contains(pack)) {
                continue;
            }
            long liveBytes = en.getValue().bytes();
            long size;
            try {
                size = store.size(PackKeys.packKey(pack));
            } catch (ObjectNotFoundException gone) {
                continue;
            }
            if (liveBytes >= REPACK_BELOW * size) {
                continue;
            }
            byte[] bytes = store.getAtMost(PackKeys.packKey(pack), ReadLimits.PACK);
            List<PackFormat.Record> records = PackFormat.records(bytes, bytes.length);
            List<PackFormat.Record> kept = records.stream()
                    .filter(r -> en.getValue().lengthAt(r.offset()) == r.length()).toList();
            if (kept.size() == records.size()) {
                // no dead record: a small pack is mostly header and trailer, and a repack would write the same again
                continue;
            }
            old.add(PackKeys.packKey(pack));
            if (dryRun) {
                continue;
            }
            Map<Long, PackMoves.Moved> moves = new TreeMap<>();
            for (PackFormat.Record r : kept) {
                PackWriter.Placed placed = writer.append(r.id(), bytes, r.offset(), r.length());
                moves.put((long) r.offset(), new PackMoves.Moved(placed.pack(), placed.offset(), r.length()));
                copied += r.length();
            }
            moved.put(pack, new PackMoves(pack, moves));
        }
        writer.finish(); // the new packs are durable before the moves that name them
        for (PackMoves m : moved.values()) {
            store.put(PackMoves.key(m.pack()), ByteBuffer.wrap(m.encode()));
        }
        return new Repacked(old, writer.packs(), copied);
    }

    /**
     * Moves objects no manifest needs: of packs in this range that no manifest names, and that
     * are neither on the store nor fossils. Returns their keys.
     */
    List<String> unneededMoves(Set<String> fossilPacks) throws IOException {
        List<String> out = new ArrayList<>();
        for (String key : store.list(PackMoves.MOVED)) {
            PackMoves.packOf(key).filter(p -> covers(p) && !named.contains(p) && !present.contains(p)
                    && !fossilPacks.contains(p)).ifPresent(p -> out.add(key));
        }
        return out;
    }
}

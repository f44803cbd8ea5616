package io.ferry.staging.packs;

import io.ferry.model.BlobPlace;
import io.ferry.model.ChunkId;
import io.ferry.model.Entry;
import io.ferry.model.Manifest;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The blobs a node knows the places of, for deduplication without reading the store's whole
 * index ({@code docs/formats/pack.md}, "Dedup lookups, bounded"): per manifest (keyed by its
 * store key), the blobs it lists and where they lie. A push looks up its rank's latest
 * generations here, reading from the store only the manifests it does not hold; every push
 * adds its own. Bounded by blobs held ({@code staging.dedup-cache}); when full, whole
 * manifests are dropped, least recently used first. A blob not found is written again: the
 * bound costs bytes stored twice, never a wrong image. Thread-safe.
 */
public final class DedupCache {
    /** Bytes one cached blob costs on the heap (id, location, map entry), measured roughly: 150. */
    public static final int BYTES_PER_BLOB = 150;
    private final long maxBlobs;
    private final LinkedHashMap<String, Map<ChunkId, BlobLocation>> byManifest = new LinkedHashMap<>(16, 0.75f, true);
    private long blobs;

    public DedupCache(long maxBytes) {
        this.maxBlobs = Math.max(0, maxBytes / BYTES_PER_BLOB);
    }

    /** The blobs of a cached manifest, if held (and marks it used). */
    public synchronized Optional<Map<ChunkId, BlobLocation>> get(String manifestKey) {
        return Optional.ofNullable(byManifest.get(manifestKey));
    }

    /**
     * The blobs of at most {@code max} cached manifests whose keys start with {@code prefix}
     * (one generation's directory), other than those in {@code except}, most recently used first:
     * what this node pushed for the job's other ranks. Does not mark them used.
     */
    public synchronized List<Map<ChunkId, BlobLocation>> siblings(String prefix,
            Set<String> except, int max) {
        List<Map<ChunkId, BlobLocation>> out = new ArrayList<>();
        List<Map.Entry<String, Map<ChunkId, BlobLocation>>> entries = new ArrayList<>(byManifest.entrySet());
        for (int i = entries.size() - 1; i >= 0 && out.size() < max; i--) {
            String key = entries.get(i).getKey();
            if (key.startsWith(prefix) && !except.contains(key)) {
                out.add(entries.get(i).getValue());
            }
        }
        return out;
    }

    /** Remembers a pack-layout manifest's blobs (replacing what was held under its key); returns them. */
    public Map<ChunkId, BlobLocation> put(String manifestKey, Manifest m) {
        Map<ChunkId, BlobLocation> map = locations(m);
        synchronized (this) {
            Map<ChunkId, BlobLocation> old = byManifest.remove(manifestKey);
            if (old != null) {
                blobs -= old.size();
            }
            if (map.size() > maxBlobs) {
                return map; // larger than the whole cache: used by this push, not kept
            }
            byManifest.put(manifestKey, map);
            blobs += map.size();
            for (Iterator<Map.Entry<String, Map<ChunkId, BlobLocation>>> it = byManifest.entrySet().iterator();
                 blobs > maxBlobs && it.hasNext(); ) {
                Map.Entry<String, Map<ChunkId, BlobLocation>> eldest = it.next();
                blobs -= eldest.getValue().size();
                it.remove();
            }
        }
        return map;
    }

    /** Every stored blob of a pack-layout manifest and where it lies. */
    public static Map<ChunkId, BlobLocation> locations(Manifest m) {
        Map<ChunkId, BlobLocation> out = new HashMap<>();
        for (Entry e : m.entries()) {
            if (e instanceof Entry.RegularFile f && f.inPacks()) {
                for (int i = 0; i < f.chunks().size(); i++) {
                    BlobPlace p = f.places().get(i);
                    if (!p.isZero()) {
                        out.put(f.chunks().get(i),
                                new BlobLocation(m.packs().get(p.pack()), p.offset(), p.recordLength(), p.length()));
                    }
                }
            }
        }
        return out;
    }
}

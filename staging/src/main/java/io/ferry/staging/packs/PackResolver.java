package io.ferry.staging.packs;

import io.ferry.staging.ReadLimits;
import io.ferry.stores.ObjectNotFoundException;
import io.ferry.stores.Store;
import io.ferry.stores.StoreException;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Finds where a record a manifest names lies now: in the pack the manifest names while that
 * pack is on the store, else where gc moved it ({@link PackMoves}), following moves of moves.
 * Asks the store once per pack (whether it is there, and its moves). Thread-safe.
 */
public final class PackResolver {
    /** Moves of moves followed at most: each gc run adds at most one level. */
    private static final int MAX_HOPS = 64;
    private final Store store;
    private final Map<String, Boolean> present = new ConcurrentHashMap<>();
    private final Map<String, Optional<PackMoves>> moves = new ConcurrentHashMap<>();
    private final Predicate<String> known;

    /** Asks the store whether each pack is there. */
    public PackResolver(Store store) {
        this(store, null);
    }

    /** Takes {@code listed} for the packs that are there (a scrub or gc listed them already). */
    public PackResolver(Store store, Predicate<String> listed) {
        this.store = store;
        this.known = listed;
    }

    public record Place(String pack, long offset, int recordLength) {}

    /** Where the record at {@code offset} of {@code pack} lies now; itself when nothing moved it. */
    public Place resolve(String pack, long offset, int recordLength) throws StoreException {
        return resolve(pack, offset, recordLength, moved -> { });
    }

    /**
     * {@link #resolve(String, long, int)}, telling {@code movedFrom} each pack it followed a
     * moves object of: gc keeps those moves objects while the record is in use, even those of a
     * pack no manifest names (a repacked pack repacked again).
     */
    public Place resolve(String pack, long offset, int recordLength, Consumer<String> movedFrom)
            throws StoreException {
        Place at = new Place(pack, offset, recordLength);
        for (int hop = 0; hop < MAX_HOPS && !isPresent(at.pack()); hop++) {
            movedFrom.accept(at.pack());
            long offsetThere = at.offset();
            Optional<PackMoves.Moved> m = moves(at.pack()).flatMap(x -> x.resolve(offsetThere));
            if (m.isEmpty()) {
                return at; // gone and not moved: the read names the missing pack
            }
            at = new Place(m.get().pack(), m.get().offset(), m.get().recordLength());
        }
        return at;
    }

    public boolean isPresent(String pack) throws StoreException {
        if (known != null) {
            return known.test(pack);
        }
        Boolean p = present.get(pack);
        if (p == null) {
            p = store.exists(PackKeys.packKey(pack));
            present.put(pack, p);
        }
        return p;
    }

    /** The moves of a pack gc repacked, if any. A damaged moves object is an error naming it. */
    public Optional<PackMoves> moves(String pack) throws StoreException {
        Optional<PackMoves> m = moves.get(pack);
        if (m == null) {
            String key = PackMoves.key(pack);
            try {
                m = Optional.of(PackMoves.decode(store.getAtMost(key, ReadLimits.MOVES), key));
            } catch (ObjectNotFoundException none) {
                m = Optional.empty();
            }
            moves.put(pack, m);
        }
        return m;
    }
}

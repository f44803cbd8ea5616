package io.ferry.staging;

import io.ferry.compression.CorruptChunkException;
import io.ferry.model.Names;
import io.ferry.staging.crypt.EncryptionKeyException;
import io.ferry.staging.packs.PackFormat;
import io.ferry.staging.packs.PackKeys;
import io.ferry.staging.packs.PackMoves;
import io.ferry.staging.packs.PackWriter;
import io.ferry.stores.ObjectNotFoundException;
import io.ferry.stores.StoreException;

import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * {@code ferry store verify --repair} for the pack layout. A pack the scrub found with a damaged
 * record is read again; if a record still fails its check, the pack's sound records are copied
 * into new packs (written durably), a moves object maps them there (durably), and only then is
 * the pack moved to {@code ferry/v2/quarantine/}. After that no push reuses a place in it (a
 * push reuses a place only while its pack exists), so the next push that has the damaged blob's
 * bytes writes them again; images resolve their sound records through the moves, as after a gc
 * repack. Images that used the damaged record are unusable (a restart falls back to the next
 * source or generation) until {@link PackHeal} finds a sound copy of its blob, which the next push
 * that holds those bytes writes. A pack the store could not serve, or
 * whose trailer cannot be read (its records are still read by offset), is left alone.
 */
public final class PackQuarantine {
    static final String QUARANTINE = "ferry/v2/quarantine/";

    private PackQuarantine() {}

    /** The pack a quarantine key ({@code <pack>-<millis>}) holds, or null for another key. */
    static String packOf(String key) {
        String name = key.substring(key.lastIndexOf('/') + 1);
        int dash = name.indexOf('-');
        String pack = dash < 0 ? name : name.substring(0, dash);
        return key.startsWith(QUARANTINE) && Names.isSha256Hex(pack) ? pack : null;
    }

    /** Quarantines every pack {@code report} found with a damaged record that is still damaged now. */
    public static List<ChunkQuarantine.Outcome> repair(Repository repo, VerifyReport report) {
        Set<String> keys = new LinkedHashSet<>();
        for (VerifyReport.Problem p : report.problems()) {
            if (p.kind() == VerifyReport.Kind.CORRUPT_CHUNK && PackKeys.nameOf(p.key()).isPresent()) {
                keys.add(p.key());
            }
        }
        List<ChunkQuarantine.Outcome> out = new ArrayList<>();
        for (String key : keys) {
            out.add(repairOne(repo, key, PackKeys.nameOf(key).get()));
        }
        return out;
    }

    private static ChunkQuarantine.Outcome repairOne(Repository repo, String key, String pack) {
        byte[] bytes;
        try {
            bytes = repo.store().getAtMost(key, ReadLimits.PACK);
        } catch (ObjectNotFoundException e) {
            return new ChunkQuarantine.Outcome(key, false, "gone already");
        } catch (StoreException e) {
            return new ChunkQuarantine.Outcome(key, false, "not read (" + e.getMessage() + "): left alone");
        }
        List<PackFormat.Record> records;
        try {
            records = PackFormat.records(bytes, bytes.length);
        } catch (IllegalArgumentException e) {
            return new ChunkQuarantine.Outcome(key, false, "trailer unreadable (" + e.getMessage()
                    + "): left alone, its records are read by offset");
        }
        List<PackFormat.Record> sound = new ArrayList<>();
        List<String> damaged = new ArrayList<>();
        for (PackFormat.Record r : records) {
            String what = "record at " + r.offset() + " (blob " + r.id() + ")";
            try {
                repo.blobs().check(bytes, r.offset(), r.length(), r.id(), what);
                sound.add(r);
            } catch (CorruptChunkException e) {
                damaged.add(e.getMessage());
            } catch (EncryptionKeyException e) {
                // a record this configuration cannot open is not known to be damaged: leave the whole pack alone
                return new ChunkQuarantine.Outcome(key, false, "left alone: " + e.getMessage());
            }
        }
        if (damaged.isEmpty()) {
            return new ChunkQuarantine.Outcome(key, false, "verifies now: left alone");
        }
        String aside = QUARANTINE + pack + "-" + System.currentTimeMillis();
        try {
            PackWriter writer = new PackWriter(repo.store(), PackUse.REPACK_SIZE);
            Map<Long, PackMoves.Moved> moves = new TreeMap<>();
            for (PackFormat.Record r : sound) {
                PackWriter.Placed placed = writer.append(r.id(), bytes, r.offset(), r.length());
                moves.put((long) r.offset(), new PackMoves.Moved(placed.pack(), placed.offset(), r.length()));
            }
            writer.finish(); // the new packs are durable before the moves that name them
            repo.store().put(PackMoves.key(pack), ByteBuffer.wrap(new PackMoves(pack, moves).encode()));
            repo.store().put(aside, ByteBuffer.wrap(bytes)); // then the pack goes: its moves resolve the sound records
            repo.store().delete(key);
        } catch (StoreException | InterruptedIOException e) {
            return new ChunkQuarantine.Outcome(key, false, "could not be moved (" + e.getMessage() + ")");
        }
        return new ChunkQuarantine.Outcome(key, true, damaged.size() + " damaged record(s) (" + damaged.get(0) + "); "
                + sound.size() + " sound records copied into new packs; moved to " + aside);
    }
}

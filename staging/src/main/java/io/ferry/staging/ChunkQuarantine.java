package io.ferry.staging;

import io.ferry.compression.ChunkFormat;
import io.ferry.compression.ChunkHeader;
import io.ferry.compression.CorruptChunkException;
import io.ferry.model.ChunkId;
import io.ferry.model.Manifest;
import io.ferry.staging.packs.PackKeys;
import io.ferry.stores.ObjectNotFoundException;
import io.ferry.stores.StoreException;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Takes rotten chunk objects out of the content-addressed area ({@code ferry store verify
 * --repair}). A push deduplicates by the chunk's name alone ({@code exists}): it does not read
 * back what it reuses, since that would read most of every incremental image back from the
 * store. So a chunk that rotted on the store (a bit flip, a truncated object) would be reused by
 * every later generation. The scrub finds it ({@link StoreVerifier}); this moves it to
 * {@code ferry/v1/quarantine/<sha256>-<millis>} (kept for inspection, outside the chunks area)
 * and deletes it from there. The next push that needs those bytes writes the chunk again under
 * the same name, which heals every image that references it, older generations included.
 *
 * <p>Each candidate is read and checked again here, and only one that is read whole and fails
 * its check is moved: a chunk the store could not serve (an outage) is left alone. Images that
 * reference a quarantined chunk stay unusable until some push writes it again; a restart from
 * them falls through to the next source or generation, as for any corrupt chunk.
 */
public final class ChunkQuarantine {
    static final String QUARANTINE = "ferry/v1/quarantine/";

    private ChunkQuarantine() {}

    /** What a repair did with each chunk the scrub reported corrupt. */
    public record Outcome(String key, boolean quarantined, String detail) {}

    /** Moves aside every chunk {@code report} found corrupt that is still corrupt now. */
    public static List<Outcome> repair(Repository repo, VerifyReport report) {
        List<Outcome> out = new ArrayList<>();
        for (VerifyReport.Problem p : report.problems()) {
            if (p.kind() != VerifyReport.Kind.CORRUPT_CHUNK) {
                continue;
            }
            if (PackKeys.nameOf(p.key()).isPresent()) {
                continue; // a pack: PackQuarantine's
            }
            Optional<ChunkId> id = Repository.chunkIdOf(p.key());
            if (id.isEmpty()) {
                out.add(new Outcome(p.key(), false, "not a chunk object name: left alone"));
                continue;
            }
            out.add(repairOne(repo, p.key(), id.get()));
        }
        return out;
    }

    private static Outcome repairOne(Repository repo, String key, ChunkId id) {
        byte[] obj;
        try {
            obj = repo.store().getAtMost(key, ReadLimits.CHUNK);
        } catch (ObjectNotFoundException e) {
            return new Outcome(key, false, "gone already");
        } catch (StoreException e) {
            return new Outcome(key, false, "not read (" + e.getMessage() + "): left alone");
        }
        String why;
        try {
            ChunkHeader h = ChunkFormat.header(obj, obj.length, id.toString());
            if (h.rawLength() < 0 || h.rawLength() > Manifest.MAX_CHUNK_SIZE) {
                throw new CorruptChunkException(id.toString(), "raw length " + h.rawLength() + " is too large");
            }
            ChunkFormat.decode(obj, obj.length, id.bytes(), new byte[h.rawLength()], id.toString());
            return new Outcome(key, false, "verifies now: left alone");
        } catch (CorruptChunkException e) {
            why = e.getMessage();
        }
        String aside = QUARANTINE + id + "-" + System.currentTimeMillis();
        try {
            repo.store().put(aside, ByteBuffer.wrap(obj));
            repo.store().delete(key);
        } catch (StoreException e) {
            return new Outcome(key, false, "could not be moved (" + e.getMessage() + ")");
        }
        return new Outcome(key, true, why + "; moved to " + aside);
    }
}

package io.ferry.staging.packs;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.ferry.compression.ChunkFormat;
import io.ferry.compression.ChunkHeader;
import io.ferry.compression.CorruptChunkException;
import io.ferry.model.BlobPlace;

import java.util.List;

/**
 * Coverage-guided fuzzing (Jazzer) of what a pull, a scrub and gc read from a store: packs (the
 * trailer, then every record's header and body) and moves objects. Each input decodes or is
 * refused with the decoder's own error. {@code mvn -B verify} replays the corpus under
 * {@code src/test/resources/io/ferry/staging/packs/PackCoverageFuzzTestInputs/}; to fuzz,
 * {@code JAZZER_FUZZ=1 mvn test -pl staging -Dtest='PackCoverageFuzzTest#pack'}.
 */
class PackCoverageFuzzTest {
    @FuzzTest(maxDuration = "60s")
    void pack(byte[] data) {
        List<PackFormat.Record> records;
        try {
            records = PackFormat.records(data, data.length);
        } catch (IllegalArgumentException refused) {
            return;
        }
        byte[] out = new byte[0];
        for (PackFormat.Record r : records) {
            try {
                ChunkHeader h = ChunkFormat.header(data, r.offset(), r.length(), "fuzz");
                if (h.rawLength() < 0 || h.rawLength() > BlobPlace.MAX_LENGTH) {
                    continue; // what the readers refuse before they allocate
                }
                if (out.length < h.rawLength()) {
                    out = new byte[h.rawLength()];
                }
                ChunkFormat.decode(data, r.offset(), r.length(), r.id().bytes(), out, "fuzz");
            } catch (CorruptChunkException refused) {
                // the decoder's own error
            }
        }
    }

    @FuzzTest(maxDuration = "60s")
    void moves(byte[] data) {
        try {
            PackMoves m = PackMoves.decode(data, "fuzz");
            m.resolve(0);
        } catch (IllegalArgumentException refused) {
            // the decoder's own error
        }
    }
}

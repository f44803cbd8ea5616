package io.ferry.model;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;

import java.util.List;
import java.util.function.Function;

/**
 * Coverage-guided fuzzing (Jazzer) of every decoder of bytes another process or node wrote: log
 * records, manifests, commit markers and their shards, and the text values of command lines and
 * settings. Each input decodes to a record that passes its own validation or is refused with the
 * decoder's own error; anything else (another exception, a hang, an allocation out of bounds) is
 * a finding. {@code mvn -B verify} replays the seed and regression corpus under
 * {@code src/test/resources/io/ferry/model/CoverageGuidedFuzzTestInputs/}; to fuzz one target,
 * {@code JAZZER_FUZZ=1 mvn test -pl model -Dtest='CoverageGuidedFuzzTest#manifest'} (new inputs
 * land in {@code model/.cifuzz-corpus/}, findings in the inputs directory).
 */
class CoverageGuidedFuzzTest {
    private static final String DURATION = "60s";

    @FuzzTest(maxDuration = DURATION)
    void event(byte[] data) {
        try {
            EventCodec.decode(data);
        } catch (IllegalArgumentException refused) {
            // the decoder's own error
        }
    }

    @FuzzTest(maxDuration = DURATION)
    void command(byte[] data) {
        try {
            EventCodec.decodeCommand(data);
        } catch (IllegalArgumentException refused) {
            // the decoder's own error
        }
    }

    @FuzzTest(maxDuration = DURATION)
    void manifest(byte[] data) {
        try {
            ManifestCodec.decodeManifest(data, "fuzz");
        } catch (MalformedManifestException refused) {
            // the decoder's own error
        }
    }

    @FuzzTest(maxDuration = DURATION)
    void marker(byte[] data) {
        try {
            ManifestCodec.decodeCommitMarker(data, "fuzz");
        } catch (MalformedManifestException refused) {
            // the decoder's own error
        }
        try {
            ShardedMarker.decodeShard(data, "fuzz");
        } catch (MalformedManifestException refused) {
            // the decoder's own error
        }
    }

    @FuzzTest(maxDuration = DURATION)
    void textValues(FuzzedDataProvider in) {
        String s = in.consumeRemainingAsString();
        for (Function<String, Object> parser
                : List.<Function<String, Object>>of(
                Sizes::parse, Durations::parse, RankSet::parse, PeerAddresses::parse, t -> Placement.parse(t, 8),
                Names::requireJob)) {
            try {
                parser.apply(s);
            } catch (IllegalArgumentException refused) {
                // the parser's own error
            }
        }
    }
}

package io.ferry.agent.protocol;

import com.code_intelligence.jazzer.junit.FuzzTest;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;

/**
 * Coverage-guided fuzzing (Jazzer) of the rank protocol as the agent reads it: bounded line
 * reads, then each line parsed. Each line parses to what it says or is refused with the
 * parser's own error. {@code mvn -B verify} replays the corpus under
 * {@code src/test/resources/io/ferry/agent/protocol/LineCoverageFuzzTestInputs/}; to fuzz,
 * {@code JAZZER_FUZZ=1 mvn test -pl capture-agent -Dtest='LineCoverageFuzzTest#lines'}.
 */
class LineCoverageFuzzTest {
    @FuzzTest(maxDuration = "60s")
    void lines(byte[] data) throws IOException {
        StringReader in = new StringReader(new String(data, StandardCharsets.US_ASCII));
        while (true) {
            String text;
            try {
                text = Line.read(in);
            } catch (IllegalArgumentException tooLong) {
                return;
            }
            if (text == null) {
                return;
            }
            Line l;
            try {
                l = Line.parse(text);
            } catch (IllegalArgumentException refused) {
                continue; // the parser's own error
            }
            // Outside the catch: an encoding that no longer parses must fail here, not pass as refused.
            if (!Line.parse(l.encode()).equals(l)) {
                throw new AssertionError("does not round-trip: " + text);
            }
        }
    }
}

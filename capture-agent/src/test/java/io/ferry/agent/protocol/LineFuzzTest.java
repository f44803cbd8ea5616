package io.ferry.agent.protocol;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;

import java.io.Reader;
import java.io.StringReader;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Seeded mutation fuzzing of the rank protocol's line parser (what any process on the node can
 * write to the agent's socket): each mutant parses to a line that encodes back to itself, or is
 * refused with an IllegalArgumentException that quotes it; never another exception.
 */
class LineFuzzTest {
    private static final String[] TOKENS = {" ", "  ", "-", "+", "0", "9999999999999999999", "\t", "\u00e9", "HELLO",
            "DONE", "\u0000", "x"};

    @Test
    void linesAreReadWithACapSoAPeerWithoutNewlinesCannotFillTheHeap() throws Exception {
        Reader in = new StringReader("HELLO 3\r\nDONE 1\nlast");
        assertEquals("HELLO 3", Line.read(in));
        assertEquals("DONE 1", Line.read(in));
        assertEquals("last", Line.read(in));
        assertEquals(null, Line.read(in));
        // An endless line: refused after MAX_LENGTH characters, not read to the end.
        Reader endless = new Reader() {
            long served;

            @Override
            public int read(char[] b, int off, int len) {
                Arrays.fill(b, off, off + len, 'x');
                served += len;
                return len;
            }

            @Override
            public void close() {}
        };
        IllegalArgumentException e = Assertions.assertThrows(IllegalArgumentException.class,
                () -> Line.read(endless));
        assertTrue(e.getMessage().contains("longer than " + Line.MAX_LENGTH), e.getMessage());
        assertEquals(Line.MAX_LENGTH, Line.read(new StringReader("y".repeat(Line.MAX_LENGTH) + "\n")).length());
    }

    @Test
    void mutatedLinesParseToWhatTheySayOrAreRefusedWithAnIllegalArgumentException() {
        long seed = 20261123L;
        Random rnd = new Random(seed);
        int refused = 0;
        for (String valid : List.of("HELLO 3", "CHECKPOINT 4 /tmp/ckpt/4", "DONE 4", "FAIL 4 disk full",
                "RESTART_FAIL 3 bad data")) {
            for (int i = 0; i < 2000; i++) {
                String m = mutate(valid, rnd);
                Line l;
                try {
                    l = Line.parse(m);
                } catch (IllegalArgumentException e) {
                    assertTrue(e.getMessage() != null && !e.getMessage().isBlank(), e.toString());
                    refused++;
                    continue;
                } catch (RuntimeException e) {
                    fail("'" + m + "' (mutant " + i + " of '" + valid + "', seed " + seed + ") raised " + e, e);
                    continue;
                }
                // Outside the catch: an encoding that no longer parses is a failure, not a refused mutant.
                if (!(l instanceof Line.Fail) && !(l instanceof Line.RestartFail)) { // their reason may carry anything
                    assertEquals(l, Line.parse(l.encode()), "'" + m + "' parsed to a line that encodes back to itself");
                }
            }
        }
        assertTrue(refused > 5000, refused + " of 10,000 refused");
        assertTrue(refusal(Line.MAX_LENGTH + 1).contains("longer than"),
                "an over-long line is refused before it is split");
    }

    private static String refusal(int length) {
        try {
            Line.parse("FAIL 1 " + "x".repeat(length));
            throw new AssertionError("accepted");
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    private static String mutate(String in, Random rnd) {
        StringBuilder b = new StringBuilder(in);
        for (int k = 1 + rnd.nextInt(3); k > 0 && b.length() > 0; k--) {
            int at = rnd.nextInt(b.length() + 1);
            switch (rnd.nextInt(4)) {
                case 0 -> b.insert(at, TOKENS[rnd.nextInt(TOKENS.length)]);
                case 1 -> b.setLength(rnd.nextInt(b.length() + 1));
                case 2 -> {
                    if (at < b.length()) {
                        b.deleteCharAt(at);
                    }
                }
                default -> {
                    if (at < b.length()) {
                        b.setCharAt(at, (char) (32 + rnd.nextInt(95)));
                    }
                }
            }
        }
        return b.toString();
    }
}

package io.ferry.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a {@code ferry run} of {@link LcgRank}s typed again after a loss must do once it resumed. */
final class Resumed {
    private Resumed() {
    }

    /**
     * The run {@code again} (its output read by {@code lines}) establishes a generation numbered
     * above {@code newest}, ends with exit 0, and each of its two ranks ends with the result of an
     * uninterrupted run of {@code steps} steps in {@code results}.
     */
    static void goesOnExactly(Process again, Lines lines, long newest, Path results, int steps) throws Exception {
        String next = lines.await("a new generation established",
                l -> l.matches(".*generation \\d+ established on the.*"));
        assertTrue(Lines.generationOf(next) > newest, "new generations are numbered above every marker: " + next);
        LcgRank.hurry(results); // the rest of the job only waits for its end
        assertTrue(again.waitFor(3, TimeUnit.MINUTES), "ferry run ended");
        assertEquals(0, again.exitValue(), String.join("\n", lines.lines));
        for (int r = 0; r < 2; r++) {
            assertEquals(Long.toString(LcgRank.uninterrupted(r, steps)),
                    Files.readString(results.resolve("rank-" + r)).trim(),
                    "rank " + r);
        }
    }
}

package io.ferry.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The C programs of capture-agent's checkpoint/restart scenarios ({@code scenario/*.c}, a
 * sibling module's test resources, read in place), compiled for the CLI's tests, and the file
 * one leaves when nothing interrupts it.
 */
final class ScenarioPrograms {
    private ScenarioPrograms() {
    }

    /** {@code dir/<program>}, compiled with gcc from {@code scenario/<program>.c}. */
    static Path compile(Path dir, String program) throws IOException, InterruptedException {
        Path src = Path.of("..", "capture-agent", "src", "test", "resources", "scenario", program + ".c");
        Path bin = dir.resolve(program);
        Process gcc = new ProcessBuilder("gcc", "-O1", "-pthread", "-o", bin.toString(), src.toString()).inheritIO().start();
        assertEquals(0, gcc.waitFor(), "gcc " + src);
        return bin;
    }

    /** What {@code bin OUT STEPS 0} writes to OUT, run uninterrupted. */
    static String reference(Path bin, Path out, int steps) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(bin.toString(), out.toString(), Integer.toString(steps), "0")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertEquals(0, p.waitFor(), bin + " uninterrupted");
        return Files.readString(out);
    }
}

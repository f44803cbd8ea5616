package io.ferry.cli;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

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
        return LcgRank.compile(src, dir, "gcc", "-O1", "-pthread");
    }

    /**
     * The shell assignment that makes a program started after it run its steps without their pause once
     * {@link LcgRank#hurry} was called for {@code dir} (the file it writes): the test has seen what it waited for,
     * and the file the program writes is the same.
     */
    static String hurryAssignment(Path dir) {
        return "SCENARIO_HURRY=" + LcgRank.hurryFile(dir) + " ";
    }

    /** What {@code bin OUT STEPS 0} writes to OUT, run uninterrupted. */
    static String reference(Path bin, Path out, int steps) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(bin.toString(), out.toString(), Integer.toString(steps), "0")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertEquals(0, p.waitFor(), bin + " uninterrupted");
        return Files.readString(out);
    }

    /**
     * Each rank's file from an uninterrupted run of {@code ranks} ranks (in {@code dir/reference.R}):
     * one for a program whose ranks are alike, one per rank for a ring (on loopback ports).
     */
    static List<String> references(Path bin, Path dir, int steps, int ranks) throws Exception {
        String port = ranks > 1 ? Integer.toString(freePorts(ranks)) : null;
        List<Process> running = new ArrayList<>();
        for (int r = 0; r < ranks; r++) {
            List<String> cmd = new ArrayList<>(List.of(bin.toString(),
                    dir.resolve("reference." + r).toString(), Integer.toString(steps), "0"));
            if (port != null) {
                cmd.addAll(List.of(port, Integer.toString(r), Integer.toString(ranks)));
            }
            running.add(new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD).start());
        }
        List<String> files = new ArrayList<>();
        for (int r = 0; r < ranks; r++) {
            assertEquals(0, running.get(r).waitFor(), bin + " rank " + r + " uninterrupted");
            files.add(Files.readString(dir.resolve("reference." + r)));
        }
        return files;
    }

    /** A port P such that P .. P + n - 1 were free a moment ago on the loopback. */
    static int freePorts(int n) throws IOException {
        for (int i = 0; i < 50; i++) {
            List<ServerSocket> held = new ArrayList<>();
            try {
                held.add(new ServerSocket(0, 1, InetAddress.getLoopbackAddress()));
                int base = held.get(0).getLocalPort();
                for (int k = 1; k < n; k++) {
                    held.add(new ServerSocket(base + k, 1, InetAddress.getLoopbackAddress()));
                }
                return base;
            } catch (BindException taken) {
                // the next one
            } finally {
                for (ServerSocket s : held) {
                    s.close();
                }
            }
        }
        throw new IllegalStateException("no " + n + " free consecutive ports on the loopback");
    }
}

package io.ferry.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

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
        String port = ranks > 1 ? Integer.toString(TestBed.freePorts(ranks)) : null;
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

    /**
     * Asserts that the file a rank left is {@code expected}, an uninterrupted run's; where it is not, the message
     * is short enough to read whole in a CI log: both files' line counts, the first line that differs with the two
     * lines before it, the files named like it beside it, and the run's lines about generations, rollbacks and
     * restores ({@code run}).
     */
    static void assertSameFile(String expected, Path actual, String what, List<String> run) throws IOException {
        String found = Files.readString(actual);
        if (found.equals(expected)) {
            return;
        }
        List<String> want = expected.lines().toList();
        List<String> got = found.lines().toList();
        int at = 0;
        while (at < want.size() && at < got.size() && want.get(at).equals(got.get(at))) {
            at++;
        }
        StringBuilder m = new StringBuilder(what).append(" differs from an uninterrupted run's: ")
                .append(want.size()).append(" lines expected, ").append(got.size()).append(" found; first at line ")
                .append(at + 1).append('\n');
        for (int i = Math.max(0, at - 2); i <= at; i++) {
            m.append("  expected: ").append(i < want.size() ? want.get(i) : "(end)").append("   found: ")
                    .append(i < got.size() ? got.get(i) : "(end)").append('\n');
        }
        // DMTCP keeps the file it overwrote at a restore beside it (NAME-DATE.bk): whether it did, and how often
        try (Stream<Path> beside = Files.list(actual.getParent())) {
            beside.filter(f -> f.getFileName().toString().startsWith(actual.getFileName().toString()))
                    .forEach(f -> m.append("  beside it: ").append(f.getFileName()).append(' ')
                            .append(f.toFile().length()).append(" bytes\n"));
        }
        m.append("the run's generations, rollbacks and restores:\n");
        run.stream().filter(l -> l.matches(".*(established on the|FAILED|recovering|restored generation|exited"
                + "|killed|lost).*")).limit(60).forEach(l -> m.append("  ").append(l).append('\n'));
        throw new AssertionError(m.toString());
    }
}

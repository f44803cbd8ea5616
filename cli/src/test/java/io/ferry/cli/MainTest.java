package io.ferry.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The {@code ferry} command line: built with only the command a call runs, whole where a call needs every command. */
class MainTest {
    private static final Set<String> ALL = Set.of("run", "config", "coordinator", "agent", "chaos", "checkpoint",
            "halt",
            "capture", "restore", "restart", "status", "list", "plan", "image", "daemon", "snapshot", "store", "demo",
            "help");

    private static Set<String> names(String... args) {
        return Main.commandLine(args).getSubcommands().keySet();
    }

    @Test
    void aCallThatNamesItsCommandBuildsThatCommandOnly() {
        assertEquals(Set.of("image"), names("image", "push", "dir", "--store", "s"));
        assertEquals(Set.of("store"), names("store", "gc", "s"));
        assertEquals(Set.of("image"), names("--log-level=debug", "image", "pull"));
        CommandLine image = Main.commandLine("image", "push").getSubcommands().get("image");
        assertEquals(Set.of("push", "pull"), image.getSubcommands().keySet(), "a command keeps its own subcommands");
    }

    @Test
    void helpNoCommandAndWordsThatAreNoCommandGetEveryCommand() {
        assertEquals(ALL, names("help"));
        assertEquals(ALL, names("help", "image"));
        assertEquals(ALL, names());
        assertEquals(ALL, names("--help"));
        assertEquals(ALL, names("imag", "push"));
        assertEquals(ALL, names("--log-level", "debug", "image"), "an option's value is not taken for the command");
    }

    /** Runs {@code ferry ARGS} in this JVM; its exit code and what it wrote on stderr. */
    private static String[] run(String... args) {
        PrintStream before = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            int exit = Main.run(args);
            return new String[]{Integer.toString(exit), err.toString(StandardCharsets.UTF_8).strip()};
        } finally {
            System.setErr(before);
        }
    }

    @Test
    void badUsageIsOneLineNamingTheWholeCommandAndWhatWasMeant() {
        String[] misspelt = run("imag", "push");
        assertEquals("2", misspelt[0], misspelt[1]);
        assertEquals("ferry: Unmatched arguments from index 0: 'imag', 'push'; did you mean image or agent?"
                + " (see ferry --help)", misspelt[1]);
        String[] missing = run("image", "push", "dir");
        assertEquals("2", missing[0], missing[1]);
        assertTrue(missing[1].startsWith("ferry image push: Missing required options"), missing[1]);
        assertTrue(missing[1].endsWith(" (see ferry image push --help)"), missing[1]);
        assertEquals(1, missing[1].lines().count(), missing[1]);
    }
}

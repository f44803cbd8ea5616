package io.ferry.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CommandReferenceTest {
    /** Surefire runs in the module's directory; the page lies at the repository root. */
    private static final Path PAGE = Path.of("..").resolve(CommandReference.PAGE);

    @Test
    void committedPageMatchesTheCommandsHelp() throws IOException {
        String expected = CommandReference.markdown();
        if (Boolean.getBoolean("ferry.docs.write")) {
            Files.writeString(PAGE, expected, StandardCharsets.UTF_8);
        }
        assertTrue(Files.isRegularFile(PAGE), "missing " + PAGE.toAbsolutePath());
        assertEquals(expected, Files.readString(PAGE, StandardCharsets.UTF_8),
                CommandReference.PAGE + " differs from the commands' --help: regenerate it with"
                        + " mvn -B -o -q -pl cli test -Dtest=CommandReferenceTest -Dferry.docs.write=true");
    }

    @Test
    void everyCommandIsOnThePage() {
        String page = CommandReference.markdown();
        for (Class<?> c : Main.SUBCOMMANDS) {
            String name = c.getAnnotation(CommandLine.Command.class).name();
            if (!name.equals("help")) {
                assertTrue(page.contains("## `ferry " + name + "`"), name);
            }
        }
    }
}

package io.ferry.cli;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConfigReferenceTest {
    /** Surefire runs in the module's directory; the page lies at the repository root. */
    private static final Path PAGE = Path.of("..").resolve(ConfigReference.PAGE);

    @Test
    void committedPageMatchesTheDeclaredTables() throws IOException {
        String expected = ConfigReference.markdown();
        if (Boolean.getBoolean("ferry.docs.write")) {
            Files.writeString(PAGE, expected, StandardCharsets.UTF_8);
        }
        assertTrue(Files.isRegularFile(PAGE), "missing " + PAGE.toAbsolutePath());
        assertEquals(expected, Files.readString(PAGE, StandardCharsets.UTF_8),
                ConfigReference.PAGE + " differs from the declared configuration tables: regenerate it with"
                        + " mvn -B -o -q -pl cli test -Dtest=ConfigReferenceTest -Dferry.docs.write=true");
    }

    @Test
    void everyTableKeyIsOnThePage() {
        String page = ConfigReference.markdown();
        Configuration.tableKeys().forEach(k -> assertTrue(page.contains("| `" + k.name() + "` |"), k.name()));
    }
}

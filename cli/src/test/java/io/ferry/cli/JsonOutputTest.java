package io.ferry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code --json} on the commands that report: one JSON object on stdout, what the text says. */
class JsonOutputTest {
    @TempDir
    Path tmp;
    private final ObjectMapper json = new ObjectMapper();

    private JsonNode run(String... args) throws Exception {
        FerryProcess.Result r = FerryProcess.run(args);
        assertEquals(0, r.exit(), r.err());
        return json.readTree(r.out());
    }

    @Test
    void imageAndStoreCommandsReportInJson() throws Exception {
        Path image = Files.createDirectories(tmp.resolve("image"));
        byte[] bytes = new byte[3_000_000];
        new java.util.Random(1).nextBytes(bytes);
        Files.write(image.resolve("state"), bytes);
        String store = tmp.resolve("store").toString();
        JsonNode push = run("image", "push", image.toString(), "--store", store, "--job", "j", "--generation", "1",
                "--rank", "0", "--json");
        assertEquals("j/1/0", push.get("image").asText());
        assertEquals(3_000_000, push.get("rawBytes").asLong());
        assertTrue(push.get("storedBytes").asLong() > 2_900_000, push.toString());
        assertEquals(64, push.get("manifestSha256").asText().length());
        JsonNode commit = run("snapshot", "commit", "--store", store, "--job", "j", "--generation", "1", "--ranks", "1", "--json");
        assertEquals("j", commit.get("job").asText());
        assertEquals(1, commit.get("generation").asLong());
        assertEquals(1, commit.get("ranks").asInt());
        assertTrue(commit.get("store").asText().startsWith("file:"), commit.toString());

        JsonNode pull = run("image", "pull", tmp.resolve("back").toString(), "--store", store, "--job", "j",
                "--generation", "1", "--rank", "0", "--json");
        assertTrue(pull.get("committed").asBoolean());
        assertEquals(3_000_000, pull.get("rawBytes").asLong());

        JsonNode ls = run("store", "ls", store, "--json");
        assertEquals("established", ls.get("generations").get(0).get("state").asText());
        assertEquals(1, ls.get("packObjects").asLong());
        JsonNode verify = run("store", "verify", store, "--json");
        assertTrue(verify.get("ok").asBoolean());
        assertEquals(0, verify.get("problems").size());
        JsonNode prune = run("store", "prune", store, "--job", "j", "--keep-last", "1", "--dry-run", "--json");
        assertEquals("[1]", prune.get("kept").toString());
        assertTrue(prune.get("dryRun").asBoolean());
        JsonNode gc = run("store", "gc", store, "--dry-run", "--json");
        assertEquals(0, gc.get("deleted").asLong());
        assertTrue(gc.has("runAgainAfter"));
    }
}

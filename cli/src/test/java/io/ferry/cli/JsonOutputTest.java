package io.ferry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

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
    void aNodesRanksArePushedTogetherByOneCommand() throws Exception {
        Path node = tmp.resolve("ckpt/12");
        byte[] shared = new byte[2_000_000];
        new Random(7).nextBytes(shared);
        for (int r = 0; r < 3; r++) {
            Files.createDirectories(node.resolve(Integer.toString(r)));
            Files.write(node.resolve(r + "/code"), shared);
            Files.writeString(node.resolve(r + "/own"), "rank " + r);
        }
        String store = tmp.resolve("store").toString();
        // Several workers: the first to meet a shared blob writes it, one that meets it meanwhile waits for its place.
        JsonNode push = run("image", "push", node.toString(), "--ranks", "0-2", "--store", store, "--job", "j",
                "--generation", "12", "--set", "staging.workers=3", "--json");
        assertEquals(3, push.get("images").size(), push.toString());
        assertEquals("j/12/2", push.get("images").get(2).get("image").asText());
        long stored = push.get("storedBytes").asLong();
        assertTrue(stored > 1_900_000 && stored < 2_500_000, "the code the ranks share is stored once: " + push);
        run("snapshot", "commit", "--store", store, "--job", "j", "--generation", "12", "--ranks", "3", "--json");
        JsonNode ls = run("store", "ls", store, "--json");
        assertEquals(1, ls.get("packObjects").asLong(), "one pack for the three ranks: " + ls);
        for (int r = 0; r < 3; r++) {
            Path back = tmp.resolve("back" + r);
            run("image", "pull", back.toString(), "--store", store, "--job", "j", "--generation", "12", "--rank",
                    Integer.toString(r), "--json");
            assertEquals("rank " + r, Files.readString(back.resolve("own")));
        }
        // And back together, into one directory per rank, reading the shared code once.
        Path restored = tmp.resolve("restored");
        JsonNode pull = run("image", "pull", restored.toString(), "--ranks", "0-2", "--store", store, "--job", "j",
                "--generation", "12", "--json");
        assertEquals(3, pull.get("images").size(), pull.toString());
        for (int r = 0; r < 3; r++) {
            assertEquals("rank " + r, Files.readString(restored.resolve(r + "/own")));
            assertTrue(pull.get("images").get(r).get("committed").asBoolean(), pull.toString());
        }
        assertTrue(pull.get("readBytes").asLong() < 2 * 2_000_000,
                "the shared 2 MB read once, not three times: " + pull);
        // A rank without its directory is refused before anything is written; so is --rank beside --ranks.
        FerryProcess.Result missing = FerryProcess.run("image", "push", node.toString(), "--ranks", "0-3", "--store",
                store,
                "--job", "j", "--generation", "13");
        assertEquals(1, missing.exit(), missing.err());
        assertTrue(missing.err().contains("rank 3 has no image directory " + node.resolve("3")), missing.err());
        assertEquals(0, run("store", "ls", store, "--json").get("generations").size() - 1,
                "generation 13 wrote nothing");
        FerryProcess.Result both = FerryProcess.run("image", "push", node.toString(), "--ranks", "0-2", "--rank", "0",
                "--store", store, "--job", "j", "--generation", "13");
        assertEquals(2, both.exit(), both.err());
        assertTrue(both.err().contains("mutually exclusive"), both.err());
    }

    @Test
    void imageAndStoreCommandsReportInJson() throws Exception {
        Path image = Files.createDirectories(tmp.resolve("image"));
        byte[] bytes = new byte[3_000_000];
        new Random(1).nextBytes(bytes);
        Files.write(image.resolve("state"), bytes);
        String store = tmp.resolve("store").toString();
        JsonNode push = run("image", "push", image.toString(), "--store", store, "--job", "j", "--generation", "1",
                "--rank", "0", "--json");
        assertEquals("j/1/0", push.get("image").asText());
        assertEquals(3_000_000, push.get("rawBytes").asLong());
        assertTrue(push.get("storedBytes").asLong() > 2_900_000, push.toString());
        assertEquals(64, push.get("manifestSha256").asText().length());
        JsonNode commit = run("snapshot", "commit", "--store", store, "--job", "j", "--generation", "1", "--ranks", "1",
                "--json");
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

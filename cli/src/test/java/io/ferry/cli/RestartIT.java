package io.ferry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ferry restart J} on a running job of two bash ranks: it rolls the job back and follows
 * the rollback until both ranks run again, with a progress bar (forced on with
 * {@code FERRY_PROGRESS=1}, as a terminal would get it) and one line saying where each rank's
 * image came from; {@code --json} says the same as one object. The job then finishes with the
 * result of an uninterrupted run.
 */
class RestartIT {
    private static final int STEPS = 1500;
    @TempDir
    Path tmp;

    @Test
    void restartFollowsTheRollbackUntilEveryRankRunsAndSaysWhereImagesCameFrom() throws Exception {
        Path results = Files.createDirectories(tmp.resolve("results"));
        Path rank = LcgRank.script(tmp, STEPS);
        String home = tmp.resolve("home").toString();
        Process run = FerryProcess.builder(List.of("-Xmx384m"), "run", "--job", "rs", "--ranks", "2", "--interval", "0",
                "--home", home, "--http", "off", "--", rank.toString(), results.toString()).redirectErrorStream(true)
                        .start();
        Lines out = new Lines(run, "run");
        for (int i = 0; i < 600 && !Files.exists(results.resolve("pid-1")); i++) {
            Thread.sleep(100);
        }
        FerryProcess.Result checkpoint = FerryProcess.run("checkpoint", "rs", "--home", home);
        assertEquals(0, checkpoint.exit(), checkpoint.err());
        out.await("generation 0 established", l -> l.contains("generation 0 established on the"));

        ProcessBuilder restart = FerryProcess.builder(List.of(), "restart", "rs", "--home", home);
        restart.environment().put("FERRY_PROGRESS", "1");
        FerryProcess.Result r = FerryProcess.run(restart);
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(r.out().contains("rank 1: node "), "the plan first: " + r.out());
        assertTrue(Pattern.compile("restored 2 ranks of rs from generation 0 in [0-9.]+ s \\(2 local\\)")
                .matcher(r.out()).find(),
                "the newest established generation is still in the node cache: " + r.out());
        assertTrue(r.err().contains("restoring rs g0") && r.err().contains("2 / 2"), "a progress bar: " + r.err());
        out.await("the job's own line for the rollback", l -> l.contains("roll back to generation 0"));

        FerryProcess.Result again = FerryProcess.run("restart", "rs", "--json", "--home", home);
        assertEquals(0, again.exit(), again.out() + again.err());
        JsonNode json = new ObjectMapper().readTree(again.out());
        assertEquals(2, json.get("restoredRanks").asInt(), again.out());
        assertTrue(json.get("complete").asBoolean());
        assertEquals(2, json.get("sources").get("local").asInt(), again.out());
        assertTrue(json.get("seconds").asDouble() > 0);
        LcgRank.hurry(results); // the rest of the job only waits for its end

        assertTrue(run.waitFor(5, TimeUnit.MINUTES), "ferry run did not finish");
        assertEquals(0, run.exitValue(), String.join("\n", out.lines));
        for (int i = 0; i < 2; i++) {
            assertEquals(Long.toString(LcgRank.uninterrupted(i, STEPS)),
                    Files.readString(results.resolve("rank-" + i)).trim());
        }
    }
}

package io.ferry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferry.eventlog.EmbeddedKafka;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The job path through the real command: embedded broker, coordinator, agent, child ranks. */
class RunIT {
    @TempDir
    Path tmp;

    @Test
    void demoSurvivesASigkillAndTheLogTellsTheStoryAfterwards() throws Exception {
        Path demo = tmp.resolve("demo");
        FerryProcess.Result r = FerryProcess.run("demo", "--dir", demo.toString(), "--steps", "600");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(r.out().contains("killing rank 1 with SIGKILL"), r.out());
        assertTrue(r.out().contains("recovering: all ranks roll back to generation"), r.out());
        assertTrue(r.out().contains("demo OK"), r.out());
        assertTrue(r.out().contains("ferry: dashboard http://127.0.0.1:"), r.out());

        // A later command starts the home's broker again and rebuilds the job from the log.
        String home = demo.resolve("home").toString();
        FerryProcess.Result list = FerryProcess.run("list", "demo", "--home", home);
        assertEquals(0, list.exit(), list.err());
        assertTrue(list.out().contains("finished OK, 1 recoveries"), list.out());
        assertTrue(list.out().matches("(?s).*\\n2\\s+ESTABLISHED\\s+4/4\\s+4/4.*"), list.out());

        // The next four commands read the same log through one broker on the home's log, started here once: each
        // starting the home's broker itself (as list just did) cost 10-20 s apiece on a loaded 2-core machine.
        try (EmbeddedKafka homeLog =
                     EmbeddedKafka.start(new FerryHome(demo.resolve("home")).kafka())) {
            String log = homeLog.bootstrapServers();
            FerryProcess.Result status = FerryProcess.run("status", "demo", "--json", "--home", home, "--kafka", log);
            JsonNode json = new ObjectMapper().readTree(status.out());
            assertEquals("finished", json.get("state").asText());
            assertTrue(json.get("newestEstablished").asLong() >= 2, status.out());

            // Forecasts: made after 3 warm-up snapshots, recorded, and set beside what happened.
            FerryProcess.Result accuracy = FerryProcess.run("plan", "--accuracy", "demo", "--home", home, "--kafka",
                    log);
            assertEquals(0, accuracy.exit(), accuracy.err());
            assertTrue(accuracy.out().matches("(?s).*\\n[1-9]\\d* forecasts: median absolute error .*"),
                    accuracy.out());
            FerryProcess.Result forecast = FerryProcess.run("status", "demo", "--mtbf", "24h", "--home", home,
                    "--kafka", log);
            assertTrue(forecast.out().contains("next snapshot (768.0 KiB, 4 ranks): stall"), forecast.out());
            assertTrue(forecast.out().contains("checkpoint interval for MTBF 86400 s (given): Young"), forecast.out());
            assertTrue(json.get("forecast").has("next"), status.out());
            // The agent reported its cache: the forecast says whether it fills under this retention.
            assertEquals(1, json.get("forecast").get("caches").size(), status.out());
            assertTrue(forecast.out().contains("  cache on "), forecast.out());

            // Calibration from the demo's snapshots and a real probe of its store, saved, then projected.
            Path cal = tmp.resolve("demo-cal.json");
            FerryProcess.Result calibrate = FerryProcess.run("plan", "--calibrate-from", "demo", "--home", home,
                    "--kafka", log,
                    "--probe-size", "8MiB", "--probe-writers", "1,2", "--save-calibration", cal.toString());
            assertEquals(0, calibrate.exit(), calibrate.err());
            assertTrue(calibrate.out().contains("Calibration from job demo"), calibrate.out());
            assertTrue(calibrate.out().matches("(?s).*store file:.*: 1 writer .* 2 writers .*"), calibrate.out());
            assertTrue(calibrate.err().contains("store probe: 2 writers"), calibrate.err());
            JsonNode saved = new ObjectMapper().readTree(cal.toFile());
            assertEquals(2, saved.get("store").size());
            assertTrue(saved.get("rawDiskBytesPerSecond").asDouble() > 0, "a file: store's disk is measured raw too");
            try (var left = Files.walk(demo.resolve("home").resolve("store"))) {
                assertFalse(left.anyMatch(p -> p.toString().contains("probe")), "the probe's objects are deleted");
            }
            FerryProcess.Result projected = FerryProcess.run("plan", "--calibration", cal.toString(), "--nodes", "100",
                    "--memory-per-node", "64GB", "--storage", "1PB", "--disk-size", "10TB", "--disk-bandwidth",
                    "1GB/s");
            assertEquals(0, projected.exit(), projected.err());
            assertTrue(projected.out().contains("| established on the remote store | 64.00 s (1 min 4 s) |"),
                    projected.out());
        }

        // The restart plan from the home alone: with nothing running it plans against this host's cache (with --kafka
        // it would ask the nodes' agents, and none runs now).
        FerryProcess.Result plan = FerryProcess.run("restart", "demo", "--dry-run", "--home", home);
        assertEquals(0, plan.exit(), plan.err());
        assertTrue(plan.out().matches("(?s).*rank 0: node \\S+, local.*"), plan.out());
        assertTrue(plan.out().matches("(?s).*rank 3: node \\S+, local.*"), plan.out());
        FerryProcess.Result planJson = FerryProcess.run("restart", "demo", "--dry-run", "--json", "--home", home);
        assertEquals(0, planJson.exit(), planJson.err());
        assertTrue(planJson.out().trim()
                .matches("\\[\\{\"rank\":0,\"node\":\"[^\"]+\",\"generation\":\\d+,\"source\":\"local\"}"
                + "(,\\{\"rank\":[1-3],[^}]*\"source\":\"local\"}){3}]"), planJson.out());
    }

    @Test
    void externalKafkaIsUsedInsteadOfTheEmbeddedBroker() throws Exception {
        try (EmbeddedKafka external = EmbeddedKafka.start(
                tmp.resolve("external"))) {
            Path home = tmp.resolve("home");
            FerryProcess.Result r = FerryProcess.run("run", "--job", "ext", "--ranks", "2", "--interval", "0",
                    "--home", home.toString(), "--kafka", external.bootstrapServers(), "--", "true");
            assertEquals(0, r.exit(), r.out() + r.err());
            assertTrue(r.out().contains("log " + external.bootstrapServers()), r.out());
            assertFalse(Files.exists(home.resolve("kafka")), "no embedded broker was started");
            FerryProcess.Result status = FerryProcess.run("status", "ext", "--kafka", external.bootstrapServers());
            assertTrue(status.out().startsWith("ext: finished"), status.out());
        }
    }

    /**
     * A one-node `ferry run` reclaims the home's cache as `ferry agent` does: a job that finished
     * before it keeps its images for `cache.finished-retention`, here none, so the later run removes
     * them (before, only `ferry agent` reclaimed, and a home used by `ferry run` alone kept every job's
     * images for ever).
     */
    @Test
    void aOneNodeRunReclaimsTheCacheOfAJobThatFinishedBeforeIt() throws Exception {
        Path home = tmp.resolve("home");
        Path results = Files.createDirectories(tmp.resolve("results"));
        Path rank = LcgRank.script(tmp, 100);
        FerryProcess.Result earlier = FerryProcess.run("run", "--job", "earlier", "--ranks", "1", "--interval", "1s",
                "--home", home.toString(), "--", rank.toString(), results.toString());
        assertEquals(0, earlier.exit(), earlier.out() + earlier.err());
        Path cached = home.resolve("cache").resolve("earlier");
        assertTrue(Files.isDirectory(cached), "the finished job's images stay in the cache: " + earlier.out());

        // long enough (about 6 s) for the agent's first sweep, which it makes at its start
        ProcessBuilder later = FerryProcess.builder(List.of(), "run", "--job", "later", "--ranks", "1",
                "--interval", "0", "--home", home.toString(), "--", LcgRank.script(Files.createDirectories(
                        tmp.resolve("later")), 300).toString(), results.toString());
        later.environment().put("FERRY_CACHE_FINISHED_RETENTION", "0s");
        FerryProcess.Result r = FerryProcess.run(later);
        assertEquals(0, r.exit(), r.out() + r.err());
        assertFalse(Files.exists(cached),
                "the earlier job's cache was reclaimed by the later run: " + r.out() + r.err());
    }

    @Test
    void unsafeJobNameIsRefusedBeforeAnythingStarts() throws Exception {
        Path home = tmp.resolve("home");
        FerryProcess.Result r = FerryProcess.run("run", "--job", "../x", "--ranks", "1", "--home", home.toString(),
                "--", "true");
        assertEquals(1, r.exit());
        assertTrue(r.err().startsWith("ferry: unsafe job id '../x'"), r.err());
        assertFalse(Files.exists(home));
        FerryProcess.Result http = FerryProcess.run("run", "--job", "x", "--ranks", "1", "--home", home.toString(),
                "--http", "localhost", "--", "true");
        assertEquals(1, http.exit());
        assertTrue(http.err().startsWith("ferry: --http must be HOST:PORT"), http.err());
        assertFalse(Files.exists(home));
    }

    @Test
    void aRankThatFailsAtStartIsRolledBackWithBackoffThenTheJobGivesUp() throws Exception {
        // Before recovery.max-attempts, such a job was relaunched for ever (1,195 rollbacks in 180 s).
        long t0 = System.nanoTime();
        FerryProcess.Result r = FerryProcess.run("run", "--job", "doomed", "--ranks", "1", "--interval", "0",
                "--auto-recover",
                "--set", "recovery.max-attempts=3", "--set", "recovery.backoff=400ms",
                "--home", tmp.resolve("home").toString(), "--", "bash", "-c", "exit 7");
        double seconds = (System.nanoTime() - t0) / 1e9;
        assertEquals(1, r.exit(), r.out());
        assertTrue(r.out()
                .contains("rank 0 exited with 7; gave up after 3 rollbacks in a row without a newer established"
                + " snapshot (recovery.max-attempts=3)"), r.out());
        // Three rollbacks, the 2nd and 3rd after waits of 0.4 s and 0.8 s: the job cannot have ended sooner.
        assertTrue(seconds > 1.2, "ended after " + seconds + " s");
        assertTrue(r.out().contains("rolling back in") || r.err().contains("rolling back in"),
                "the wait is said: " + r.out() + r.err());
        FerryProcess.Result list = FerryProcess.run("list", "doomed", "--home", tmp.resolve("home").toString());
        assertTrue(list.out().contains("FAILED, 3 recoveries"), list.out());
    }

    @Test
    void storeCredentialsInFerrysEnvironmentDoNotReachTheRanks() throws Exception {
        Path seen = tmp.resolve("rank-env");
        ProcessBuilder pb = FerryProcess.builder(List.of(), "run", "--job", "env", "--ranks", "1",
                "--interval", "0",
                "--http", "off", "--home", tmp.resolve("home").toString(), "--", "bash", "-c", "env > " + seen);
        pb.environment().put("FERRY_S3_SECRET_ACCESS_KEY", "top-secret-42");
        pb.environment().put("FERRY_STAGING_ZSTD_LEVEL", "2");
        // the event log's login (issue 13): a JAAS setting holds a password whatever its key's name
        pb.environment().put("FERRY_KAFKA_SASL_JAAS_CONFIG",
                "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\""
                        + " password=\"log-secret-7\";");
        pb.environment().put("FERRY_KAFKA_CLIENT_ID", "ferry-run");
        Process p = pb.redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor(), out);
        String env = Files.readString(seen);
        assertTrue(env.contains("FERRY_RANK=0"), env);
        assertFalse(env.contains("top-secret-42"), "a store credential reached a rank: " + env);
        assertFalse(env.contains("log-secret-7") || env.contains("FERRY_KAFKA_"),
                "the event log's login reached a rank: " + env);
        assertTrue(env.contains("FERRY_STAGING_ZSTD_LEVEL=2"), "other variables are left as they are");
    }

    @Test
    void failingRankWithoutAutoRecoveryFailsTheJob() throws Exception {
        FerryProcess.Result r = FerryProcess.run("run", "--job", "oops", "--ranks", "2", "--interval", "0",
                "--home", tmp.resolve("home").toString(), "--", "bash", "-c", "[ $FERRY_RANK = 1 ] && exit 3; sleep 1");
        assertEquals(1, r.exit(), r.out());
        assertTrue(r.out().contains("rank 1 exited with 3"), r.out());
        assertTrue(r.out().contains("job FAILED"), r.out());
    }
}

package io.ferry.coordinator.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferry.coordinator.Coordinator;
import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Event;
import io.ferry.model.ImageRef;
import io.ferry.staging.Progress;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The HTTP API, dashboard and metrics of a real coordinator on an embedded KRaft broker. */
class HttpApiIT {
    @TempDir
    Path tmp;
    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> get(URI base, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(base.resolve(path)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void servesJobsForecastsMetricsAndTheDashboard() throws Exception {
        Path image = tmp.resolve("image");
        Files.createDirectories(image);
        Files.writeString(image.resolve("state"), "42");
        ObjectMapper json = new ObjectMapper();
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC());
             Coordinator coordinator = new Coordinator(log, Clock.systemUTC()).start();
             HttpApi api = HttpApi.start(coordinator, new InetSocketAddress("127.0.0.1", 0))) {
            assertTrue(coordinator.awaitLive(Duration.ofSeconds(30)));
            URI base = api.uri();
            log.append(new Event.JobStarted("sim", 1, 0, false, store.uri().toString(), "node0"));
            for (long g = 0; g < 5; g++) { // acting as the agent: 5 established generations of growing size
                pipeline.push(image, new ImageRef("sim", g, 0), Progress.NONE);
                log.append(new Event.CheckpointRequested("sim", g, "request"));
                log.append(new Event.ImageCaptured("sim", g, 0, "node0", 1_000_000 * (g + 1), 0.01 * (g + 1)));
                log.append(new Event.ImageStaged("sim", g, 0, "remote", 1_000_000 * (g + 1), 500_000 * (g + 1), 0.02));
                long gen = g;
                await(() -> coordinator.query(j -> j.get("sim").flatMap(v -> v.newestEstablished())
                        .map(e -> e.generation() == gen).orElse(false)));
            }
            log.append(new Event.CheckpointRequested("sim", 5, "request"));
            log.append(new Event.CaptureFailed("sim", 5, "rank 0 said <no> & quit"));
            log.append(new Event.CacheReported("sim", "node0", 100_000_000, 5_500_000, 9_000_000, 2, 2));
            await(() -> coordinator.query(j -> !j.get("sim").orElseThrow().caches().isEmpty()));

            HttpResponse<String> jobs = get(base, "/api/jobs?mtbf=24h");
            assertEquals(200, jobs.statusCode());
            assertEquals("application/json", jobs.headers().firstValue("Content-Type").orElse(""));
            JsonNode sim = json.readTree(jobs.body()).get(0);
            assertEquals("sim", sim.get("job").asText());
            assertEquals(4, sim.get("newestEstablished").asLong());
            JsonNode forecast = sim.get("forecast");
            assertTrue(forecast.get("next").get("predictedSecondsToEstablished").asDouble() >= 0, forecast.toString());
            assertEquals(86400, forecast.get("mtbfSeconds").asDouble(), 1e-9);
            assertTrue(forecast.get("youngIntervalSeconds").asDouble() > 0);
            JsonNode cache = forecast.get("caches").get(0);
            assertEquals("node0", cache.get("node").asText());
            assertFalse(cache.get("neverFull").asBoolean(),
                    "5 MB per generation, 15 MB peak needs 6 MB more, 5.5 MB free: " + cache);
            assertEquals(1, cache.get("fitsMoreGenerations").asLong());

            JsonNode detail = json.readTree(get(base, "/api/jobs/sim").body());
            assertEquals(6, detail.get("generations").size());
            assertEquals("FAILED", detail.get("generations").get(5).get("state").asText());
            assertTrue(detail.get("generations").get(3).has("prediction"), "forecasts start after 3 warm-up snapshots");

            String metrics = get(base, "/metrics").body();
            assertTrue(metrics.contains("# TYPE ferry_snapshots gauge"), metrics);
            assertTrue(metrics.contains("ferry_snapshots{job=\"sim\",state=\"ESTABLISHED\"} 5"), metrics);
            assertTrue(metrics.contains("ferry_snapshots{job=\"sim\",state=\"FAILED\"} 1"), metrics);
            assertTrue(metrics.contains("ferry_cache_free_bytes{job=\"sim\",node=\"node0\"} 5500000"), metrics);
            assertTrue(metrics.contains("ferry_newest_established_generation{job=\"sim\"} 4"), metrics);

            String page = get(base, "/").body();
            assertTrue(page.contains("<h2>sim</h2>") && page.contains("<svg"), page);
            assertTrue(page.contains("rank 0 said &lt;no&gt; &amp; quit"), "problems are escaped");
            assertFalse(page.contains("<no>"));

            assertEquals(404, get(base, "/api/jobs/nope").statusCode());
            assertEquals(400, get(base, "/api/jobs/..%2F..%2Fetc").statusCode());
            HttpResponse<String> badMtbf = get(base, "/api/jobs?mtbf=soon");
            assertEquals(400, badMtbf.statusCode());
            assertTrue(json.readTree(badMtbf.body()).get("error").asText().contains("soon"), badMtbf.body());
            assertEquals(404, get(base, "/nothing-here").statusCode());
            HttpResponse<String> post = http.send(HttpRequest.newBuilder(base.resolve("/api/jobs"))
                    .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(405, post.statusCode());
        }
    }

    @Test
    void aConfiguredBearerTokenIsRequiredOnEveryPath() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             Coordinator coordinator = new Coordinator(log, Clock.systemUTC()).start();
             HttpApi api = HttpApi.start(coordinator, new InetSocketAddress("127.0.0.1", 0),
                     Optional.of("s3cret-Token"))) {
            assertTrue(coordinator.awaitLive(Duration.ofSeconds(30)));
            for (String path : new String[]{"/", "/metrics", "/api/jobs", "/api/jobs/x", "/nowhere"}) {
                HttpResponse<String> none = get(api.uri(), path);
                assertEquals(401, none.statusCode(), path);
                assertEquals("Bearer realm=\"ferry\"", none.headers().firstValue("WWW-Authenticate").orElse(""));
                for (String wrong : new String[]{"Bearer s3cret-Toke", "Bearer s3cret-Token2", "Basic czNjcmV0LVRva2Vu",
                        "s3cret-Token"}) {
                    assertEquals(401, http.send(HttpRequest.newBuilder(api.uri().resolve(path))
                            .header("Authorization", wrong).build(),
                            HttpResponse.BodyHandlers.ofString()).statusCode(), path + " with " + wrong);
                }
            }
            HttpResponse<String> ok = http.send(HttpRequest.newBuilder(api.uri().resolve("/api/jobs"))
                    .header("Authorization", "Bearer s3cret-Token").build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, ok.statusCode(), ok.body());
            assertEquals("[ ]", ok.body().trim());
            assertFalse(get(api.uri(), "/api/jobs").body().contains("s3cret"), "a refusal never echoes the token");
        }
    }

    private static void await(BooleanSupplier cond) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out");
            }
            Thread.sleep(50);
        }
    }
}

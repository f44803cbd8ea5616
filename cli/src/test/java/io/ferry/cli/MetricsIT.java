package io.ferry.cli;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalDouble;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real job under {@code ferry run} (embedded broker, coordinator, agent, two bash ranks, a
 * POSIX store): once a snapshot is established, the coordinator's {@code /metrics} and the
 * agent's ({@code agent.metrics}) are scraped over HTTP, their values checked, and each text
 * handed to the real {@code promtool check metrics} (Debian's {@code prometheus} package).
 */
class MetricsIT {
    @TempDir
    Path tmp;
    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void coordinatorAndAgentServeValidPrometheusTextWithWhatTheJobDid() throws Exception {
        Path results = Files.createDirectories(tmp.resolve("results"));
        Path rank = LcgRank.script(tmp, 600);
        ProcessBuilder pb = FerryProcess.builder(List.of("-Xmx384m"), "run", "--job", "metered", "--ranks", "2",
                "--interval", "1s", "--home", tmp.resolve("home").toString(), "--http", "127.0.0.1:0", "--",
                rank.toString(), results.toString());
        pb.environment().put("FERRY_AGENT_METRICS", "127.0.0.1:0"); // any free port: tests run side by side
        Process run = pb.redirectErrorStream(true).start();
        try {
            Lines out = new Lines(run, "run");
            URI coordinator = URI.create(after(out.await("the dashboard", l -> l.startsWith("ferry: dashboard ")),
                    "ferry: dashboard ").split(" ")[0]).resolve("/metrics");
            URI agent = URI.create(
                    after(out.await("the agent's metrics", l -> l.matches("ferry: agent \\S+ metrics .*")),
                    " metrics ").split(" ")[0]);
            out.await("an established snapshot", l -> l.contains("established on the"));

            // The coordinator folds the event on its own thread: scrape until it has.
            String c = scrape(coordinator, t -> value(t, "ferry_time_to_established_seconds_count").orElse(0) >= 1);
            assertTrue(value(c, "ferry_snapshots{job=\"metered\",state=\"ESTABLISHED\"}").orElse(0) >= 1, c);
            assertTrue(value(c, "ferry_stall_seconds_count").orElse(0) >= 1, c);
            assertTrue(value(c, "ferry_stored_bytes_total{tier=\"remote\"}").orElse(0) > 0, c);
            assertTrue(c.contains("ferry_time_to_established_seconds_bucket{le=\"+Inf\"}"), c);
            assertTrue(c.contains("# TYPE jvm_memory_used_bytes gauge"), c);

            String a = scrape(agent, t -> value(t, "ferry_agent_stored_bytes_total{tier=\"remote\"}").orElse(0) > 0);
            assertTrue(value(a, "ferry_agent_raw_bytes_total{tier=\"local\"}").orElse(0) > 0, a);
            assertTrue(value(a, "ferry_agent_capture_seconds_count").orElse(0) >= 2, "two ranks captured: " + a);
            assertTrue(value(a, "ferry_agent_staging_seconds_count").orElse(0) >= 2, a);
            assertTrue(a.lines()
                    .anyMatch(l -> l.startsWith("ferry_agent_store_objects_written_total{job=\"metered\",store=\"file:")
                    && Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)) > 0), a);
            assertTrue(a.contains("ferry_agent_cache_job_bytes{job=\"metered\"}"), a);
            assertTrue(a.contains("# TYPE process_files_open_files gauge")
                    && a.contains("# TYPE jvm_threads_live_threads gauge"), a);
            LcgRank.hurry(results); // the rest of the job only waits for its end

            assertTrue(run.waitFor(3, TimeUnit.MINUTES), "ferry run did not finish: " + out.lines);
            assertEquals(0, run.exitValue(), String.join("\n", out.lines));

            Assumptions.assumeTrue(promtool(), "promtool is not installed (Debian: apt-get install prometheus):"
                    + " the exposition text was not checked by it");
            promtoolAccepts("the coordinator's /metrics", c);
            promtoolAccepts("the agent's /metrics", a);
        } finally {
            run.destroyForcibly();
        }
    }

    private static String after(String line, String marker) {
        return line.substring(line.indexOf(marker) + marker.length());
    }

    /** The body of {@code uri}, fetched again (for up to 30 s) until {@code ready} holds. */
    private String scrape(URI uri, Predicate<String> ready) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
            if (ready.test(r.body()) || System.nanoTime() > deadline) {
                return r.body();
            }
            Thread.sleep(200);
        }
    }

    /** The value of the sample whose name and labels are {@code series}, if the text has it. */
    static OptionalDouble value(String text, String series) {
        return text.lines().filter(l -> l.startsWith(series + " ")).mapToDouble(l -> {
            String v = l.substring(series.length() + 1).trim();
            return v.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(v.split(" ")[0]);
        }).findFirst();
    }

    private static boolean promtool() {
        try {
            return new ProcessBuilder("promtool", "--version").redirectErrorStream(true).start().waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    /** {@code promtool check metrics} reads the text on stdin: a non-zero exit or any line it prints is a problem. */
    private static void promtoolAccepts(String what, String text) throws Exception {
        Process p = new ProcessBuilder("promtool", "check", "metrics").redirectErrorStream(true).start();
        try (var in = p.getOutputStream()) {
            in.write(text.getBytes(StandardCharsets.UTF_8));
        }
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "promtool did not finish");
        assertEquals(0, p.exitValue(), "promtool check metrics refused " + what + ":\n" + said);
        assertTrue(said.isBlank(), "promtool check metrics found problems in " + what + ":\n" + said);
    }
}

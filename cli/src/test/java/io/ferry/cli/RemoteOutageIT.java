package io.ferry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferry.stores.hdfs.MiniHdfs;
import io.ferry.stores.s3.S3ProxyServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A remote store dies in the middle of staging a snapshot of a real job ({@code ferry run}, a
 * child JVM with its embedded broker, two bash ranks in signal mode): s3proxy stopped for 20
 * seconds, or the MiniDFSCluster's only DataNode stopped during an upload. The snapshot must be
 * established once the store is back, hold exactly what the ranks wrote, verify clean, and
 * the retries must show in {@code ferry status --json}.
 */
class RemoteOutageIT {
    private static final int RANKS = 2;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    java.nio.file.Path tmp;

    @Test
    void s3StoppedForTwentySecondsWhileStaging() throws Exception {
        try (S3ProxyServer s3 = new S3ProxyServer(tmp.resolve("s3")).bucket("ferry")) {
            List<String> settings = new ArrayList<>();
            s3.options().forEach((k, v) -> settings.add(k + "=" + v));
            java.nio.file.Path chunks = tmp.resolve("s3/ferry/site/ferry/v1/chunks");
            survivesOutage("s3://ferry/site", settings, () -> countFiles(chunks), () -> {
                s3.stop();
                return null;
            }, () -> {
                s3.start();
                return null;
            });
        }
    }

    @Test
    void hdfsDataNodeStoppedDuringAnUpload() throws Exception {
        try (MiniHdfs hdfs = new MiniHdfs(tmp.resolve("hdfs"))) {
            URI store = hdfs.uri("/ferry/site");
            List<String> settings = List.of("hdfs.conf.dfs.client.block.write.retries=1",
                    "hdfs.conf.dfs.client.socket-timeout=5000");
            try (FileSystem fs = FileSystem.newInstance(store, new Configuration())) {
                Path chunks = new Path(store.toString() + "/ferry/v1/chunks");
                survivesOutage(store.toString(), settings, () -> {
                    if (!fs.exists(chunks)) {
                        return 0L;
                    }
                    long n = 0;
                    var it = fs.listFiles(chunks, true);
                    while (it.hasNext()) {
                        it.next();
                        n++;
                    }
                    return n;
                }, () -> {
                    hdfs.stopDataNode();
                    return null;
                }, () -> {
                    hdfs.restartDataNode();
                    return null;
                });
            }
        }
    }

    private void survivesOutage(String store, List<String> settings, Callable<Long> chunksStored,
                                Callable<?> kill, Callable<?> revive) throws Exception {
        java.nio.file.Path home = tmp.resolve("home");
        java.nio.file.Path expected = Files.createDirectories(tmp.resolve("expected"));
        java.nio.file.Path stop = tmp.resolve("stop");
        // Each rank writes 24 MiB of random bytes (incompressible: staging takes a while) and keeps
        // a copy outside Ferry to compare with afterwards.
        String rank = "trap 'g=$(cat \"$FERRY_CKPT_DIR/REQUEST\"); d=\"$FERRY_CKPT_DIR/$g\"; "
                + "head -c 25165824 /dev/urandom > \"$d/memory\"; cp \"$d/memory\" " + expected + "/rank$FERRY_RANK; "
                + ": > \"$d/DONE\"' USR2; while [ ! -f " + stop + " ]; do sleep 0.2; done";
        List<String> args = new ArrayList<>(List.of("run", "--job", "outage", "--ranks", Integer.toString(RANKS),
                "--interval", "0", "--home", home.toString(), "--store", store, "--http", "127.0.0.1:0",
                "--set", "store.breaker.open-for=2s", "--set", "store.retry.max-backoff=1s",
                // the chunk layout: its objects appear one by one, so the outage can be timed into the upload
                "--set", "staging.layout=chunks"));
        for (String s : settings) {
            args.add("--set");
            args.add(s);
        }
        args.addAll(List.of("--", "bash", "-c", rank));
        Process run = FerryProcess.builder(List.of(), args.toArray(String[]::new))
                .redirectErrorStream(true).redirectOutput(tmp.resolve("run.log").toFile()).start();
        try {
            awaitTrue(() -> Files.exists(home.resolve("run.properties")) && FerryProcess.run("checkpoint", "outage",
                    "--home", home.toString()).exit() == 0, Duration.ofSeconds(60), "checkpoint requested");
            awaitTrue(() -> chunksStored.call() > 0, Duration.ofSeconds(60), "staging started");
            kill.call();
            long outageStart = System.nanoTime();
            boolean sawWaiting = false;
            // Watched through the run's HTTP API (the same document as `ferry status --json`, JobJson) rather than a
            // `ferry status` JVM a second: that would cost the 2-core machine a CPU-second each time.
            URI api = dashboard(tmp.resolve("run.log")).resolve("/api/jobs/outage");
            while (System.nanoTime() - outageStart < Duration.ofSeconds(20).toNanos()) {
                JsonNode s = job(api);
                assertTrue(!s.has("newestEstablished"), "established while the store was down: " + s);
                String problem = s.path("latestState").asText() + " " + s.path("problem").asText();
                sawWaiting |= problem.contains("waits") || s.path("stores").toString().contains("\"OPEN\"");
                Thread.sleep(1000);
            }
            assertTrue(sawWaiting, "the status never said that staging waits for the store");
            revive.call();
            awaitTrue(() -> job(api).path("newestEstablished").asLong(-1) >= 0, Duration.ofSeconds(120),
                    "snapshot established after the store came back");
            JsonNode s = status(home); // and what `ferry status --json` says of it
            long retries = 0;
            for (JsonNode n : s.path("stores")) {
                retries += n.path("retries").asLong();
            }
            assertTrue(retries > 0, "retries are counted: " + s + "\n" + Files.readString(tmp.resolve("run.log")));
        } finally {
            Files.writeString(stop, "");
            if (!run.waitFor(2, TimeUnit.MINUTES)) {
                run.destroyForcibly();
            }
        }
        assertEquals(0, run.exitValue(), Files.readString(tmp.resolve("run.log")));

        List<String> storeArgs = new ArrayList<>(List.of("--store", store));
        for (String s : settings) {
            storeArgs.add("--set");
            storeArgs.add(s);
        }
        FerryProcess.Result verify = FerryProcess.run(concat(List.of("store", "verify", storeArgs.get(1)),
                storeArgs.subList(2, storeArgs.size())));
        assertEquals(0, verify.exit(), verify.out() + verify.err());
        FerryProcess.Result ls = FerryProcess.run(concat(List.of("store", "ls", storeArgs.get(1)),
                storeArgs.subList(2, storeArgs.size())));
        assertEquals(0, ls.exit(), ls.out() + ls.err());
        assertTrue(ls.out().contains("outage"), ls.out());
        for (int r = 0; r < RANKS; r++) {
            java.nio.file.Path dst = tmp.resolve("pulled" + r);
            FerryProcess.Result pull = FerryProcess.run(
                    concat(List.of("image", "pull", dst.toString(), "--job", "outage",
                    "--generation", "0", "--rank", Integer.toString(r)), storeArgs));
            assertEquals(0, pull.exit(), pull.out() + pull.err());
            assertArrayEquals(Files.readAllBytes(expected.resolve("rank" + r)),
                    Files.readAllBytes(dst.resolve("memory")),
                    "rank " + r + " restored byte for byte");
        }
    }

    private static String[] concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all.toArray(String[]::new);
    }

    private static JsonNode status(java.nio.file.Path home) throws IOException, InterruptedException {
        FerryProcess.Result r = FerryProcess.run("status", "outage", "--json", "--home", home.toString());
        return r.exit() == 0 ? JSON.readTree(r.out().getBytes(StandardCharsets.UTF_8)) : JSON.createObjectNode();
    }

    /** The run's dashboard address, from the line it prints once it listens. */
    private static URI dashboard(java.nio.file.Path runLog) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            for (String line : Files.readAllLines(runLog, StandardCharsets.UTF_8)) {
                if (line.startsWith("ferry: dashboard ")) {
                    return URI.create(line.substring("ferry: dashboard ".length()).split(" ")[0]);
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the run printed no dashboard line in 60 s: " + Files.readString(runLog));
    }

    /** The job as the run's coordinator serves it; an empty object where it does not answer 200. */
    private static JsonNode job(URI api) throws IOException, InterruptedException {
        HttpResponse<byte[]> r = HTTP.send(HttpRequest.newBuilder(api).build(), HttpResponse.BodyHandlers.ofByteArray());
        return r.statusCode() == 200 ? JSON.readTree(r.body()) : JSON.createObjectNode();
    }

    private static long countFiles(java.nio.file.Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        try (Stream<java.nio.file.Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).count();
        }
    }

    private void awaitTrue(Callable<Boolean> condition, Duration timeout, String what) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.call()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what + "; run log:\n"
                        + Files.readString(tmp.resolve("run.log")));
            }
            Thread.sleep(100);
        }
    }
}

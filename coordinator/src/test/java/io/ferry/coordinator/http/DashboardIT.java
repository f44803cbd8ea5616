package io.ferry.coordinator.http;

import io.ferry.coordinator.Coordinator;
import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Event;
import io.ferry.model.LaunchSpec;
import io.ferry.model.ImageRef;
import io.ferry.model.Placement;
import io.ferry.staging.Progress;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The dashboard of a 64-node, 256-rank job on a real coordinator (embedded KRaft broker), the
 * agents' events appended as they would send them: the node map, each node's bandwidth over
 * time with its slowest node, and the restart history. Then the page is opened in a real
 * headless Chromium (Debian's {@code chromium}) and its screenshot kept as
 * {@code coordinator/target/dashboard/dashboard.png}; skipped, saying why, where no Chromium is
 * installed.
 */
class DashboardIT {
    private static final int NODES = 64;
    private static final int PER_NODE = 4;
    @TempDir
    Path tmp;

    private static String node(int i) {
        return String.format("cn%03d", i);
    }

    @Test
    void aManyNodeJobsDashboardShowsNodesBandwidthAndRestartsAndRendersInChromium() throws Exception {
        List<String> nodes = new ArrayList<>();
        for (int i = 0; i < NODES; i++) {
            nodes.add(node(i));
        }
        int ranks = NODES * PER_NODE;
        Placement placement = Placement.block(ranks, nodes);
        Path image = tmp.resolve("image");
        Files.createDirectories(image);
        Files.writeString(image.resolve("state"), "42");
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC());
             // The test sends each node's heartbeat once per generation, not every few seconds as an agent does: a
             // generation's 600 events on a loaded machine must not pass for nodes gone silent (the job would end).
             Coordinator coordinator = new Coordinator(log, Clock.systemUTC(), Duration.ofMinutes(10)).start();
             HttpApi api = HttpApi.start(coordinator, new InetSocketAddress("127.0.0.1", 0))) {
            assertTrue(coordinator.awaitLive(Duration.ofSeconds(30)));
            log.append(new Event.JobStarted("big", ranks, 0, false, store.uri().toString(), node(0),
                    placement.toString(), LaunchSpec.of(List.of())));
            for (long g = 0; g < 8; g++) {
                log.append(new Event.CheckpointRequested("big", g, "interval"));
                for (String n : nodes) {
                    log.offer(new Event.Heartbeat("big", n));
                }
                for (int r = 0; r < ranks; r++) {
                    String n = node(r / PER_NODE);
                    pipeline.push(image, new ImageRef("big", g, r), Progress.NONE); // the manifest the commit reads
                    // Sent without waiting for each one but the last: one job's events go to one partition, in order,
                    // so once the last is in the log all are.
                    log.offer(new Event.ImageCaptured("big", g, r, n, 100_000_000, 0.5));
                    // cn017 stages at a fifth of everyone's rate; the rest spread 400-463 MB/s.
                    double seconds = r / PER_NODE == 17 ? 1.25 : 100e6 / ((400 + r / PER_NODE) * 1e6);
                    Event staged = new Event.ImageStaged("big", g, r, "remote", 100_000_000, 60_000_000, seconds);
                    if (r < ranks - 1) {
                        log.offer(staged);
                    } else {
                        log.append(staged);
                    }
                }
                long gen = g;
                await(() -> coordinator.query(j -> j.get("big").flatMap(v -> v.newestEstablished())
                        .map(e -> e.generation() == gen).orElse(false)), () -> state(coordinator));
            }
            for (int i = 0; i < NODES; i++) { // cn060..cn063 nearly full, cn005's store circuit open
                long cap = 1L << 40;
                long free = i >= 60 ? cap / 50 : cap / 2 + i * (cap / 200);
                log.append(new Event.CacheReported("big", node(i), cap, free, 800_000_000, 2, 2));
            }
            log.append(new Event.StoreHealthReported("big", node(5), "s3://ckpt", "OPEN", 40, 12, 3, 9));
            // A rollback to 7: cn042 was lost, so its ranks came from the store, cn043's from its partner.
            log.append(new Event.RecoveryStarted("big", 7, "rank 169 exited with 137"));
            for (int i = 0; i < NODES; i++) {
                Map<Integer, String> sources = new HashMap<>();
                for (int r = i * PER_NODE; r < (i + 1) * PER_NODE; r++) {
                    sources.put(r, i == 42 ? "remote" : i == 43 ? "partner" : "local");
                }
                log.append(new Event.ImagesRestored("big", 7, node(i), sources));
            }
            await(() -> coordinator.query(j -> j.get("big").map(v -> !v.restarts().isEmpty()
                    && v.restarts().get(0).restoredRanks() == ranks && v.caches().size() == NODES).orElse(false)),
                    () -> state(coordinator));

            String page = HttpClient.newHttpClient().send(HttpRequest.newBuilder(api.uri().resolve("/")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertEquals(NODES, count(page, "<rect class=\"node\""), "a square per node in the cache map");
            assertTrue(page.contains("4 over 90% full"), "the nearly full nodes are counted");
            assertTrue(page.contains("stroke=\"#c00\"") && page.contains("; store down"),
                    "cn005 outlined: its store is down");
            assertTrue(page.contains("<span class=\"slow\">cn017</span> (8 of 8)"),
                    "the slowest node, every generation");
            assertTrue(page.contains("<polygon class=\"band\""), "the bandwidth band");
            assertTrue(page.contains("248 local, 4 partner, 4 remote"), "ranks by source of the rollback");
            assertEquals(NODES, count(page, "<rect class=\"source\""), "a square per node of the newest restart");
            assertTrue(page.contains("cn042: remote") && page.contains("cn043: partner"), "each node's source");
            assertTrue(page.contains("rank 169 exited with 137"));
            assertEquals(1, count(page, "cache on "),
                    "one node's cache line (cn005 fills up: its store is down), not 64");

            screenshot(api.uri());
        }
    }

    /** Opens the dashboard in headless Chromium, keeps the PNG, and checks it shows the page's colours. */
    private void screenshot(URI base) throws Exception {
        Path chromium = Stream.of("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
                .map(Path::of).filter(Files::isExecutable).findFirst().orElse(null);
        Assumptions.assumeTrue(chromium != null,
                "no Chromium installed (Debian: apt-get install chromium): screenshot skipped");
        Path out = Path.of("target", "dashboard");
        Files.createDirectories(out);
        Path png = tmp.resolve("dashboard.png");
        Process p = new ProcessBuilder(chromium.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--hide-scrollbars", "--user-data-dir=" + tmp.resolve("chromium-profile"), "--window-size=1280,2600",
                "--screenshot=" + png, base.resolve("/").toString())
                .redirectErrorStream(true).redirectOutput(tmp.resolve("chromium.log").toFile()).start();
        assertTrue(p.waitFor(90, TimeUnit.SECONDS), "chromium did not finish in 90 s");
        assertEquals(0, p.exitValue(), Files.readString(tmp.resolve("chromium.log")));
        Files.copy(png, out.resolve("dashboard.png"), StandardCopyOption.REPLACE_EXISTING);
        BufferedImage img = ImageIO.read(png.toFile());
        assertEquals(1280, img.getWidth());
        Set<Integer> colours = new HashSet<>();
        for (int y = 0; y < img.getHeight(); y += 2) {
            for (int x = 0; x < img.getWidth(); x += 2) {
                colours.add(img.getRGB(x, y) & 0xffffff);
            }
        }
        // Drawn, not a blank or an error page: the tiers' colours and the band are on it.
        for (int rgb : new int[]{0x44aa44, 0xe0b030, 0x3a78c2, 0x9cc3e6}) {
            assertTrue(colours.contains(rgb),
                    String.format("colour #%06x on the screenshot (%s)", rgb, out.resolve("dashboard.png")));
        }
    }

    private static int count(String page, String what) {
        Matcher m = Pattern.compile(Pattern.quote(what)).matcher(page);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    private static void await(BooleanSupplier condition, Supplier<String> state) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() >= deadline) {
                fail("condition not met in 60 s; the job: " + state.get());
            }
            Thread.sleep(50);
        }
    }

    /** What the coordinator makes of the job: whether it ended, each generation's state and ranks captured and staged. */
    private static String state(Coordinator coordinator) {
        return coordinator.query(jobs -> jobs.get("big").map(v -> "finished " + v.finished() + " (success "
                + v.success().orElse(null) + "), restarts " + v.restarts().size() + ", caches " + v.caches().size()
                + ", generations " + v.generations().stream().map(g -> g.generation() + " " + g.state() + " "
                        + g.capturedRanks() + " captured " + g.stagedRanks() + " staged").toList())
                .orElse("not known"));
    }
}

package io.ferry.coordinator;

import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import io.ferry.model.LaunchSpec;
import io.ferry.model.ImageRef;
import io.ferry.model.Placement;
import io.ferry.staging.Progress;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * At its start a job's store is listed for generations established above what the log knows
 * ({@link MarkerListings}). A store that does not answer holds up that job's start alone, for the
 * listing's patience: the other jobs start meanwhile (before, the listing ran on the coordinator
 * thread, and every job, heartbeat and command waited 10 s behind it). A coordinator taking a
 * running job over lists its store too.
 */
class MarkerListingIT {
    @TempDir
    Path tmp;

    @Test
    void aStoreThatDoesNotAnswerHoldsUpOnlyItsOwnJobsStart() throws Exception {
        // An S3 endpoint that never answers: the kernel completes each connection into the listen
        // backlog, nothing ever accepts it or reads the request (a black-holed store, as a hung gateway is).
        try (ServerSocket blackHole = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
             EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             KafkaConsumer<byte[], byte[]> agentView = log.reader(KafkaLog.COMMANDS, true)) {
            Coordinator c = new Coordinator(log, Clock.systemUTC()).start();
            assertTrue(c.awaitLive(Duration.ofSeconds(30)));
            Map<String, String> s3 = Map.of("s3.endpoint", "http://127.0.0.1:" + blackHole.getLocalPort(),
                    "s3.access-key-id", "ferry", "s3.secret-access-key", "not-checked", "s3.path-style", "true");
            LaunchSpec spec = new LaunchSpec(List.of(), "app", 60_000, "USR2", s3);
            log.append(new Event.JobStarted("stuck", 1, 0, true, "s3://ckpt", "n-stuck",
                    Placement.single(1, "n-stuck").toString(), spec));
            Path store = Files.createDirectories(tmp.resolve("store"));
            log.append(new Event.JobStarted("free", 1, 0, true, store.toUri().toString(), "n-free"));

            List<Command.Launch> launches = new ArrayList<>();
            await("the free job's launch", agentView, launches, "n-free");
            assertFalse(launches.stream().anyMatch(l -> l.node().equals("n-stuck")),
                    "the job whose store does not answer waits for its listing; the other starts meanwhile: "
                            + launches);

            // Its patience spent, the stuck job starts from what the log knows: from the beginning.
            await("the stuck job's launch after the listing's patience", agentView, launches, "n-stuck");
            Command.Launch stuck = launches.stream().filter(l -> l.node().equals("n-stuck")).findFirst().orElseThrow();
            assertEquals(-1, stuck.generation(), "no listing: started from what the log knows (nothing)");
            c.close();
        }
    }

    /**
     * Listings of stores that hang run on threads of their own, one each: five jobs whose store
     * never answers (more than the coordinator's four committers), then a job on a file store,
     * launched and its first generation captured, staged and established while the five still
     * wait, before their patience runs out and they launch. Before, the listings took the
     * committers, and the healthy job's commit waited behind them until the S3 client gave up.
     */
    @Test
    void listingsThatHangDoNotHoldUpAnotherJobsCommit() throws Exception {
        Path image = Files.createDirectories(tmp.resolve("image"));
        Files.writeString(image.resolve("state"), "42");
        try (ServerSocket blackHole = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
             EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC());
             KafkaConsumer<byte[], byte[]> agentView = log.reader(KafkaLog.COMMANDS, true)) {
            Coordinator c = new Coordinator(log, Clock.systemUTC()).start();
            assertTrue(c.awaitLive(Duration.ofSeconds(30)));
            Map<String, String> s3 = Map.of("s3.endpoint", "http://127.0.0.1:" + blackHole.getLocalPort(),
                    "s3.access-key-id", "ferry", "s3.secret-access-key", "not-checked", "s3.path-style", "true");
            for (int i = 0; i < 5; i++) {
                log.append(new Event.JobStarted("stuck" + i, 1, 0, true, "s3://ckpt", "n-stuck",
                        Placement.single(1, "n-stuck").toString(),
                        new LaunchSpec(List.of(), "app", 60_000, "USR2", s3)));
            }
            log.append(new Event.JobStarted("free", 1, 0, true, store.uri().toString(), "n-free"));
            List<Command.Launch> launches = new ArrayList<>();
            await("the free job's launch", agentView, launches, "n-free");
            log.send(KafkaLog.COORDINATOR, new Command.RequestCheckpoint("free"));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (c.query(j -> j.get("free").map(v -> v.nextGeneration() == 0).orElse(true))) {
                assertTrue(System.nanoTime() < deadline, "timed out waiting for the free job's generation 0");
                Thread.sleep(20);
            }
            pipeline.push(image, new ImageRef("free", 0, 0), Progress.NONE);
            log.append(new Event.ImageCaptured("free", 0, 0, "n-free", 2, 0.01));
            log.append(new Event.ImageStaged("free", 0, 0, "remote", 2, 100, 0.02));
            while (!pipeline.repository().isEstablished("free", 0)) {
                assertTrue(System.nanoTime() < deadline, "timed out waiting for the free job's commit");
                Thread.sleep(20);
            }
            for (ConsumerRecord<byte[], byte[]> r : agentView.poll(Duration.ofMillis(200))) {
                if (EventCodec.decodeCommand(r.value()) instanceof Command.Launch l) {
                    launches.add(l);
                }
            }
            assertFalse(launches.stream().anyMatch(l -> l.node().equals("n-stuck")), "the free job's generation 0"
                    + " was established while the stuck jobs' listings still waited: " + launches);
            c.close();
        }
    }

    /**
     * A coordinator that takes a running job over from a log that lost its tail (its agents ran
     * on, and generations 0 to 2 were established on the store meanwhile, the log knowing none):
     * it lists the job's markers before deciding anything, so the next checkpoint is generation
     * 3, never a second generation 0 beside the marker of the first.
     */
    @Test
    void aCoordinatorTakingOverARunningJobLearnsTheMarkersItsLogLost() throws Exception {
        Path image = Files.createDirectories(tmp.resolve("image"));
        Files.writeString(image.resolve("state"), "42");
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC());
             KafkaConsumer<byte[], byte[]> agentView = log.reader(KafkaLog.COMMANDS, true)) {
            log.append(new Event.JobStarted("lost-tail", 1, 0, true, store.uri().toString(), "n0"));
            for (long g = 0; g <= 2; g++) {
                // what the agents and a coordinator did, in the part of the log that is gone
                pipeline.push(image, new ImageRef("lost-tail", g, 0), Progress.NONE);
                pipeline.repository().commitSnapshot("lost-tail", g, 1);
            }
            Coordinator c = new Coordinator(log, Clock.systemUTC()).start();
            assertTrue(c.awaitLive(Duration.ofSeconds(30)));
            log.send(KafkaLog.COORDINATOR, new Command.RequestCheckpoint("lost-tail"));
            List<Command.Capture> captures = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (captures.isEmpty()) {
                assertTrue(System.nanoTime() < deadline, "timed out waiting for the requested capture");
                for (ConsumerRecord<byte[], byte[]> r : agentView.poll(Duration.ofMillis(200))) {
                    if (EventCodec.decodeCommand(r.value()) instanceof Command.Capture cap) {
                        captures.add(cap);
                    }
                }
            }
            assertEquals(new Command.Capture("lost-tail", 3), captures.get(0),
                    "numbered above every generation a marker names");
            long established = c.query(j -> j.get("lost-tail").flatMap(JobView::newestEstablished).orElseThrow()
                    .generation());
            assertEquals(2, established,
                    "the markers' generations are established for the restarts to come");
            c.close();
        }
    }

    /** Reads launch commands into {@code seen} until one for {@code node} is among them (60 s at most). */
    private static void await(String what, KafkaConsumer<byte[], byte[]> commands, List<Command.Launch> seen,
            String node) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (seen.stream().noneMatch(l -> l.node().equals(node))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what + "; seen " + seen);
            }
            for (ConsumerRecord<byte[], byte[]> r : commands.poll(Duration.ofMillis(200))) {
                if (EventCodec.decodeCommand(r.value()) instanceof Command.Launch l) {
                    seen.add(l);
                }
            }
        }
    }
}

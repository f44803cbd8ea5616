package io.ferry.coordinator;

import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import io.ferry.model.ImageRef;
import io.ferry.model.LaunchSpec;
import io.ferry.staging.Progress;
import io.ferry.staging.Repository;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The coordinator on a real embedded KRaft broker, with a real file: store. */
class CoordinatorIT {
    @TempDir
    Path tmp;

    private static void await(String what, BooleanSupplier cond) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(50);
        }
    }

    private static List<Command> commands(KafkaConsumer<byte[], byte[]> c, String node) {
        List<Command> out = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
            if (node.equals(new String(r.key(), StandardCharsets.UTF_8))) {
                out.add(EventCodec.decodeCommand(r.value()));
            }
        }
        return out;
    }

    @Test
    void establishesSnapshotsParksBadEventsAndRebuildsAfterARestart() throws Exception {
        Path image = tmp.resolve("image");
        Files.createDirectories(image);
        Files.writeString(image.resolve("state"), "42");
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC());
             KafkaConsumer<byte[], byte[]> agentView = log.reader(KafkaLog.COMMANDS, true)) {
            Coordinator first = new Coordinator(log, Clock.systemUTC()).start();
            assertTrue(first.awaitLive(Duration.ofSeconds(30)));
            log.append(new Event.JobStarted("sim", 1, 0, true, store.uri().toString(), "node0"));
            log.send(KafkaLog.COORDINATOR, new Command.RequestCheckpoint("sim"));
            List<Command> seen = new ArrayList<>();
            await("a capture command", () -> {
                seen.addAll(commands(agentView, "node0"));
                return seen.stream().anyMatch(c -> c instanceof Command.Capture);
            });
            Command.Launch start = (Command.Launch) seen.get(0);
            assertEquals(-1, start.generation(), "the job is launched on its node first, from the beginning");
            assertEquals("0", start.ranks());
            assertEquals(new Command.Capture("sim", 0), seen.get(1));

            // Act as the agent: capture, push, report.
            ImageRef ref = new ImageRef("sim", 0, 0);
            pipeline.push(image, ref, Progress.NONE);
            log.append(new Event.ImageCaptured("sim", 0, 0, "node0", 2, 0.01));
            log.sendRaw(KafkaLog.EVENTS, "sim", "{\"type\":\"ImageStaged\",\"v\":1,\"job\":\"sim\"}".getBytes());
            log.sendRaw(KafkaLog.EVENTS, "sim", "garbage".getBytes());
            log.append(new Event.ImageStaged("sim", 0, 0, "remote", 2, 100, 0.02));
            await("the commit marker", () -> isEstablished(pipeline, "sim", 0));
            await("SnapshotEstablished",
                    () -> first.query(j -> j.get("sim").flatMap(JobView::newestEstablished).isPresent()));
            assertEquals(2, first.malformedEvents(), "malformed events are counted, not fatal");
            try (KafkaConsumer<byte[], byte[]> dead = log.reader(KafkaLog.DEAD_LETTER, true)) {
                List<String> parked = new ArrayList<>();
                await("the dead letters", () -> {
                    dead.poll(Duration.ofMillis(200))
                            .forEach(r -> parked.add(new String(r.value(), StandardCharsets.UTF_8)));
                    return parked.size() >= 2;
                });
                assertTrue(parked.contains("garbage"), parked.toString());
            }
            for (long g = 1; g <= 20; g++) { // more generations, each racing the coordinator's tick (and its committer)
                String manifest = pipeline.push(image, new ImageRef("sim", g, 0), Progress.NONE).manifestSha256();
                log.append(new Event.ImageCaptured("sim", g, 0, "node0", 2, 0.01));
                // As agents send it, with the manifest's digest: the coordinator reads nothing (the manifest is moved
                // away until the commit, which would fail if it read it); and as older agents did, without it.
                boolean given = g % 2 == 0;
                Path key = tmp.resolve("store")
                        .resolve(Repository.manifestKey(new ImageRef("sim", g, 0)));
                Path aside = key.resolveSibling("aside");
                if (given) {
                    Files.move(key, aside);
                }
                log.append(new Event.ImageStaged("sim", g, 0, "remote", 2, 100, 0.02, given ? manifest : ""));
                long gen = g;
                await("generation " + g + " established", () -> first.query(j -> j.get("sim").orElseThrow().latest()
                        .orElseThrow().state() == GenerationView.State.ESTABLISHED && j.get("sim").orElseThrow()
                        .latest().orElseThrow().generation() == gen));
                if (given) {
                    Files.move(aside, key);
                }
                assertEquals(manifest,
                        pipeline.repository().readMarker("sim", g).orElseThrow().manifestSha256().get(0));
            }
            // Each tick after generation 20 was established would commit it again if it could: wait for a whole tick of
            // the coordinator after that, then close it, which waits for the commits under way; the log then holds
            // every SnapshotEstablished it would ever append.
            Ticks.await(first, log, "sim", "node0");
            first.close();
            assertTrue(first.awaitEnd(Duration.ofSeconds(30)), "the first coordinator ended, its commits with it");
            try (KafkaConsumer<byte[], byte[]> all = log.reader(KafkaLog.EVENTS, true)) {
                List<Event> events = new ArrayList<>();
                Map<TopicPartition, Long> ends = KafkaLog.ends(all);
                while (!KafkaLog.reached(all, ends)) {
                    for (ConsumerRecord<byte[], byte[]> r : all.poll(Duration.ofMillis(200))) {
                        try {
                            events.add(EventCodec.decode(r.value()));
                        } catch (IllegalArgumentException parkedOnes) {
                            // the malformed events above
                        }
                    }
                }
                List<Long> established = events.stream().filter(e -> e instanceof Event.SnapshotEstablished)
                        .map(e -> ((Event.SnapshotEstablished) e).generation()).toList();
                assertEquals(21, established.size(), "one SnapshotEstablished per generation: " + established);
            }

            // A new coordinator rebuilds everything from the log and carries on.
            Coordinator second = new Coordinator(log, Clock.systemUTC()).start();
            assertTrue(second.awaitLive(Duration.ofSeconds(30)));
            assertEquals(GenerationView.State.ESTABLISHED,
                    second.query(j -> j.get("sim").orElseThrow().latest().orElseThrow().state()));
            log.append(new Event.RankExited("sim", 0, 137));
            seen.clear();
            await("a relaunch command", () -> {
                seen.addAll(commands(agentView, "node0"));
                return seen.stream().anyMatch(c -> c instanceof Command.Launch);
            });
            Command.Launch restart = (Command.Launch) seen.stream().filter(c -> c instanceof Command.Launch)
                    .findFirst().orElseThrow();
            assertEquals(20, restart.generation(), "rolls back to the newest established generation");
            assertTrue(restart.cause().contains("rank 0 exited with 137"), restart.cause());
            second.close();
        }
    }

    @Test
    void aJobsStoreRetentionIsAppliedAfterEachEstablishment() throws Exception {
        Path image = Files.createDirectories(tmp.resolve("image"));
        Files.writeString(image.resolve("state"), "42");
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC())) {
            Coordinator c = new Coordinator(log, Clock.systemUTC()).start();
            assertTrue(c.awaitLive(Duration.ofSeconds(30)));
            log.append(new Event.JobStarted("kept", 1, 0, true, store.uri().toString(), "node0", "block:node0",
                    new LaunchSpec(List.of("sim"), "app", 60_000, "USR2",
                            Map.of("store.keep-generations", "2"))));
            for (long g = 0; g < 5; g++) {
                checkpointAsTheAgent(c, log, pipeline, image, "kept", g, "node0");
            }
            await("the store keeping generations 3 and 4", () -> {
                try {
                    return pipeline.repository().listGenerations("kept").stream()
                            .map(Repository.GenerationListing::generation).toList()
                            .equals(List.of(3L, 4L));
                } catch (IOException e) {
                    return false;
                }
            });
            c.close();
        }
    }

    /**
     * Issue 13: a store that is down delays a commit and never stops the loop. Job "down" has
     * its store where a plain file sits (it cannot be opened); while it cannot commit, job "up"
     * establishes snapshot after snapshot; once its store is back, "down" commits the generation
     * whose ranks were staged all along.
     */
    @Test
    void aStoreThatIsDownDelaysItsJobsCommitAndNeverTheOtherJobs() throws Exception {
        Path image = Files.createDirectories(tmp.resolve("image"));
        Files.writeString(image.resolve("state"), "42");
        Path downRoot = tmp.resolve("down-store");
        Files.writeString(downRoot, "not a directory: this store cannot be opened");
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             Store up = Stores.open(tmp.resolve("up-store").toUri(), Map.of());
             StagingPipeline upPipeline = Staging.pipeline(up, StagingConfig.defaults(), Clock.systemUTC())) {
            Coordinator c = new Coordinator(log, Clock.systemUTC()).start();
            assertTrue(c.awaitLive(Duration.ofSeconds(30)));
            log.append(new Event.JobStarted("down", 1, 0, true, downRoot.toUri().toString(), "node0"));
            log.append(new Event.JobStarted("up", 1, 0, true, up.uri().toString(), "node1"));
            log.send(KafkaLog.COORDINATOR, new Command.RequestCheckpoint("down"));
            await("down's generation 0 requested",
                    () -> c.query(j -> j.get("down").map(v -> v.nextGeneration() > 0).orElse(false)));
            log.append(new Event.ImageCaptured("down", 0, 0, "node0", 2, 0.01));
            log.append(new Event.ImageStaged("down", 0, 0, "remote", 2, 100, 0.02));
            await("down's commit failing",
                    () -> c.query(j -> j.get("down").orElseThrow().latest().orElseThrow().problem()
                    .contains("cannot write the commit marker")));
            for (long g = 0; g < 3; g++) {
                checkpointAsTheAgent(c, log, upPipeline, image, "up", g, "node1");
            }
            assertEquals(GenerationView.State.CAPTURED,
                    c.query(j -> j.get("down").orElseThrow().latest().orElseThrow().state()),
                    "down's generation 0 waits, staged, for its store");

            // The store comes back (its rank's image is there, as the agent's staging retried it): the next tick
            // commits.
            Files.delete(downRoot);
            try (Store down = Stores.open(downRoot.toUri(), Map.of());
                 StagingPipeline downPipeline = Staging.pipeline(down, StagingConfig.defaults(), Clock.systemUTC())) {
                downPipeline.push(image, new ImageRef("down", 0, 0), Progress.NONE);
                await("down's generation 0 established", () -> isEstablished(downPipeline, "down", 0));
            }
            c.close();
        }
    }

    @Test
    void silentNodeIsRolledBackThenFailed() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC());
             KafkaConsumer<byte[], byte[]> agentView = log.reader(KafkaLog.COMMANDS, true)) {
            Coordinator c = new Coordinator(log, Clock.systemUTC(), Duration.ofSeconds(1)).start();
            assertTrue(c.awaitLive(Duration.ofSeconds(30)));
            log.append(new Event.JobStarted("quiet", 1, 0, true, store.uri().toString(), "node7"));
            List<Command> seen = new ArrayList<>();
            await("a relaunch after the heartbeat timeout", () -> {
                seen.addAll(commands(agentView, "node7"));
                return seen.size() >= 2;
            });
            Command.Launch r = (Command.Launch) seen.get(1);
            assertTrue(r.cause().contains("sent no heartbeat"), r.cause());
            await("the job failing when the node stays silent",
                    () -> c.query(j -> j.get("quiet").flatMap(JobView::success).isPresent()));
            assertEquals(false, c.query(j -> j.get("quiet").flatMap(JobView::success).orElseThrow()));
            c.close();
        }
    }

    @Test
    void aSilentNodesRanksMoveToALiveNodeAndEveryRankRollsBack() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             KafkaConsumer<byte[], byte[]> agentView = log.reader(KafkaLog.COMMANDS, true)) {
            Coordinator c = new Coordinator(log, Clock.systemUTC(), Duration.ofSeconds(2)).start();
            assertTrue(c.awaitLive(Duration.ofSeconds(30)));
            log.append(new Event.JobStarted("wide", 6, 0, true, store.uri().toString(), "login", "block:a,b,c",
                    LaunchSpec.of(List.of("sim"))));
            log.send(KafkaLog.COORDINATOR, new Command.RequestCheckpoint("wide"));
            List<Command> toA = new ArrayList<>();
            List<Command> toC = new ArrayList<>();
            // a and c keep beating; b stays silent
            await("b's ranks moved to c", () -> {
                log.append(new Event.Heartbeat("wide", "a"));
                log.append(new Event.Heartbeat("wide", "c"));
                for (ConsumerRecord<byte[], byte[]> r : agentView.poll(Duration.ofMillis(200))) {
                    String node = new String(r.key(), StandardCharsets.UTF_8);
                    (node.equals("a") ? toA : node.equals("c") ? toC : new ArrayList<Command>())
                            .add(EventCodec.decodeCommand(r.value()));
                }
                return toC.stream().anyMatch(x -> x instanceof Command.Launch l && l.cause().contains("node b lost"));
            });
            assertTrue(toA.contains(new Command.Capture("wide", 0)), "every node gets the capture: " + toA);
            assertTrue(toC.contains(new Command.Capture("wide", 0)), toC.toString());
            Command.Launch moved = toC.stream().filter(x -> x instanceof Command.Launch l && l.generation() == -1
                    && l.cause().contains("lost")).map(Command.Launch.class::cast).findFirst().orElseThrow();
            assertEquals("2-5", moved.ranks(), "c runs its own ranks and b's");
            assertEquals("map:0-1:a,2-5:c",
                    c.query(j -> j.get("wide").orElseThrow().placement().orElseThrow().toString()));
            c.close();
        }
    }

    @Test
    void aJobWhoseLaunchersFerryRunFallsSilentEndsWhileItsNodesStillBeat(@TempDir Path tmp) throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             Store store = Stores.open(tmp.resolve("store").toUri(), Map.of())) {
            Coordinator c = new Coordinator(log, Clock.systemUTC(), Duration.ofSeconds(4)).start();
            assertTrue(c.awaitLive(Duration.ofSeconds(30)));
            log.append(new Event.JobStarted("mpi", 2, 0, true, store.uri().toString(), "login", "launcher:",
                    LaunchSpec.of(List.of("./sim"))));
            await("the first launch request",
                    () -> c.query(j -> j.get("mpi").map(v -> v.launchAttempt() >= 1).orElse(false)));
            // Act as `ferry run --launch` (a heartbeat a second) and as node n1's agent, whose ranks joined.
            log.append(new Event.RanksJoined("mpi", -1, "n1", "0-1"));
            AtomicBoolean runAlive = new AtomicBoolean(true);
            ScheduledExecutorService beats = Executors.newScheduledThreadPool(
                    1);
            try {
                beats.scheduleAtFixedRate(() -> {
                    log.append(new Event.Heartbeat("mpi", "n1"));
                    if (runAlive.get()) {
                        log.append(new Event.Heartbeat("mpi", Event.Heartbeat.LAUNCHER));
                    }
                }, 0, 500, TimeUnit.MILLISECONDS);
                Ticks.await(c, log, "mpi", "n1"); // the coordinator has read the join and judges the job
                // A launcher is lost only once the timeout has passed since the coordinator knew of it: waiting that
                // out (and half as much again) is the scenario, not a guess at the machine's pace. The tick after it
                // judges.
                Thread.sleep(6000);
                Ticks.await(c, log, "mpi", "n1");
                assertFalse(Ticks.decided(c, "mpi"), "the job runs while its ferry run beats, nothing decided for it");
                runAlive.set(false); // SIGKILLed
                await("the job ended", () -> c.query(j -> !j.get("mpi").orElseThrow().finishDetail.isEmpty()));
                assertEquals(false, c.query(j -> j.get("mpi").flatMap(JobView::success).orElseThrow()));
                String detail = c.query(j -> j.get("mpi").orElseThrow().finishDetail);
                assertTrue(detail.contains("`ferry run` holding the job's launcher sent no heartbeat"), detail);
                assertEquals(1, (int) c.query(j -> j.get("mpi").orElseThrow().launchAttempt()),
                        "no launch asked of nobody");
            } finally {
                beats.shutdownNow();
            }
            c.close();
        }
    }

    /**
     * The harness's finding: a rank that exited 0 while the other ran on cannot be captured, and the
     * coordinator used to ask for a checkpoint at every interval anyway, each failing. Here it asks
     * at the interval while every rank runs (its agent's captures fail, which frees the next
     * request), and never again once a rank has finished.
     */
    @Test
    void aJobWithAFinishedRankIsAskedForNoMoreCheckpoints() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             Store store = Stores.open(tmp.resolve("store").toUri(), Map.of())) {
            Coordinator c = new Coordinator(log, Clock.systemUTC()).start();
            assertTrue(c.awaitLive(Duration.ofSeconds(30)));
            log.append(new Event.JobStarted("winding", 2, 300, true, store.uri().toString(), "n1"));
            LongSupplier next = () -> c.query(j -> j.get("winding").map(JobView::nextGeneration)
                    .orElse(0L));
            for (long g = 0; g < 2; g++) {
                long gen = g;
                await("generation " + gen + " requested at the interval", () -> next.getAsLong() > gen);
                log.append(new Event.Heartbeat("winding", "n1"));
                if (gen == 1) {
                    // before generation 1 fails, so that no interval falls between the two (one job's events keep their
                    // order)
                    log.append(new Event.RankExited("winding", 1, 0));
                }
                log.append(new Event.CaptureFailed("winding", gen, "rank 1 did not answer"));
            }
            await("rank 1's exit and generation 1's failure folded", () -> c.query(j -> j.get("winding")
                    .map(v -> v.aRankFinished() && v.latest().orElseThrow().generation() == 1
                            && v.latest().orElseThrow().state() == GenerationView.State.FAILED).orElse(false)));
            for (int i = 0; i < 10; i++) { // ten intervals
                log.append(new Event.Heartbeat("winding", "n1"));
                Thread.sleep(300); // the scenario: intervals that come due
            }
            Ticks.await(c, log, "winding", "n1"); // the coordinator has judged the job after the last of them
            assertEquals(2, next.getAsLong(), "no generation requested after rank 1 finished");
            assertFalse((boolean) c.query(j -> j.get("winding").orElseThrow().finished()), "rank 0 runs on");
            c.close();
        }
    }

    /**
     * Asks for generation {@code g} of a one-rank job and acts as its agent: captured, pushed, staged; waits for the
     * commit.
     */
    private static void checkpointAsTheAgent(Coordinator c, KafkaLog log, StagingPipeline pipeline, Path image,
            String job, long g, String node) throws Exception {
        log.send(KafkaLog.COORDINATOR, new Command.RequestCheckpoint(job));
        await(job + "'s generation " + g + " requested", () -> c.query(j -> j.get(job).map(v -> v.nextGeneration() > g)
                .orElse(false)));
        pipeline.push(image, new ImageRef(job, g, 0), Progress.NONE);
        log.append(new Event.ImageCaptured(job, g, 0, node, 2, 0.01));
        log.append(new Event.ImageStaged(job, g, 0, "remote", 2, 100, 0.02));
        await(job + "'s generation " + g + " established", () -> isEstablished(pipeline, job, g));
    }

    private static boolean isEstablished(StagingPipeline p, String job, long g) {
        try {
            return p.repository().isEstablished(job, g);
        } catch (IOException e) {
            return false;
        }
    }
}

package io.ferry.agent;

import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaClientSettings;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LogSettings;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import io.ferry.model.ImageRef;
import io.ferry.model.LaunchSpec;
import io.ferry.model.Placement;
import io.ferry.staging.LocalCache;
import io.ferry.staging.Staging;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A node agent reclaims its cache from what the event log says of the jobs there: a finished
 * job's images go after cache.finished-retention, a running job's and a recently failed job's
 * stay, a job whose ranks moved off the node loses the node's own staged images but keeps its
 * partner copies and unstaged images, and a job the log does not know goes once untouched for
 * the retention. A real agent, a real (embedded) Kafka log; the coordinator's events are
 * appended by the test.
 */
class CacheReclaimIT {
    @TempDir
    Path tmp;

    @Test
    void finishedJobsCachesGoAfterTheRetentionAndRunningJobsStay() throws Exception {
        Path home = tmp.resolve("node-a");
        LocalCache cache = Staging.localCache(home.resolve("cache"));
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(k.bootstrapServers(), KafkaClientSettings.NONE, LogSettings.EMBEDDED)) {
            String store = tmp.resolve("store").toUri().toString();
            for (String job : List.of("done", "running", "failed")) {
                log.append(started(job, store, Placement.single(1, "a")));
                image(cache, job, 1, 0, true);
                image(cache, job, 2, 0, false);
            }
            log.append(new Event.JobFinished("done", true, "every rank exited 0"));
            log.append(new Event.JobFinished("failed", false, "rank 0 exited 1"));
            Placement both = Placement.block(2, List.of("a", "b"));
            log.append(started("moved", store, both));
            image(cache, "moved", 1, 0, true); // this node's own, staged
            image(cache, "moved", 2, 0, false); // this node's own, not yet staged
            ImageRef partnerCopy = new ImageRef("moved", 1, 1);
            Path in = cache.incomingDir(partnerCopy);
            Files.write(in.resolve("state"), new byte[1000]);
            cache.installPartnerCopy(in, partnerCopy); // b's rank 1: b's restore source should b be lost
            log.append(new Event.JobPlaced("moved", both.moving("a", "b").toString(), "node a lost"));
            image(cache, "stranger", 1, 0, true); // no event of it in this log
            // What an agent killed in the middle of removing a generation of "running" left: its trash, long untouched.
            Path trash = Files.createDirectories(cache.root().resolve("running/.trash-0-5eed/0"));
            Files.write(trash.resolve("state"), new byte[1000]);
            Files.setLastModifiedTime(trash.getParent(), FileTime.fromMillis(
                    System.currentTimeMillis() - Duration.ofHours(1).toMillis()));

            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            AgentMeters meters = new AgentMeters(registry);
            // The job's gauges as a running agent left them before the sweep: they must follow the removals.
            meters.observe(new Event.CacheReported("done", "a", 1 << 30, 1 << 29, 3000, 2, 2));
            meters.observe(new Event.CacheReported("moved", "a", 1 << 30, 1 << 29, 5000, 2, 2));
            try (AgentService agent = new AgentService(log, "a", home).metered(meters)
                    .reclaiming(new CacheRetention(Duration.ofSeconds(2), Duration.ofHours(1))).start()) {
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (System.nanoTime() < deadline && !cache.jobs().equals(List.of("failed", "moved", "running"))) {
                    Thread.sleep(200);
                }
                assertEquals(List.of("failed", "moved", "running"), cache.jobs(),
                        "the finished job and the one the log does not know are gone");
                while (System.nanoTime() < deadline && Files.exists(cache.imageDir(new ImageRef("moved", 1, 0)))) {
                    Thread.sleep(200);
                }
            }
            assertTrue(Files.notExists(trash.getParent()), "a killed deletion's trash goes with the first sweep");
            for (String job : List.of("running", "failed")) {
                assertEquals(List.of(1L, 2L), cache.generations(job), job);
                assertTrue(Files.exists(cache.imageDir(new ImageRef(job, 2, 0)).resolve("state")), job);
            }
            assertTrue(Files.notExists(cache.imageDir(new ImageRef("moved", 1, 0))),
                    "a's own staged image of moved is gone");
            assertTrue(cache.isPartnerCopy(partnerCopy) && Files.exists(cache.imageDir(partnerCopy).resolve("state")),
                    "the partner copy stays while the job runs");
            assertTrue(Files.exists(cache.imageDir(new ImageRef("moved", 2, 0)).resolve("state")),
                    "an image not yet staged stays");

            List<Event.CacheReported> reports = cacheReports(log);
            assertTrue(reports.stream()
                    .anyMatch(r -> r.job().equals("done") && r.node().equals("a") && r.jobBytes() == 0
                    && r.generations() == 0), "the freed space is reported: " + reports);
            assertTrue(reports.stream().anyMatch(r -> r.job().equals("moved") && r.jobBytes() == 2000),
                    reports.toString());
            assertTrue(reports.stream().noneMatch(r -> r.job().equals("stranger")),
                    "no event of a job the log does not know");
            assertEquals(2000, registry.get("ferry.agent.cache.job").tag("job", "moved").gauge().value(),
                    "the node's meters follow what the sweep left of a job");
            assertTrue(registry.find("ferry.agent.cache.job").tag("job", "done").gauges().isEmpty(),
                    "a job that holds nothing here has no cache gauges left");
        }
    }

    private static Event.JobStarted started(String job, String store, Placement p) {
        return new Event.JobStarted(job, p.ranks(), 60_000, true, store, "a", p.toString(),
                LaunchSpec.of(List.of("true")));
    }

    private static void image(LocalCache cache, String job, long g, int rank, boolean staged) throws Exception {
        ImageRef ref = new ImageRef(job, g, rank);
        Files.createDirectories(cache.imageDir(ref));
        Files.write(cache.imageDir(ref).resolve("state"), new byte[1000]);
        if (staged) {
            cache.markStaged(ref);
        }
    }

    private static List<Event.CacheReported> cacheReports(KafkaLog log) {
        List<Event.CacheReported> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.EVENTS, true)) {
            var end = KafkaLog.ends(c);
            while (!KafkaLog.reached(c, end)) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    if (EventCodec.decode(r.value()) instanceof Event.CacheReported cr) {
                        out.add(cr);
                    }
                }
            }
        }
        return out;
    }
}

package io.ferry.eventlog;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.common.config.ConfigResource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Checks a topic Ferry found already there (a site's, or made by hand) against what the
 * coordinator needs of it: the coordinator's state is a fold over the whole events topic, so a
 * finite retention loses events for good unless a snapshot of the fold covers them, and
 * compaction loses them for good; heartbeats are read live only, so a
 * heartbeats topic that keeps them for ever only fills the brokers' disks. Each problem comes
 * with the {@code kafka-configs} command that fixes it.
 */
final class TopicRetention {
    private TopicRetention() {}

    /**
     * What about {@code topic}'s configuration drops events the coordinator folds: a finite
     * retention (by time or size), which a coordinator's snapshots may cover, and compaction
     * (which keeps one event per job), which nothing covers. Empty lists: none.
     */
    record Loss(List<String> retention, List<String> compaction) {
        Loss {
            retention = List.copyOf(retention);
            compaction = List.copyOf(compaction);
        }

        List<String> all() {
            List<String> out = new ArrayList<>(retention);
            out.addAll(compaction);
            return List.copyOf(out);
        }
    }

    static Loss problems(Admin admin, String topic, String bootstrap) throws ExecutionException, InterruptedException,
            TimeoutException {
        ConfigResource r = new ConfigResource(
                ConfigResource.Type.TOPIC, topic);
        Config c = admin.describeConfigs(List.of(r)).all().get(30, TimeUnit.SECONDS)
                .get(r);
        List<String> retention = new ArrayList<>();
        String fix = " (kafka-configs.sh --bootstrap-server " + bootstrap
                + " --alter --entity-type topics --entity-name " + topic + " --add-config ";
        for (String key : List.of("retention.ms", "retention.bytes")) {
            var e = c.get(key);
            if (e != null && !"-1".equals(e.value())) {
                retention.add("topic " + topic + " has " + key + "=" + e.value() + ": the coordinator's state is a fold"
                        + " over the whole topic, so what it drops is lost for good unless a snapshot of the fold"
                        + " (" + KafkaLog.SNAPSHOTS + ") covers it; set " + key + "=-1" + fix + key + "=-1)");
            }
        }
        List<String> compaction = new ArrayList<>();
        var policy = c.get("cleanup.policy");
        if (policy != null && policy.value().contains("compact")) {
            compaction.add("topic " + topic + " has cleanup.policy=" + policy.value()
                    + ": compaction keeps one event per"
                    + " job; set cleanup.policy=delete" + fix + "cleanup.policy=delete)");
        }
        return new Loss(retention, compaction);
    }

    /**
     * Whether {@code topic} (the heartbeats topic) keeps its records for ever: deleted by neither
     * time nor size. Empty: it expires them (or compacts them, which keeps one per job).
     */
    static List<String> keptForever(Admin admin, String topic, String bootstrap) throws ExecutionException,
            InterruptedException, TimeoutException {
        ConfigResource r = new ConfigResource(
                ConfigResource.Type.TOPIC, topic);
        Config c = admin.describeConfigs(List.of(r)).all().get(30, TimeUnit.SECONDS)
                .get(r);
        var policy = c.get("cleanup.policy");
        var ms = c.get("retention.ms");
        var bytes = c.get("retention.bytes");
        boolean deletes = policy == null || policy.value().contains("delete");
        boolean compacts = policy != null && policy.value().contains("compact");
        boolean forever = deletes && !compacts && (ms == null || "-1".equals(ms.value()))
                && (bytes == null || "-1".equals(bytes.value()));
        if (!forever) {
            return List.of();
        }
        long retention = io.ferry.eventlog.KafkaLog.HEARTBEAT_RETENTION.toMillis();
        return List.of("topic " + topic + " keeps heartbeats for ever (retention.ms=-1, retention.bytes=-1): they are"
                + " read live only, never replayed, and at 1,000 nodes add about 17 million records"
                + " a day; set retention.ms="
                + retention + " (kafka-configs.sh --bootstrap-server " + bootstrap + " --alter --entity-type topics"
                + " --entity-name " + topic + " --add-config retention.ms=" + retention + ",segment.ms="
                + io.ferry.eventlog.KafkaLog.HEARTBEAT_SEGMENT.toMillis() + ")");
    }
}

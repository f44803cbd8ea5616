package io.ferry.eventlog;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Makes Ferry's topics that are not there yet, each with its retention, and checks those that
 * were (a site's, made by hand, or by an older Ferry: an older Ferry had no heartbeats topic,
 * which is then made beside the others). Called once per {@link KafkaLog}.
 */
final class TopicSetup {
    private TopicSetup() {}

    /**
     * What was found wrong with the topics that were already there.
     *
     * @param eventLoss what would drop events of the events topic ({@link KafkaLog#eventRetention},
     *                  {@link KafkaLog#eventCompaction})
     * @param all       every problem, the events topic's first ({@link KafkaLog#retentionProblems})
     * @param existing  the topics the cluster had when asked (before any was made here)
     */
    record Checked(TopicRetention.Loss eventLoss, List<String> all, Set<String> existing) {
        Checked {
            all = List.copyOf(all);
            existing = Set.copyOf(existing);
        }
    }

    static Checked ensure(Admin admin, LogSettings settings, String bootstrap)
            throws IOException, ExecutionException, InterruptedException, TimeoutException {
        Set<String> existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
        List<NewTopic> missing = new ArrayList<>();
        for (NewTopic t : wanted(settings)) {
            if (!existing.contains(t.name())) {
                missing.add(t);
            }
        }
        int brokers = -1;
        if (!missing.isEmpty()) {
            brokers = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).size();
            short rf = settings.replicationFor(brokers);
            if (settings.replication() == 0 && rf < 3) {
                System.err.println("ferry: the Kafka cluster at " + bootstrap + " has " + brokers
                        + " broker(s): Ferry's topics get " + rf + " replica(s), not 3");
            }
            for (NewTopic want : missing) {
                Map<String, String> configs = new HashMap<>(want.configs());
                if (rf == 1 && FLUSHED.contains(want.name())) {
                    configs.put(FLUSH_MESSAGES, "1");
                }
                NewTopic t = new NewTopic(want.name(), want.numPartitions(), rf).configs(configs);
                try {
                    admin.createTopics(List.of(t)).all().get(30, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    if (t.name().equals(KafkaLog.SNAPSHOTS) && !(e.getCause() instanceof TopicExistsException)) {
                        // Derived state: without it a coordinator replays whole histories, slower but whole.
                        System.err.println("ferry: cannot create topic " + t.name() + " on " + bootstrap + " ("
                                + e.getCause().getMessage() + "): coordinators start without snapshots");
                    } else if (!(e.getCause() instanceof TopicExistsException)) {
                        throw new IOException("cannot create topic " + t.name() + " on " + bootstrap + ": "
                                + e.getCause().getMessage(), e);
                    }
                }
            }
        }
        if (brokers < 0) {
            try {
                brokers = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).size();
            } catch (ExecutionException | TimeoutException notAllowed) {
                brokers = -1; // a login that may not describe the cluster: a site's, whose topics are the site's
            }
        }
        if (brokers == 1) {
            flushEachWrite(admin, existing, bootstrap);
        }
        // A site may have made them itself: say what would lose events, or keep heartbeats for ever.
        TopicRetention.Loss eventLoss = new TopicRetention.Loss(List.of(), List.of());
        List<String> all = new ArrayList<>();
        try {
            if (existing.contains(KafkaLog.EVENTS)) {
                eventLoss = TopicRetention.problems(admin, KafkaLog.EVENTS, bootstrap);
                all.addAll(eventLoss.all());
            }
            if (existing.contains(KafkaLog.HEARTBEATS)) {
                all.addAll(TopicRetention.keptForever(admin, KafkaLog.HEARTBEATS, bootstrap));
            }
        } catch (ExecutionException | TimeoutException notAllowed) { // a login without DescribeConfigs
            System.err.println("ferry: cannot check the retention of Ferry's topics on " + bootstrap + ": "
                    + (notAllowed.getCause() != null ? notAllowed.getCause().getMessage() : notAllowed.toString()));
        }
        all.forEach(p -> System.err.println("ferry: " + p));
        return new Checked(eventLoss, all, existing);
    }

    /**
     * On a log of one broker (the embedded one, or a site's single broker), the topics whose
     * records the coordinator's decisions rest on have the broker fsync each write before it
     * acknowledges it ({@code flush.messages=1}): with no replica elsewhere, an event left to the
     * page cache is lost with its host's power. Heartbeats are read live only and are not worth an
     * fsync each. Events are few (a handful per rank and checkpoint), so the cost is small:
     * docs/benchmarks.md, "The coordinator at scale".
     */
    static final List<String> FLUSHED = List.of(KafkaLog.EVENTS, KafkaLog.COMMANDS, KafkaLog.DEAD_LETTER,
            KafkaLog.STATE);
    static final String FLUSH_MESSAGES = "flush.messages";

    /**
     * Sets {@link #FLUSH_MESSAGES} on {@link #FLUSHED} topics of {@code existing} that a single
     * broker holds without it (made by an older Ferry, or by hand); says so, or, where the login
     * may not alter them, what would.
     */
    private static void flushEachWrite(Admin admin, Set<String> existing, String bootstrap)
            throws InterruptedException {
        List<ConfigResource> found = FLUSHED.stream().filter(existing::contains)
                .map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList();
        if (found.isEmpty()) {
            return;
        }
        try {
            Map<ConfigResource, Config> configs = admin.describeConfigs(found).all()
                    .get(30, TimeUnit.SECONDS); // one request for all of them: this runs at every log's start
            Map<ConfigResource, Collection<AlterConfigOp>> alter = new HashMap<>();
            for (ConfigResource r : found) {
                ConfigEntry e = configs.get(r).get(FLUSH_MESSAGES);
                if (e == null || !"1".equals(e.value())) {
                    alter.put(r,
                            List.of(new AlterConfigOp(new ConfigEntry(FLUSH_MESSAGES, "1"), AlterConfigOp.OpType.SET)));
                }
            }
            if (alter.isEmpty()) {
                return;
            }
            admin.incrementalAlterConfigs(alter).all().get(30, TimeUnit.SECONDS);
            System.err.println("ferry: topics " + names(alter.keySet()) + " on the single broker at " + bootstrap
                    + " now have their writes fsynced before they are acknowledged (" + FLUSH_MESSAGES + "=1): with no"
                    + " other replica, an acknowledged event must survive a power cut of the broker's host");
        } catch (ExecutionException | TimeoutException notAllowed) {
            System.err.println("ferry: topics " + names(found) + " on the single broker at " + bootstrap + " may leave"
                    + " their writes to the page cache, so a power cut of its host loses the newest events; set "
                    + FLUSH_MESSAGES + "=1 on each (kafka-configs.sh --bootstrap-server " + bootstrap + " --alter"
                    + " --entity-type topics --entity-name TOPIC --add-config " + FLUSH_MESSAGES + "=1): "
                    + (notAllowed.getCause() != null ? notAllowed.getCause().getMessage() : notAllowed.toString()));
        }
    }

    private static String names(Collection<ConfigResource> topics) {
        return topics.stream().map(ConfigResource::name).sorted().toList().toString();
    }

    /** Ferry's topics as it makes them (the replication factor is set when they are made). */
    private static List<NewTopic> wanted(LogSettings settings) {
        String maxBytes = Integer.toString(KafkaLog.MAX_RECORD_BYTES);
        Map<String, String> forever = Map.of("retention.ms", "-1", "retention.bytes", "-1", "max.message.bytes",
                maxBytes);
        Map<String, String> compacted = Map.of("cleanup.policy", "compact", "max.message.bytes", maxBytes);
        Map<String, String> expiring = Map.of("cleanup.policy", "delete",
                "retention.ms", Long.toString(KafkaLog.HEARTBEAT_RETENTION.toMillis()), "retention.bytes", "-1",
                "segment.ms", Long.toString(KafkaLog.HEARTBEAT_SEGMENT.toMillis()), "max.message.bytes", maxBytes,
                // stamped by the broker: an agent that starts judges others' presence on one clock (NodeClaim)
                "message.timestamp.type", "LogAppendTime");
        short unset = 1;
        return List.of(new NewTopic(KafkaLog.EVENTS, settings.partitions(), unset).configs(forever),
                new NewTopic(KafkaLog.COMMANDS, settings.partitions(), unset).configs(forever),
                new NewTopic(KafkaLog.DEAD_LETTER, 1, unset).configs(forever),
                new NewTopic(KafkaLog.STATE, settings.partitions(), unset).configs(compacted),
                new NewTopic(KafkaLog.HEARTBEATS, settings.partitions(), unset).configs(expiring),
                // One partition: every coordinator reads it whole at a takeover. A segment an hour, so that
                // the cleaner, which never compacts the active segment, can drop replaced snapshots.
                new NewTopic(KafkaLog.SNAPSHOTS, 1, unset).configs(Map.of("cleanup.policy", "compact",
                        "max.message.bytes", maxBytes, "segment.ms", Long.toString(Duration.ofHours(1).toMillis()))));
    }
}

package io.ferry.eventlog;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Utils;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

/**
 * The consumers {@link KafkaLog} hands out, each with Ferry's settings and the log's login: what
 * each one reads and from where is said on {@link KafkaLog}'s methods of the same names.
 */
final class LogReaders {
    private final String bootstrap;
    private final KafkaClientSettings client;

    LogReaders(String bootstrap, KafkaClientSettings client) {
        this.bootstrap = bootstrap;
        this.client = client;
    }

    KafkaConsumer<byte[], byte[]> reader(String topic, boolean fromBeginning) {
        KafkaConsumer<byte[], byte[]> c = consumer();
        position(c, partitionsOf(c, topic), fromBeginning);
        return c;
    }

    KafkaConsumer<byte[], byte[]> historyAndHeartbeats() {
        KafkaConsumer<byte[], byte[]> c = consumer();
        List<TopicPartition> history = partitionsOf(c, KafkaLog.EVENTS);
        List<TopicPartition> beats = partitionsOf(c, KafkaLog.HEARTBEATS);
        List<TopicPartition> all = new ArrayList<>(history);
        all.addAll(beats);
        c.assign(all);
        c.seekToBeginning(history);
        c.seekToEnd(beats);
        beats.forEach(c::position); // resolve now: what is sent after this call is read
        return c;
    }

    KafkaConsumer<byte[], byte[]> resumableReader(String topic, String readerId) {
        Map<String, Object> config = new HashMap<>(consumerConfig());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, readerId);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
        KafkaConsumer<byte[], byte[]> c = consumer(config);
        List<TopicPartition> tps = partitionsOf(c, topic);
        c.assign(tps);
        Map<TopicPartition, OffsetAndMetadata> committed = c.committed(new HashSet<>(tps));
        Map<TopicPartition, OffsetAndMetadata> first = new HashMap<>();
        for (TopicPartition tp : tps) {
            var at = committed.get(tp);
            if (at != null) {
                c.seek(tp, at.offset());
            } else {
                c.seekToEnd(List.of(tp));
            }
            long position = c.position(tp); // resolve now: what is sent after this call is read
            if (at == null) {
                first.put(tp, new OffsetAndMetadata(position));
            }
        }
        // A reader's first start keeps where it began: until its owner has handled a record there and
        // committed, a restart would otherwise begin at the end again, after what was sent meanwhile (a
        // halt sent while a coordinator that had not yet been asked anything restarted was lost).
        if (!first.isEmpty()) {
            c.commitSync(first);
        }
        return c;
    }

    KafkaConsumer<byte[], byte[]> groupReader(String topic, String group, String instance,
                                              ConsumerRebalanceListener listener, Duration sessionTimeout) {
        Map<String, Object> config = new HashMap<>(consumerConfig());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        if (!instance.isEmpty()) {
            config.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instance);
        }
        config.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, Integer.toString((int) sessionTimeout.toMillis()));
        config.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG,
                Integer.toString((int) Math.max(500, sessionTimeout.toMillis() / 4)));
        config.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        KafkaConsumer<byte[], byte[]> c = consumer(config);
        c.subscribe(List.of(topic), listener);
        return c;
    }

    KafkaConsumer<byte[], byte[]> requestReader(String group) {
        Map<String, Object> config = new HashMap<>(consumerConfig());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"); // a login's first requests too
        config.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "10000"); // a login added to the log is heard within 10 s
        KafkaConsumer<byte[], byte[]> c = consumer(config);
        c.subscribe(RequestTopics.ALL);
        return c;
    }

    KafkaConsumer<byte[], byte[]> commandsFor(String node, int n) {
        KafkaConsumer<byte[], byte[]> c = consumer();
        int p = Utils.toPositive(Utils.murmur2(node.getBytes(StandardCharsets.UTF_8))) % n;
        position(c, List.of(new TopicPartition(KafkaLog.COMMANDS, p)), false);
        return c;
    }

    KafkaConsumer<byte[], byte[]> consumer() {
        return consumer(consumerConfig());
    }

    private static KafkaConsumer<byte[], byte[]> consumer(Map<String, Object> config) {
        return new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private static List<TopicPartition> partitionsOf(KafkaConsumer<byte[], byte[]> c, String topic) {
        List<TopicPartition> tps = new ArrayList<>();
        for (PartitionInfo p : c.partitionsFor(topic)) {
            tps.add(new TopicPartition(topic, p.partition()));
        }
        return tps;
    }

    private Map<String, Object> consumerConfig() {
        return client.consumer(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(KafkaLog.MAX_RECORD_BYTES),
                // larger batches per poll: each poll of the coordinator is followed by a tick
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000"));
    }

    private static void position(KafkaConsumer<byte[], byte[]> c, List<TopicPartition> tps,
                                 boolean fromBeginning) {
        c.assign(tps);
        if (fromBeginning) {
            c.seekToBeginning(tps);
        } else {
            c.seekToEnd(tps);
            tps.forEach(c::position); // resolve now: what is sent after this call is read
        }
    }
}

package io.ferry.coordinator;

import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Ferry's topics on a Kafka cluster: {@code ferry.events} (keyed by job), {@code
 * ferry.commands} (keyed by node, or "coordinator"), {@code ferry.state} (compacted, keyed by
 * job/generation) and {@code ferry.deadletter}. Appends wait for acks=all, so an event is
 * in the log before anyone acts on it. Thread-safe.
 */
public final class KafkaLog implements Closeable {
    public static final String EVENTS = "ferry.events";
    public static final String COMMANDS = "ferry.commands";
    public static final String STATE = "ferry.state";
    public static final String DEAD_LETTER = "ferry.deadletter";
    public static final String COORDINATOR = "coordinator";

    private final String bootstrap;
    private final KafkaProducer<byte[], byte[]> producer;

    public KafkaLog(String bootstrap) throws IOException {
        this.bootstrap = bootstrap;
        ensureTopics();
        this.producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
                ProducerConfig.LINGER_MS_CONFIG, "0", ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000"),
                new ByteArraySerializer(), new ByteArraySerializer());
    }

    public String bootstrapServers() {
        return bootstrap;
    }

    private void ensureTopics() throws IOException {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            for (NewTopic t : List.of(new NewTopic(EVENTS, 1, (short) 1), new NewTopic(COMMANDS, 1, (short) 1),
                    new NewTopic(DEAD_LETTER, 1, (short) 1),
                    new NewTopic(STATE, 1, (short) 1).configs(Map.of("cleanup.policy", "compact")))) {
                try {
                    admin.createTopics(List.of(t)).all().get(30, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw new IOException("cannot create topic " + t.name() + " on " + bootstrap + ": "
                                + e.getCause().getMessage(), e);
                    }
                }
            }
        } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
            throw new IOException("Kafka at " + bootstrap + " did not answer: " + e, e);
        }
    }

    /** Appends an event durably (acks=all) and returns once it is in the log. */
    public void append(Event e) {
        send(EVENTS, e.job(), EventCodec.encode(e));
    }

    public void send(String node, Command c) {
        send(COMMANDS, node, EventCodec.encode(c));
    }

    /** Appends raw bytes to a topic: used by the dead-letter path and by tests that inject bad events. */
    public void sendRaw(String topic, String key, byte[] value) {
        send(topic, key, value);
    }

    private void send(String topic, String key, byte[] value) {
        try {
            producer.send(new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8), value)).get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted appending to " + topic, e);
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("cannot append to " + topic + " on " + bootstrap + ": " + e.getMessage(), e);
        }
    }

    /** A consumer of one topic's single partition, positioned at its beginning or its end. */
    public KafkaConsumer<byte[], byte[]> reader(String topic, boolean fromBeginning) {
        KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false", ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"),
                new ByteArrayDeserializer(), new ByteArrayDeserializer());
        TopicPartition tp = new TopicPartition(topic, 0);
        c.assign(List.of(tp));
        if (fromBeginning) {
            c.seekToBeginning(List.of(tp));
        } else {
            c.seekToEnd(List.of(tp));
            c.position(tp);
        }
        return c;
    }

    @Override
    public void close() {
        producer.close();
    }
}

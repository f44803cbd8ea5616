package io.ferry.coordinator;

import io.ferry.eventlog.EventLines;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.RequestTopics;
import io.ferry.model.Command;
import io.ferry.model.DaemonThreads;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Relays what logins that are not operators ask through their request topics ({@link
 * RequestTopics}) to the topic each request is meant for, stamped with the login; the fold and
 * the orders then judge it against the job's owner ({@link JobOwners}). Only what a user does to
 * a job of its own passes: start it ({@code ferry run}), its launcher's heartbeats and exit, ask
 * the coordinator for a checkpoint, a halt, a restart, a rank killed (chaos). Anything else (what
 * agents and coordinators write, any command to a node: a restart plan too, since an agent opens
 * the store it names with its own credentials) is an operator's and is parked
 * in the dead-letter topic, said on standard error. The coordinators of a group share the request
 * topics as a consumer group: each request is relayed once, at least once across a crash.
 */
final class RequestRelay implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(RequestRelay.class);

    private final KafkaLog log;
    private final String group;
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong relayed = new AtomicLong();
    private volatile boolean running = true;
    private final Thread thread;

    private RequestRelay(KafkaLog log, String group) {
        this.log = log;
        this.group = group;
        this.thread = DaemonThreads.start("ferry-request-relay", this::run);
    }

    /** Starts relaying for coordinator group {@code group}. */
    static RequestRelay start(KafkaLog log, String group) {
        return new RequestRelay(log, group);
    }

    private void run() {
        if (!awaitRequestTopics()) {
            return;
        }
        try (KafkaConsumer<byte[], byte[]> requests = log.requestReader(group + "-requests")) {
            while (running) {
                try {
                    var batch = requests.poll(Duration.ofMillis(200));
                    for (ConsumerRecord<byte[], byte[]> r : batch) {
                        handle(r);
                    }
                    if (!batch.isEmpty()) {
                        requests.commitSync(); // relayed: a restart resumes after them
                    }
                } catch (InterruptException
                         | WakeupException e) {
                    return;
                } catch (KafkaException e) {
                    LOG.warn("relaying requests failed, retrying: {}", e.getMessage()); // the group keeps our place
                    DaemonThreads.pause(2000);
                }
            }
        }
    }

    /**
     * Waits until the log has a request topic (jobs have owners), looking every 10 s: a log without
     * one (every login an operator, a site's Kafka) never costs a consumer group. Whether to relay.
     */
    private boolean awaitRequestTopics() {
        try (KafkaConsumer<byte[], byte[]> metadata = log.reader(KafkaLog.EVENTS, false)) {
            while (running) {
                try {
                    if (metadata.listTopics(Duration.ofSeconds(10)).keySet().stream()
                            .anyMatch(t -> RequestTopics.ALL.matcher(t).matches())) {
                        return true;
                    }
                } catch (InterruptException
                         | WakeupException e) {
                    return false;
                } catch (KafkaException e) {
                    // the log is away: look again
                }
                for (int i = 0; i < 50 && running; i++) {
                    DaemonThreads.pause(200);
                }
            }
            return false;
        }
    }

    private void handle(ConsumerRecord<byte[], byte[]> r) {
        String login = RequestTopics.loginOf(r.topic());
        String to = RequestTopics.to(r);
        Optional<String> why = to == null ? Optional.of("it names no topic Ferry relays")
                : r.key() == null ? Optional.of("it has no key")
                : refuses(to, new String(r.key(), StandardCharsets.UTF_8), r.value());
        if (why.isPresent()) {
            refused.incrementAndGet();
            System.err.println("ferry coordinator: refused a request of login " + login + " (" + r.topic() + " offset "
                    + r.offset() + "): " + why.get());
            log.sendRaw(KafkaLog.DEAD_LETTER, "request-" + r.topic() + "-" + r.offset(), r.value());
            return;
        }
        log.relay(to, r.key(), r.value(), login);
        relayed.incrementAndGet();
    }

    /** Why a login that is not an operator may not write {@code value} to {@code topic} under {@code key}, if not. */
    static Optional<String> refuses(String topic, String key, byte[] value) {
        try {
            if (topic.equals(KafkaLog.COMMANDS)) {
                Command c = EventCodec.decodeCommand(value);
                boolean asked = key.equals(KafkaLog.COORDINATOR) && (c instanceof Command.RequestCheckpoint
                        || c instanceof Command.Halt || c instanceof Command.Restart || c instanceof Command.KillRank);
                return asked ? Optional.empty() : Optional.of(c.getClass().getSimpleName() + " to "
                        + key + " is an operator's to send");
            }
            Event e = EventCodec.decode(value);
            boolean users = e instanceof Event.JobStarted || e instanceof Event.LauncherExited
                    || e instanceof Event.Heartbeat h && h.node().equals(Event.Heartbeat.LAUNCHER);
            if (!users) {
                return Optional.of(e.getClass().getSimpleName() + " is an operator's to write");
            }
            if (!KafkaLog.topicOf(e).equals(topic) || !e.job().equals(key)) {
                return Optional.of(e.getClass().getSimpleName() + " of job " + e.job() + " does not belong in "
                        + topic + " under key " + key);
            }
            return Optional.empty();
        } catch (IllegalArgumentException malformed) {
            return Optional.of("malformed: " + EventLines.oneLine(malformed.getMessage()));
        }
    }

    /** Requests relayed so far. */
    long relayed() {
        return relayed.get();
    }

    /** Requests refused so far. */
    long refused() {
        return refused.get();
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

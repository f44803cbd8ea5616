package io.ferry.eventlog;

import io.ferry.model.DaemonThreads;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

import java.io.Closeable;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One agent per node name. An agent claims its node name at its start: it sends its first
 * {@link Event.AgentPresent} and reads back the presence sent under that name in the
 * {@link #LOOK_BACK} before it; another incarnation of another host or home that beat within three
 * of its own intervals of that moment is alive, and the name is refused
 * ({@link NodeNameTakenException}). Both moments are the broker's (the heartbeats topic is
 * stamped with {@code LogAppendTime}), so no clock agreement between hosts is needed, and of two
 * agents started together the one whose beat came second is refused. An earlier incarnation on
 * the same host and home is this agent's own dead predecessor (the home's lock, held now, proves
 * it gone) and is no obstacle. Once claimed, the name is held by a beat every interval, on a
 * thread of its own, until {@link #close()}, whose last word frees it at once (a refused agent
 * says it too). Thread-safe.
 *
 * <p>What this cannot see: an agent whose interval is longer than a third of {@link #LOOK_BACK};
 * a heartbeats topic made before this rule (stamped {@code CreateTime}: the senders' clocks are
 * compared then; {@code kafka-configs --alter --add-config message.timestamp.type=LogAppendTime}
 * on {@code ferry.heartbeats} makes it the broker's).
 */
public final class NodeClaim implements Closeable {
    /** How far back a starting agent reads the presence of others. */
    static final Duration LOOK_BACK = Duration.ofSeconds(60);

    /** A node name held by another live agent. */
    public static final class NodeNameTakenException extends IllegalStateException {
        NodeNameTakenException(String message) {
            super(message);
        }
    }

    private final KafkaLog log;
    private final Event.AgentPresent beat;
    final ScheduledExecutorService beats; // package-private: a test stops it as a death would

    private NodeClaim(KafkaLog log, Event.AgentPresent beat) {
        this.log = log;
        this.beat = beat;
        this.beats = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("ferry-agent-presence"));
    }

    /**
     * Claims {@code node} for the agent on {@code host} with {@code home}, beating every
     * {@code interval} from now on; refused with {@link NodeNameTakenException} while another
     * agent holds it.
     */
    public static NodeClaim claim(KafkaLog log, String node, String host, String home, Duration interval) {
        return claim(log, node, host, home, interval, "");
    }

    /** {@link #claim(KafkaLog, String, String, String, Duration)} by an agent serving its cache at {@code peer}. */
    public static NodeClaim claim(KafkaLog log, String node, String host, String home, Duration interval, String peer) {
        byte[] id = new byte[8];
        new SecureRandom().nextBytes(id);
        Event.AgentPresent first = new Event.AgentPresent(node, HexFormat.of().formatHex(id), host, home,
                Math.max(1, interval.toMillis()), -1, false, peer);
        RecordMetadata at = log.appendLocated(first);
        Optional<String> holder = other(log, first, at);
        if (holder.isPresent()) {
            log.offer(first.leave()); // refused: this beat holds nothing up for whoever starts next
            throw new NodeNameTakenException(holder.get());
        }
        NodeClaim claim = new NodeClaim(log, first.at(at.offset()));
        long every = first.intervalMillis();
        claim.beats.scheduleAtFixedRate(claim::beat, every, every, TimeUnit.MILLISECONDS);
        return claim;
    }

    /**
     * This agent's epoch under its name: the offset of its first presence. Commands stamped with
     * a higher one ({@link EpochHeader}) are for a newer agent of the name, not this one.
     */
    public long epoch() {
        return beat.epoch();
    }

    /** This run of the agent, as its presence names it. */
    public String incarnation() {
        return beat.incarnation();
    }

    private void beat() {
        try {
            log.offer(beat);
        } catch (RuntimeException e) { // the next one retries
            System.err.println("ferry agent " + beat.node() + ": presence not sent: " + e.getMessage());
        }
    }

    /**
     * Why {@code mine}'s node name is taken: the newest presence of another live incarnation
     * before it, said for a person; empty when there is none.
     */
    private static Optional<String> other(KafkaLog log, Event.AgentPresent mine, RecordMetadata at) {
        TopicPartition tp = new TopicPartition(at.topic(), at.partition());
        try (KafkaConsumer<byte[], byte[]> c = log.consumer()) {
            c.assign(List.of(tp));
            Map<TopicPartition, OffsetAndTimestamp> from = c.offsetsForTimes(Map.of(tp,
                    Math.max(0, at.timestamp() - LOOK_BACK.toMillis())), Duration.ofSeconds(30));
            OffsetAndTimestamp start = from.get(tp);
            c.seek(tp, start != null ? start.offset() : at.offset());
            Map<String, Word> newest = new HashMap<>(); // by incarnation: its last word before mine
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (c.position(tp) < at.offset()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("cannot read the agents' presence on " + log.bootstrapServers()
                            + " within 30 s");
                }
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    if (r.offset() >= at.offset()) {
                        break;
                    }
                    try {
                        if (EventCodec.decode(r.value()) instanceof Event.AgentPresent p
                                && p.node().equals(mine.node())) {
                            newest.put(p.incarnation(), new Word(p, r.timestamp()));
                        }
                    } catch (IllegalArgumentException malformed) {
                        // not an agent's presence: another job's heartbeat sharing the partition, or garbage
                    }
                }
            }
            return newest.values().stream().filter(w -> alive(w.said(), w.at(), mine, at.timestamp()))
                    .max(Comparator.comparingLong(Word::at)).map(w -> taken(w, at.timestamp()));
        }
    }

    /** Why the name is taken, for a person: who holds it, since when, and when it would be free. */
    private static String taken(Word w, long now) {
        Event.AgentPresent p = w.said();
        return String.format(Locale.ROOT, "node name %s is taken: the agent on host %s with home %s said it"
                        + " is alive %.1f s ago. One agent per node name: stop that agent, or start this one with"
                        + " another --node (the name of an agent that died is free %d s after its last word)",
                p.node(), p.host(), p.home(), (now - w.at()) / 1000.0, Math.max(1, 3 * p.intervalMillis() / 1000));
    }

    /** An agent's presence and the broker's time of it. */
    private record Word(Event.AgentPresent said, long at) {}

    /** Whether {@code p}, sent at {@code sentAt}, is another live agent under {@code mine}'s name at {@code now}. */
    static boolean alive(Event.AgentPresent p, long sentAt, Event.AgentPresent mine, long now) {
        boolean predecessor = p.host().equals(mine.host()) && p.home().equals(mine.home());
        return p.node().equals(mine.node()) && !p.incarnation().equals(mine.incarnation()) && !predecessor
                && !p.leaving() && now - sentAt <= 3 * p.intervalMillis();
    }

    /** Stops beating and says so: the name is free at once (or, if that word is lost, three intervals later). */
    @Override
    public void close() {
        beats.shutdownNow();
        try {
            log.offer(beat.leave());
        } catch (RuntimeException e) {
            // the log is gone: the name frees itself three intervals on
        }
    }
}

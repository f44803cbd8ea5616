package io.ferry.coordinator;

import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.RequestTopics;
import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * What users ask of the coordinator on the commands topic ({@code ferry checkpoint}, {@code halt},
 * {@code restart}, {@code chaos}): each record addressed to the coordinator is decoded (a malformed
 * one is counted and parked) and acted on for the jobs this coordinator owns; one whose job is
 * still being replayed waits for the replay ({@link #takeDeferred}); a checkpoint is kept until the
 * job can take one ({@link #checkpointsAsked}). Every coordinator of a group reads every command
 * and ignores those of jobs it does not own. Coordinator thread only.
 */
final class Orders {
    /** A checkpoint asked for a job this coordinator never comes to know (another's) is forgotten after this. */
    private static final long FORGET_REQUEST_MILLIS = 60_000;
    private final KafkaLog log;
    private final Jobs jobs;
    private final Recovery recovery;
    private final Ownership ownership;
    private final Clock clock;
    private final AtomicLong malformed;
    /** Checkpoints asked for by users, taken as soon as the job can (known, not capturing). */
    private final Map<String, Long> requested = new HashMap<>();
    /** Commands read while their job was being replayed, handled once it is live. */
    private final List<ConsumerRecord<byte[], byte[]>> deferred = new ArrayList<>();

    /** @param malformed counts malformed records, the coordinator's own counter */
    Orders(KafkaLog log, Jobs jobs, Recovery recovery, Ownership ownership, Clock clock, AtomicLong malformed) {
        this.log = log;
        this.jobs = jobs;
        this.recovery = recovery;
        this.ownership = ownership;
        this.clock = clock;
        this.malformed = malformed;
    }

    /** The commands deferred so far, handed back to be handled again (and deferred again if still replaying). */
    List<ConsumerRecord<byte[], byte[]>> takeDeferred() {
        if (deferred.isEmpty()) {
            return List.of();
        }
        List<ConsumerRecord<byte[], byte[]>> again = List.copyOf(deferred);
        deferred.clear();
        return again;
    }

    /** A job given up to another coordinator: its asked-for checkpoint goes with it. */
    void forget(String job) {
        requested.remove(job);
    }

    /**
     * Takes the asked-for checkpoints that {@code request} can start now; forgets those of jobs this
     * coordinator has not come to know within a minute.
     */
    void checkpointsAsked(Predicate<String> request, long now) {
        for (Map.Entry<String, Long> r : List.copyOf(requested.entrySet())) {
            if (request.test(r.getKey()) || jobs.get(r.getKey()).isEmpty()
                    && now - r.getValue() > FORGET_REQUEST_MILLIS) {
                requested.remove(r.getKey());
            }
        }
    }

    /** Handles one record of the commands topic. */
    void handle(ConsumerRecord<byte[], byte[]> r) {
        if (!KafkaLog.COORDINATOR.equals(new String(r.key(), StandardCharsets.UTF_8))) {
            return;
        }
        Command c;
        try {
            c = EventCodec.decodeCommand(r.value());
        } catch (IllegalArgumentException bad) {
            malformed.incrementAndGet();
            log.sendRaw(KafkaLog.DEAD_LETTER, "command-" + r.partition() + "-" + r.offset(), r.value());
            return;
        }
        String by = RequestTopics.by(r);
        if (by != null && !ownership.replaying(c.job())) { // a login's request: its own jobs only (JobOwners)
            var refused = JobOwners.refuses(jobs.get(c.job()).orElse(null), c.job(), false, by);
            if (refused.isPresent()) {
                if (jobs.get(c.job()).isPresent()) { // every coordinator reads these: the job's own says it
                    System.err.println("ferry coordinator: refused " + c.getClass().getSimpleName() + ": "
                            + refused.get());
                    log.sendRaw(KafkaLog.DEAD_LETTER, "refused-" + r.partition() + "-" + r.offset(), r.value());
                }
                return;
            }
        }
        if (c instanceof Command.RequestCheckpoint rc) {
            // Kept even for a job not known yet: its start event may be a moment behind (forgotten if not).
            requested.putIfAbsent(rc.job(), clock.millis());
            return;
        }
        if (ownership.replaying(c.job())) {
            deferred.add(r); // its job is being replayed: answered once it is live
            return;
        }
        if (jobs.get(c.job()).isEmpty()) {
            return; // another coordinator's job (every coordinator reads these)
        }
        if (c instanceof Command.KillRank k) { // ferry chaos: to the node that runs the rank
            jobs.get(k.job()).filter(j -> j.placement != null && !j.finished() && k.rank() < j.ranks())
                    .ifPresentOrElse(j -> {
                try {
                    log.send(j.placement.nodeOf(k.rank()), k);
                } catch (IllegalArgumentException notJoined) {
                    System.err.println("ferry coordinator: chaos: rank " + k.rank() + " of " + k.job()
                            + " runs nowhere yet");
                }
            }, () -> System.err.println("ferry coordinator: chaos: no running job " + k.job() + " with rank "
                    + k.rank()));
        } else if (c instanceof Command.Halt h) {
            jobs.get(h.job()).filter(j -> j.started != null && !j.finished())
                    .ifPresent(j -> log.append(new Event.HaltRequested(h.job(), h.deadlineMillis(), h.why())));
        } else if (c instanceof Command.Restart rs) {
            jobs.get(rs.job()).filter(j -> j.started != null && !j.finished()).ifPresent(j -> {
                if (rs.generation() >= 0) {
                    recovery.rollBack(j, rs.generation(), rs.cause());
                } else {
                    recovery.rollBackBelow(j, Long.MAX_VALUE, rs.cause());
                }
            });
        }
    }
}

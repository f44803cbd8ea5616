package io.ferry.coordinator;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.EventCodec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * What lets a test say "the coordinator decided nothing" after a window, instead of sleeping
 * through it: proof that a whole tick of the coordinator began after the window ended.
 */
final class Ticks {
    /** A bound on a wait that ends as soon as the coordinator answers: it only says how long a failure takes. */
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private Ticks() {}

    /**
     * Returns once {@code c} has run a whole tick that began after this call, or has
     * {@link #decided} something for {@code job}. A chaos order to kill rank 0 of the job (which
     * runs on {@code node}) is read only while the coordinator may decide, right before a tick, and
     * forwarded to the node while the job runs; a second one, sent once the first was forwarded, is
     * read only after that tick. The tick's decisions are in the log and in its state by then (it
     * appends before it returns). The node gets two orders to kill rank 0: only for a job whose
     * node is the test itself.
     */
    static void await(Coordinator c, KafkaLog log, String job, String node) throws InterruptedException {
        // An order read before the coordinator folded the rank's placement (the join event, read by
        // another consumer than the orders) would be dropped as one for a rank that runs nowhere yet.
        long placed = System.nanoTime() + PATIENCE.toNanos();
        while (!runsOn(c, job, node) && !decided(c, job)) {
            if (System.nanoTime() > placed) {
                throw new AssertionError("the coordinator never placed rank 0 of " + job + " on " + node);
            }
            TimeUnit.MILLISECONDS.sleep(10);
        }
        try (KafkaConsumer<byte[], byte[]> toNode = log.commandsFor(node)) {
            for (int round = 0; round < 2; round++) {
                log.send(KafkaLog.COORDINATOR, new Command.KillRank(job, 0));
                long deadline = System.nanoTime() + PATIENCE.toNanos();
                while (!forwarded(toNode, node) && !decided(c, job)) {
                    if (System.nanoTime() > deadline) {
                        throw new AssertionError("the coordinator did not forward a chaos order to " + node + " within "
                                + PATIENCE.toSeconds() + " s");
                    }
                    TimeUnit.MILLISECONDS.sleep(10);
                }
            }
        }
    }

    /** Whether {@code c} has decided anything of its own for {@code job}: ended it, or begun or planned a rollback. */
    static boolean decided(Coordinator c, String job) {
        return c.query(j -> j.get(job)
                .map(v -> v.finished() || v.rollingBack || v.pendingRollback != null || v.recoveries > 0)
                .orElse(false));
    }

    private static boolean runsOn(Coordinator c, String job, String node) {
        return c.query(j -> j.get(job).map(v -> {
            try {
                return v.placement != null && node.equals(v.placement.nodeOf(0));
            } catch (IllegalArgumentException notJoined) {
                return false;
            }
        }).orElse(false));
    }

    private static boolean forwarded(KafkaConsumer<byte[], byte[]> toNode, String node) {
        for (ConsumerRecord<byte[], byte[]> r : toNode.poll(Duration.ofMillis(100))) {
            if (node.equals(new String(r.key(), StandardCharsets.UTF_8))
                    && EventCodec.decodeCommand(r.value()) instanceof Command.KillRank) {
                return true;
            }
        }
        return false;
    }
}

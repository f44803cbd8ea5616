package io.ferry.cli;

import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.coordinator.Jobs;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LogReplay;
import io.ferry.eventlog.RequestTopics;
import io.ferry.model.DaemonThreads;
import io.ferry.model.Event;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.WakeupException;

import java.io.Closeable;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * What {@code ferry run} sees of its job: a fold of the events topic of its own (the same
 * pure fold the coordinator runs), and of the heartbeats sent since it began (a node has
 * answered once it is heard), whichever machine the coordinator is on. Events logged
 * after the watch started are handed to a listener (the progress lines). Thread-safe.
 */
final class JobWatch implements Closeable {
    private final String job;
    private final Jobs jobs = new Jobs();
    private final KafkaConsumer<byte[], byte[]> events;
    private final Map<TopicPartition, Long> startedAt;
    private final Consumer<Event> listener;
    private final Thread thread;
    private volatile boolean running = true;
    /** Whether the watch has folded a JobStarted of its job appended after it began (this run's own start). */
    private volatile boolean ownStart;
    private volatile int attemptsAtStart;
    /** Why the coordinator refused this run's start (a job of another login), or null. */
    private volatile String refusedStart;
    private final String requester;

    JobWatch(KafkaLog log, String job, Consumer<Event> listener) {
        this.job = job;
        this.listener = listener;
        this.requester = log.requester();
        this.events = log.historyAndHeartbeats(); // its nodes answer with heartbeats, in their own topic
        this.startedAt = KafkaLog.ends(events);
        this.thread = DaemonThreads.start("ferry-watch-" + job, this::run);
    }

    private void run() {
        try {
            while (running) {
                for (ConsumerRecord<byte[], byte[]> r : events.poll(Duration.ofMillis(100))) {
                    Event e = LogReplay.decoded(r).orElse(null);
                    if (e == null || !e.job().equals(job)) {
                        continue;
                    }
                    boolean fresh = r.offset() >= startedAt.getOrDefault(new TopicPartition(r.topic(), r.partition()),
                            0L);
                    synchronized (this) {
                        JobView j = jobs.fold(e, r).orElse(null);
                        if (j == null) { // refused by the coordinator too (a login's request for a job not its own)
                            String by = RequestTopics.by(r);
                            if (fresh && e instanceof Event.JobStarted && by != null && by.equals(requester)) {
                                refusedStart = jobs.refuses(e, by).orElse("refused");
                            }
                            continue;
                        }
                        if (fresh && e instanceof Event.JobStarted) {
                            attemptsAtStart = j.launchAttempt();
                            ownStart = true;
                        }
                    }
                    if (fresh) {
                        listener.accept(e);
                    }
                }
            }
        } catch (InterruptException | WakeupException e) {
            // closing
        } finally {
            KafkaLog.closeNow(events);
        }
    }

    /**
     * The job's view. It is folded on the watch's thread: read what is in it through
     * {@link #read} from any other thread (iterating its generations here while an event is
     * folded is a ConcurrentModificationException).
     */
    synchronized Optional<JobView> view() {
        return jobs.get(job);
    }

    /** Reads the job's view under the fold's lock. */
    synchronized <T> Optional<T> read(Function<JobView, T> what) {
        return jobs.get(job).map(what);
    }

    /**
     * The launcher attempts the job had when this run's start was folded: the coordinator's
     * answer to this start is the next one. Waits (bounded) for the start to come round.
     */
    int attemptsAtStart(Duration max) throws InterruptedException {
        awaitOwnStart(max);
        return attemptsAtStart;
    }

    void awaitOwnStart(Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (!ownStart) {
            if (refusedStart != null) {
                throw new IllegalStateException("the coordinator refused this run: " + refusedStart);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("job " + job + ": its start did not come back from the log within "
                        + max.toSeconds() + " s" + (requester == null ? "" : " (login " + requester
                        + " asks through its request topic, which a running coordinator relays: is one running?)"));
            }
            Thread.sleep(20);
        }
    }

    /** Waits for the job (as this run started it, not an earlier run's end) to finish; returns whether it succeeded. */
    boolean awaitFinish() throws InterruptedException {
        awaitOwnStart(Duration.ofMinutes(5));
        while (true) {
            Optional<Boolean> done = read(JobView::success).flatMap(x -> x);
            if (done.isPresent()) {
                return done.get();
            }
            Thread.sleep(100);
        }
    }

    /**
     * Waits (at most {@code max}) until no captured generation newer than the newest established
     * one still waits to be staged and established.
     */
    void settle(Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (System.nanoTime() < deadline && read(v -> {
            long newest = v.generations().stream().filter(g -> g.state() == GenerationView.State.ESTABLISHED)
                    .mapToLong(GenerationView::generation).max().orElse(-1);
            // One older than the newest established is superseded: not waited for (its node may be gone for good).
            return v.generations().stream()
                    .anyMatch(g -> g.state() == GenerationView.State.CAPTURED && g.generation() > newest);
        }).orElse(false)) {
            Thread.sleep(100);
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(3000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

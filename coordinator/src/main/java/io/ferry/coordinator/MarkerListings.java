package io.ferry.coordinator;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Event;
import io.ferry.staging.Repository;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * At a job's start, and when a coordinator takes a running job over, the generations
 * established on its store (a commit marker) above every generation the log knows: what a log
 * that lost its tail no longer says (the embedded broker's host lost power before its last
 * writes reached the disk, or a coordinator started over an empty home). The store's markers
 * are the truth for established generations: each one found is reported established (tier
 * {@link #MARKER_TIER}) and folded at once, so that the job resumes from it and no new generation
 * is numbered as one a marker names already.
 *
 * <p>The store is listed on a lister thread (not a committer, whose commits a hanging store would
 * hold up), never on the coordinator's: a store that does not answer holds up its own job's
 * decisions (for {@link #PATIENCE_MILLIS} at most, then the job goes on from what the log knows,
 * and says so), never the loop, the other jobs or the heartbeats.
 * The answer is taken on the coordinator thread by {@link #settle()}, each tick. Coordinator thread
 * only, but for the listing itself.
 */
final class MarkerListings {
    /** The tier a {@link Event.SnapshotEstablished} names when the generation was found by its marker on the store. */
    static final String MARKER_TIER = "marker";
    /** How long a job's start waits for the listing of its store's established generations. */
    static final long PATIENCE_MILLIS = 10_000;

    /** One job's listing under way, and what its start decides once it is answered (whether a generation was found). */
    private record Pending(JobView job, Future<List<Long>> answer, long deadlineNanos, Consumer<Boolean> then) {
    }

    private final KafkaLog log;
    private final Object lock;
    private final JobStores stores;
    private final ExecutorService listers;
    private final Map<String, Pending> pending = new HashMap<>();

    MarkerListings(KafkaLog log, Object lock, JobStores stores, ExecutorService listers) {
        this.log = log;
        this.lock = lock;
        this.stores = stores;
        this.listers = listers;
    }

    /**
     * Lists {@code j}'s store for markers above what the log knows, then (on the coordinator
     * thread, from {@link #settle()}) folds what it found and calls {@code then} with whether it
     * found any. A later start of the same job replaces a listing still under way.
     */
    void learn(JobView j, Consumer<Boolean> then) {
        long known;
        synchronized (lock) {
            known = j.generations.isEmpty() ? -1 : j.generations.lastKey();
        }
        Future<List<Long>> answer;
        try {
            answer = listers.submit(() -> stores.of(j.started).listGenerations(j.job).stream()
                    .filter(l -> l.committed() && l.generation() > known)
                    .map(Repository.GenerationListing::generation).toList());
        } catch (RejectedExecutionException closing) {
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PATIENCE_MILLIS);
        Pending before = pending.put(j.job, new Pending(j, answer, deadline, then));
        if (before != null) {
            before.answer().cancel(true);
        }
    }

    /** Whether {@code job}'s start waits for its store's listing: nothing is decided for it meanwhile. */
    boolean waiting(String job) {
        return pending.containsKey(job);
    }

    /** Forgets the listing of a job another coordinator now owns. */
    void forget(String job) {
        Pending p = pending.remove(job);
        if (p != null) {
            p.answer().cancel(true);
        }
    }

    /** Takes each listing answered (or out of patience): folds what it found and lets its job's start go on. */
    void settle() {
        if (pending.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        for (Pending p : List.copyOf(pending.values())) {
            if (!p.answer().isDone() && now < p.deadlineNanos()) {
                continue;
            }
            pending.remove(p.job().job);
            List<Long> found = found(p);
            for (long g : found) {
                log.append(new Event.SnapshotEstablished(p.job().job, g, MARKER_TIER, -1));
                JobView j = p.job();
                synchronized (lock) { // now: the decision that follows reads it (the event folds it again)
                    GenerationView v = j.generations.computeIfAbsent(g,
                            x -> new GenerationView(x, j.nodeNames, j.ranks()));
                    v.state = GenerationView.State.ESTABLISHED;
                }
            }
            p.then().accept(!found.isEmpty());
        }
    }

    private static List<Long> found(Pending p) {
        try {
            return p.answer().get(0, TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException | CancellationException e) {
            p.answer().cancel(true);
            String why = e instanceof ExecutionException x ? x.getCause().getMessage()
                    : "no answer within " + PATIENCE_MILLIS / 1000 + " s";
            System.err.println("ferry coordinator: job " + p.job().job + ": cannot list the generations established on"
                    + " its store (" + why + "): it goes on from what the event log knows");
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }
}

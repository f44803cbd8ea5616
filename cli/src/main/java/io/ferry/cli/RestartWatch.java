package io.ferry.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Event;
import io.ferry.staging.Progress;

import java.io.PrintStream;
import java.time.Duration;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Follows a rollback {@code ferry restart} asked for, from the events the job's agents log:
 * ranks restored (a progress bar on a terminal), where each rank's image came from, nodes that
 * could not restore, until every rank runs again, the job ends, or the patience runs out. Not
 * thread-safe: one restart, one caller.
 */
final class RestartWatch {
    /** What came of it. */
    record Outcome(String job, long generation, int ranks, int restored, Map<String, Integer> sources,
                   Map<String, String> failedNodes, double seconds, String ended) {
        boolean complete() {
            return restored >= ranks;
        }

        String line() {
            StringBuilder b = new StringBuilder();
            sources.forEach((tier, n) -> b.append(b.length() > 0 ? ", " : "").append(n).append(' ').append(tier));
            String head = complete()
                    ? String.format(Locale.ROOT, "restored %d ranks of %s from generation %d in %.1f s", ranks, job,
                            generation, seconds)
                    : String.format(Locale.ROOT,
                            "restart of %s from generation %d: %d of %d ranks restored after %.1f s",
                    job, generation, restored, ranks, seconds);
            return head + (b.length() > 0 ? " (" + b + ")" : "") + (ended.isEmpty() ? "" : "; " + ended);
        }

        /** The same as one JSON object (as the other commands' {@code --json}, through Jackson). */
        String json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("job", job);
            m.put("generation", generation);
            m.put("ranks", ranks);
            m.put("restoredRanks", restored);
            m.put("complete", complete());
            m.put("seconds", seconds);
            m.put("sources", sources);
            m.put("failedNodes", failedNodes);
            m.put("ended", ended);
            try {
                return new ObjectMapper().writeValueAsString(m);
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("cannot write the restart's outcome as JSON", e);
            }
        }
    }

    private RestartWatch() {}

    /**
     * Runs {@code request} (which sends the restart) with the watch already reading, then waits
     * for the job's rollback to {@code generation}.
     */
    static Outcome follow(KafkaLog log, String job, long generation, int ranks, Duration patience, Progress progress,
                          PrintStream notes, Runnable request) throws InterruptedException {
        LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();
        try (JobWatch watch = new JobWatch(log, job, events::add)) {
            request.run();
            long start = System.nanoTime();
            long deadline = start + patience.toNanos();
            BitSet restored = new BitSet();
            Map<String, Integer> sources = new TreeMap<>();
            Map<String, String> failed = new TreeMap<>();
            boolean begun = false;
            String ended = "";
            while (restored.cardinality() < ranks) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    ended = "gave up waiting after " + patience.toSeconds()
                            + " s (the rollback may still finish: ferry status " + job + ")";
                    break;
                }
                Event e = events.poll(Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)), TimeUnit.NANOSECONDS);
                if (e instanceof Event.RecoveryStarted r && r.generation() == generation && !begun) {
                    begun = true;
                    progress.start("restoring " + job + " g" + generation, ranks, Progress.Unit.OBJECTS);
                } else if (e instanceof Event.ImagesRestored r && r.generation() == generation) {
                    int before = restored.cardinality();
                    r.sources().forEach((rank, tier) -> {
                        if (rank >= 0 && !restored.get(rank)) {
                            restored.set(rank);
                            sources.merge(tier, 1, Integer::sum);
                        }
                    });
                    failed.remove(r.node());
                    progress.advance(restored.cardinality() - before);
                } else if (e instanceof Event.RestoreFailed f && f.generation() == generation) {
                    failed.put(f.node(), f.reason());
                    notes.println("ferry restart: " + EventPrinter.failure(f));
                } else if (e instanceof Event.RecoveryStarted r && begun && r.generation() != generation) {
                    ended = "the coordinator rolled back to generation " + r.generation() + " instead";
                    break;
                } else if (e instanceof Event.JobFinished f) {
                    ended = "the job finished (" + (f.success() ? "OK" : "FAILED: " + f.detail()) + ")";
                    break;
                }
            }
            if (begun) {
                progress.finish();
            }
            return new Outcome(job, generation, ranks, restored.cardinality(), sources, failed,
                    (System.nanoTime() - start) / 1e9, ended);
        }
    }
}

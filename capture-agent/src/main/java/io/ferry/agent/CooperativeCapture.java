package io.ferry.agent;

import io.ferry.agent.protocol.Line;

import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One generation of a job whose ranks speak the protocol: every rank is asked at once, writes
 * its own state and answers; the generation counts only once all have answered within the
 * timeout, none with a failure. Returns each rank's stall in seconds, from the request to its
 * answer. The transparent counterpart is {@link TransparentCapture}.
 */
final class CooperativeCapture {
    private CooperativeCapture() {
    }

    static Map<Integer, Double> run(Collection<RankProcess> ranks, long g, Duration timeout,
            ScheduledExecutorService poller) throws IOException, InterruptedException, ExecutionException {
        long t0 = System.nanoTime();
        Map<Integer, CompletableFuture<Line>> answers = new HashMap<>();
        Map<Integer, Double> stall = new ConcurrentHashMap<>();
        for (RankProcess r : ranks) {
            CompletableFuture<Line> a = r.request(g, poller);
            a.thenRun(() -> stall.put(r.rank(), (System.nanoTime() - t0) / 1e9));
            answers.put(r.rank(), a);
        }
        try {
            CompletableFuture.allOf(answers.values().toArray(CompletableFuture[]::new))
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            List<Integer> silent = answers.entrySet().stream().filter(a -> !a.getValue().isDone())
                    .map(Map.Entry::getKey).sorted().toList();
            throw new IOException("ranks " + silent + " did not answer within "
                    + timeout.toSeconds() + " s");
        }
        for (var e : answers.entrySet()) {
            if (e.getValue().join() instanceof Line.Fail f) {
                throw new IOException("rank " + e.getKey() + " failed generation " + g + ": " + f.reason());
            }
        }
        return stall;
    }
}

package io.ferry.agent;

import io.ferry.agent.capture.Capturer;
import io.ferry.staging.Progress;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One generation of a job whose ranks cannot speak the protocol: each rank is captured by
 * the job's {@link Capturer} into its generation directory, one rank after another (each
 * image is consistent within its own process group), or, under a method that checkpoints the
 * node's ranks together (DMTCP, whose coordinator drains the sockets between them), in one
 * checkpoint first, each rank's part collected after. Returns each rank's stall in seconds.
 */
final class TransparentCapture {
    private TransparentCapture() {
    }

    static Map<Integer, Double> run(Capturer capturer, Collection<RankProcess> ranks, long g, Duration timeout)
            throws IOException, InterruptedException {
        Map<Integer, Double> stall = new HashMap<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        // DMTCP: every rank of the node in one checkpoint, each collected below
        capturer.checkpointTogether(g, timeout);
        for (RankProcess r : ranks) {
            long pid = capturer.target(r.process().pid()).orElseThrow(() -> new IOException("rank " + r.rank()
                    + " has no process to capture (not started yet, or exited)"));
            // The dump runs on its own thread so a stuck one fails the generation after the timeout.
            CompletableFuture<Capturer.Captured> c = CompletableFuture.supplyAsync(() -> {
                try {
                    return capturer.capture(pid, r.area(), r.generationDir(g), Progress.NONE);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            try {
                long left = Math.max(1, deadline - System.nanoTime());
                stall.put(r.rank(), c.get(left, TimeUnit.NANOSECONDS).stall().toNanos() / 1e9);
            } catch (TimeoutException e) {
                throw new IOException(capturer.method() + " capture of rank " + r.rank() + " did not finish within "
                        + timeout.toSeconds() + " s");
            } catch (ExecutionException e) {
                Throwable t = e.getCause() instanceof UncheckedIOException u ? u.getCause() : e.getCause();
                throw new IOException("rank " + r.rank() + ": " + t.getMessage(), t);
            }
        }
        return stall;
    }
}

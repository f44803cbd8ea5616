package io.ferry.agent;

import io.ferry.agent.peer.ImageStream;
import io.ferry.model.Event;
import io.ferry.staging.Progress;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;

/**
 * A node's staging of one generation as the coordinator sees it: a {@link Event.StagingProgress}
 * each time another tenth of the raw bytes has been read (what was new so far, and what it took
 * on the store), so that the snapshot's forecast follows what the push finds rather than what
 * the last snapshot wrote, and once with nothing read when the reading begins. Called from the
 * push's workers; each tenth is reported once.
 */
final class StagingReport implements Progress {
    static final int STEPS = 10;
    private final String job;
    private final long generation;
    private final String node;
    private final Consumer<Event> events;
    private long read;
    private long fresh;
    private long written;
    private long reportedStep;
    private boolean started;
    /** The node's raw bytes of the generation, over all its pushes (a node's images go in groups of at most 2 GiB). */
    private final long total;

    StagingReport(String job, long generation, String node, long total, Consumer<Event> events) {
        this.job = job;
        this.generation = generation;
        this.node = node;
        this.total = total;
        this.events = events;
    }

    /** The raw bytes of the files under {@code dirs}, as a push reads them (metadata only). */
    static long rawBytes(List<Path> dirs) throws IOException {
        long sum = 0;
        for (Path d : dirs) {
            sum += ImageStream.bytes(d);
        }
        return sum;
    }

    /**
     * A report of nothing read yet when the node's first push begins reading (after it listed the
     * files and read the last snapshot's manifest): from it the coordinator measures the rate the
     * node reads at from its next report on, that set-up not counted as reading.
     */
    @Override
    public synchronized void start(String what, long groupBytes, Unit unit) {
        if (!started && total > 0) {
            started = true;
            events.accept(new Event.StagingProgress(job, generation, node, 0, total, 0, 0));
        }
    }

    /**
     * A worker's new bytes of the segment it is on, until that segment's {@link #advance}: counted
     * with the bytes they were read in, so that what is new is never ahead of what was read
     * (workers finish their segments in any order).
     */
    private final ThreadLocal<long[]> pending = ThreadLocal.withInitial(() -> new long[2]);

    @Override
    public void wrote(long rawBytes, long storedBytes) {
        long[] p = pending.get();
        p[0] += rawBytes;
        p[1] += storedBytes;
    }

    /** Once per segment read (a few MiB): the counts move together, under the lock, so a report is consistent. */
    @Override
    public synchronized void advance(long bytes) {
        long[] p = pending.get();
        fresh += p[0];
        written += p[1];
        p[0] = 0;
        p[1] = 0;
        if (total <= 0) {
            return;
        }
        read = Math.min(total, read + bytes);
        long step = read * STEPS / total;
        if (step > reportedStep && step < STEPS) {
            // the last tenth is not reported: ImageStaged says it all a moment later
            reportedStep = step;
            events.accept(new Event.StagingProgress(job, generation, node, read, total,
                    Math.min(fresh, read), written));
        }
    }

    @Override
    public void finish() {}
}

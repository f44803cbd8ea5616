package io.ferry.coordinator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Jobs set aside because handling one of their events raised an {@link Error} (a stack overflow,
 * an allocation too large for the heap, a class that will not load): that job is decided nothing
 * more by this coordinator, loudly, and every other job goes on, instead of the one thread that
 * serves them all dying with it. A coordinator started again (after the fix) takes the job up
 * again from the log. Only these errors are caught: an {@link InternalError} or {@link
 * UnknownError} of the JVM itself still ends the loop. Coordinator thread only.
 */
final class Quarantine {
    private static final Logger LOG = LoggerFactory.getLogger(Quarantine.class);
    private final Set<String> jobs = new TreeSet<>();

    boolean holds(String job) {
        return jobs.contains(job);
    }

    /** Runs {@code work} for {@code job}; whether it ran through (false: the job is set aside now, or was). */
    boolean run(String job, Supplier<String> what, Runnable work) {
        if (jobs.contains(job)) {
            return false;
        }
        try {
            work.run();
            return true;
        } catch (StackOverflowError | OutOfMemoryError | LinkageError e) {
            jobs.add(job);
            LOG.error("job {} is set aside: handling {} raised {}; this coordinator decides nothing more for it, the"
                    + " other jobs go on (started again, a coordinator takes it up from the log)", job, what.get(),
                    e.toString(), e);
            return false;
        }
    }

    /** The jobs set aside so far. */
    Set<String> all() {
        return Set.copyOf(jobs);
    }
}

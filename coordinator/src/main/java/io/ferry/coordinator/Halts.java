package io.ferry.coordinator;

import java.util.Locale;
import java.util.Optional;
import java.util.function.BiPredicate;
import java.util.stream.Stream;

/**
 * Halting a job before a deadline, as SCR's {@code scr_halt} ({@code ferry halt}, or SIGTERM to
 * {@code ferry run}, which Slurm sends with {@code --signal}). The job's next checkpoint, requested
 * after the halt was asked, is its last. It is requested as late as the job's own forecast allows:
 * at {@code deadline - 1.5 x (forecast time to established) - 5 s}. With no forecast yet it is
 * requested at once. The job stops (it finishes, success, "halted: ...") once that generation is
 * established. If the deadline comes first, the job stops then, and the detail names the
 * generation the same {@code ferry run} will resume from. Coordinator thread only.
 */
final class Halts {
    /** Margin on the forecast: snapshots vary by tens of percent on a busy machine. */
    static final double FORECAST_MARGIN = 1.5;
    static final long SLACK_MILLIS = 5000;
    private final Recovery recovery;
    private final BiPredicate<String, String> requestCheckpoint;

    /** @param requestCheckpoint asks for the job's next generation, with a reason; false if it cannot be taken now */
    Halts(Recovery recovery, BiPredicate<String, String> requestCheckpoint) {
        this.recovery = recovery;
        this.requestCheckpoint = requestCheckpoint;
    }

    /** Acts on a halting job ({@link JobView#haltDeadline()} set); false if it is not halting. */
    boolean tick(JobView j, long now) {
        if (j.haltDeadlineMillis == 0) {
            return false;
        }
        Optional<GenerationView> last = finalGenerations(j).filter(g -> g.state == GenerationView.State.ESTABLISHED)
                .findFirst();
        if (last.isPresent()) {
            recovery.finish(j, true, String.format(Locale.ROOT, "halted: generation %d was established %.1f s"
                    + " before the deadline; run the same `ferry run` again to resume from it", last.get().generation,
                    (j.haltDeadlineMillis - now) / 1000.0));
            return true;
        }
        if (now >= j.haltDeadlineMillis) {
            String from = j.newestEstablished().map(g -> "generation " + g.generation()).orElse("the start");
            recovery.finish(j, true, "halted at the deadline before its final checkpoint was established;"
                    + " run the same `ferry run` again to resume from " + from);
            return true;
        }
        boolean asked = finalGenerations(j).anyMatch(g -> g.state != GenerationView.State.FAILED);
        if (!asked && now >= j.haltDeadlineMillis - lead(j)) {
            requestCheckpoint.test(j.job, "halt"); // retried on the next tick if the job cannot take one now
        }
        return true;
    }

    /** Generations requested since the halt was asked, oldest first. */
    private static Stream<GenerationView> finalGenerations(JobView j) {
        return j.generations.values().stream().filter(g -> g.requestedAtMillis >= j.haltRequestedAtMillis);
    }

    /**
     * How long before the deadline the final checkpoint is requested: the forecast time to
     * established of the job's latest forecast, else of its latest established snapshot, with
     * the margin; with neither, at once.
     */
    static long lead(JobView j) {
        double seconds = Double.NaN;
        for (GenerationView g : j.generations.descendingMap().values()) {
            if (g.prediction != null) {
                seconds = g.prediction.predictedSecondsToEstablished();
                break;
            }
            if (g.state == GenerationView.State.ESTABLISHED && !Double.isNaN(g.secondsToEstablished)) {
                seconds = g.secondsToEstablished;
                break;
            }
        }
        return Double.isNaN(seconds) ? Long.MAX_VALUE / 2 : (long) (seconds * FORECAST_MARGIN * 1000) + SLACK_MILLIS;
    }
}

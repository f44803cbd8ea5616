package io.ferry.cli;

import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.model.Event;
import io.ferry.model.RankSet;
import io.ferry.model.Sizes;

import java.io.PrintStream;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Supplier;

/** One line per thing a person running a job wants to see, with seconds since start. */
final class EventPrinter implements Consumer<Event> {
    private final PrintStream out;
    private final long t0;
    private final Supplier<Optional<JobView>> view;

    EventPrinter(PrintStream out, long t0, Supplier<Optional<JobView>> view) {
        this.out = out;
        this.t0 = t0;
        this.view = view;
    }

    @Override
    public void accept(Event e) {
        String line = null;
        if (e instanceof Event.ImageCaptured c) {
            // Printed once, on the event that completes the generation (each rank reports once).
            line = view.get().flatMap(j -> j.generations().stream().filter(g -> g.generation() == c.generation()
                            && g.state() == GenerationView.State.CAPTURED && g.capturedRanks() == j.ranks())
                            .findFirst())
                    .map(g -> String.format(Locale.ROOT, "generation %d captured: %d ranks, %s, longest stall %.3f s",
                            g.generation(), g.capturedRanks(), Sizes.format(g.rawBytes()), g.maxStallSeconds()))
                    .orElse(null);
        } else if (e instanceof Event.SnapshotEstablished s && s.secondsSinceRequest() < 0) {
            line = "generation " + s.generation()
                    + " found established on the store (its commit marker), though the event"
                    + " log did not know it: the log lost its tail";
        } else if (e instanceof Event.SnapshotEstablished s) {
            line = String.format(Locale.ROOT,
                    "generation %d established on the %s store, %.2f s after it was requested",
                    s.generation(), s.tier(), s.secondsSinceRequest());
        } else if (e instanceof Event.CaptureFailed f) {
            // Once per generation: a generation abandoned by a rollback, or failed on another node, says so already.
            boolean first = view.get()
                    .flatMap(j -> j.generations().stream().filter(g -> g.generation() == f.generation())
                    .findFirst()).map(g -> g.problem().equals(f.reason())).orElse(true);
            line = first ? "generation " + f.generation() + " FAILED: " + f.reason() : null;
        } else if (e instanceof Event.PartnerCopied c) {
            line = String.format(Locale.ROOT,
                    "generation %d: %s's images of ranks %s copied into %s's cache (%s, %.2f s)",
                    c.generation(), c.node(), c.ranks(), c.partner(), Sizes.format(c.bytes()), c.seconds());
        } else if (e instanceof Event.StagingFailed f) {
            line = "generation " + f.generation() + " rank " + f.rank() + " waits in the local cache: " + f.reason();
        } else if (e instanceof Event.StoreHealthReported h) {
            line = StatusCommand.describe(h);
        } else if (e instanceof Event.RankExited x && x.exitCode() != 0
                && x.exitCode() != Event.RankExited.UNKNOWN_EXIT) {
            // (a launcher's rank: its exit code is the launcher's, printed when it ends)
            line = "rank " + x.rank() + " exited with " + x.exitCode();
        } else if (e instanceof Event.RanksJoined r) {
            line = "ranks " + r.ranks() + " joined node " + r.node();
        } else if (e instanceof Event.LauncherExited x && x.exitCode() != 0) {
            line = "the launcher (attempt " + x.attempt() + ") exited with " + x.exitCode();
        } else if (e instanceof Event.RecoveryStarted r) {
            line = (r.generation() < 0 ? "recovering: no usable snapshot, all ranks restart from the beginning"
                    : "recovering: all ranks roll back to generation " + r.generation()) + " (" + r.cause() + ")";
        } else if (e instanceof Event.ImagesRestored r) {
            line = r.generation() < 0 ? "node " + r.node() + (r.sources().isEmpty() ? " relaunched its ranks"
                    : " runs ranks "
                    + RankSet.of(r.sources().keySet().stream().mapToInt(Integer::intValue)))
                    + " from the beginning"
                    : "node " + r.node() + " restored generation " + r.generation() + ", sources by rank "
                    + new TreeMap<>(r.sources());
        } else if (e instanceof Event.RestoreFailed f) {
            line = failure(f) + (f.generation() < 0 || f.provenBad()
                    ? "" : " (nothing against the snapshot: tried again after the recovery backoff)");
        } else if (e instanceof Event.JobPlaced p) {
            line = Event.JobPlaced.START.equals(p.reason()) ? "ranks launched on " + p.placement()
                    : "ranks placed anew: " + p.reason();
        } else if (e instanceof Event.HaltRequested h) {
            line = "halt requested (" + h.why() + "): a final checkpoint, established before "
                    + Instant.ofEpochMilli(h.deadlineMillis())
                    .truncatedTo(ChronoUnit.SECONDS) + ", then the job stops";
        } else if (e instanceof Event.JobFinished f) {
            line = "job " + (f.success() ? "finished: " : "FAILED: ") + f.detail();
        }
        if (line != null) {
            out.printf(Locale.ROOT, "[%6.1fs] %s%n", (System.nanoTime() - t0) / 1e9, line);
        }
    }

    /**
     * What failed, for people: "node N cannot restore generation G: REASON" (or "cannot launch the ranks of
     * generation G", "cannot start the job").
     */
    static String failure(Event.RestoreFailed f) {
        return "node " + f.node() + " " + (f.generation() < 0 ? "cannot start the job"
                : f.launch() ? "cannot launch the ranks of generation " + f.generation()
                : "cannot restore generation " + f.generation()) + ": " + f.reason();
    }
}

package io.ferry.coordinator.predict;

import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.coordinator.Jobs;
import io.ferry.model.Event;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * On several nodes, the bytes the other nodes still had to read for staging when the last rank was captured:
 * the load the last node's push shares the store (and, nodes sharing a machine, its cores) with. Rank 0 runs
 * on node {@code n}, rank 1 on node {@code m}, captured last.
 */
class OthersLeftForecastTest {
    private static final long MIB = 1L << 20;
    private static final long RAW = 256 * MIB;
    private final Jobs jobs = new Jobs();
    private final JobView j = jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "n"), 0);

    @Test
    void theOtherNodesBytesLeftAreTheirCapturedBytesLessWhatTheyReportedRead() {
        assertEquals(RAW / 2 - 32 * MIB, captured(0, 0, 32 * MIB).othersLeftAtCapture(), "n had read 32 MiB");
        assertEquals(0, captured(1, 10_000, -1).othersLeftAtCapture(),
                "no staging report of the job folded yet (as in a replay of the events topic alone): not known");

        jobs.apply(new Event.CheckpointRequested("j", 2, "request"), 20_000);
        jobs.apply(new Event.ImageCaptured("j", 2, 0, "n", RAW / 2, 0.1), 20_100);
        jobs.apply(new Event.StagingProgress("j", 2, "n", RAW / 2 - 4 * MIB, RAW / 2, 0, 0), 20_200);
        jobs.apply(new Event.ImageStaged("j", 2, 0, "remote", RAW / 2, 0, 0.2), 20_300); // its last report not sent
        jobs.apply(new Event.ImageCaptured("j", 2, 1, "m", RAW / 2, 0.1), 20_500);
        assertEquals(0, generation(2).othersLeftAtCapture(), "n had staged all it holds");
        jobs.apply(new Event.StagingProgress("j", 1, "n", RAW / 2, RAW / 2, 0, 0), 20_600); // 1 passes its marks
        assertEquals(RAW / 2, captured(3, 30_000, -1).othersLeftAtCapture(),
                "the job's reports are folded, n's of this one not yet: all its bytes");

        JobView one = jobs.apply(new Event.JobStarted("one", 2, 0, false, "file:/s", "n"), 0);
        jobs.apply(new Event.CheckpointRequested("one", 0, "request"), 1_000);
        jobs.apply(new Event.ImageCaptured("one", 0, 0, "n", RAW / 2, 0.1), 1_100);
        jobs.apply(new Event.StagingProgress("one", 0, "n", 8 * MIB, RAW / 2, 0, 0), 1_200);
        jobs.apply(new Event.ImageCaptured("one", 0, 1, "n", RAW / 2, 0.1), 1_500);
        assertEquals(0, one.generations().iterator().next().othersLeftAtCapture(), "one node: no other");
    }

    /** A node not heard from yet, where another node reported, has all its bytes left. */
    @Test
    void aNodeNotHeardFromYetHasAllItsBytesLeft() {
        JobView three = jobs.apply(new Event.JobStarted("three", 3, 0, false, "file:/s", "n"), 0);
        jobs.apply(new Event.CheckpointRequested("three", 0, "request"), 1_000);
        jobs.apply(new Event.ImageCaptured("three", 0, 0, "n", RAW / 2, 0.1), 1_100);
        jobs.apply(new Event.ImageCaptured("three", 0, 1, "o", RAW / 2, 0.1), 1_150);
        jobs.apply(new Event.StagingProgress("three", 0, "n", 32 * MIB, RAW / 2, 0, 0), 1_200);
        jobs.apply(new Event.ImageCaptured("three", 0, 2, "m", RAW / 2, 0.1), 1_500);
        assertEquals(RAW / 2 - 32 * MIB + RAW / 2, three.generations().iterator().next().othersLeftAtCapture(),
                "n had read 32 MiB, o nothing it said");
    }

    /** Each 64 MiB the other node has left adds 0.5 s to the 1 s rest after capture: the forecast follows. */
    @Test
    void theForecastAtCaptureAddsWhatTheOtherNodesLoadCost() {
        long[] left = {0, 64, 0, 128, 0, 64, 0, 128};
        for (int g = 0; g < left.length; g++) {
            snapshot(g, left[g] * MIB, 1.0 + left[g] / 128.0);
        }
        assertEquals(0.5 + 1.0 + 96 / 128.0, forecastAtCapture(8, 96 * MIB), 1e-6);
        assertEquals(0.5 + 1.0, forecastAtCapture(9, 0), 1e-6);
    }

    /** A load past the largest the window saw is not carried along the fitted line: it costs what that largest did. */
    @Test
    void aLoadLargerThanAnyTheWindowSawCostsWhatTheLargestDid() {
        long[] left = {0, 32, 0, 64, 0, 32, 0, 64};
        for (int g = 0; g < left.length; g++) {
            snapshot(g, left[g] * MIB, 1.0 + left[g] / 128.0);
        }
        assertEquals(0.5 + 1.0 + 64 / 128.0, forecastAtCapture(8, 128 * MIB), 1e-6,
                "128 MiB left: as 64 MiB (1.5 s after capture), not 2 s");
        assertEquals(0.5 + 1.0 + 48 / 128.0, forecastAtCapture(9, 48 * MIB), 1e-6, "within what it saw: the line");
    }

    /** Where the snapshots with a load were the faster ones, that is noise in a handful of them: left out. */
    @Test
    void aLoadThatWouldShortenTheRestIsLeftOut() {
        long[] left = {0, 64, 0, 128, 0, 64, 0, 128};
        for (int g = 0; g < left.length; g++) {
            snapshot(g, left[g] * MIB, 1.5 - left[g] / 256.0);
        }
        assertEquals(forecastAtCapture(8, 0), forecastAtCapture(9, 96 * MIB), 1e-9);
    }

    /** One snapshot with a load says nothing of what a load costs: a fit would pass through it exactly. */
    @Test
    void oneSnapshotWithALoadIsNotEnough() {
        long[] left = {0, 0, 0, 0, 0, 128, 0, 0};
        double[] rest = {1.0, 1.1, 0.9, 1.0, 1.1, 2.5, 0.9, 1.0};
        for (int g = 0; g < left.length; g++) {
            snapshot(g, left[g] * MIB, rest[g]);
        }
        assertEquals(forecastAtCapture(8, 0), forecastAtCapture(9, 96 * MIB), 1e-9);
    }

    /**
     * A swing job across nodes (the times of a run recorded on 2026-11-30, the loads halved to fit this job):
     * each snapshot that wrote nothing had 114 to 116 MiB left on the other node at its capture, each that wrote
     * all had none, so the load is the bytes' own and the fit cannot tell them apart. With a term of its own, a
     * snapshot writing nothing with less left was forecast shorter than nothing after its capture (in that run
     * by 6 s); without it, as the ones that wrote nothing took.
     */
    @Test
    void aLoadThatComesOnlyWithTheSnapshotsWritingNothingIsNoTermOfItsOwn() {
        long[] left = {0, 0, 0, 0, 116, 116, 0, 0, 114, 0};
        double[] rest = {1.2, 1.1, 1.2, 1.226, 0.95, 1.061, 0.99, 1.121, 0.808, 0.836};
        for (int g = 0; g < left.length; g++) {
            snapshot(g, left[g] * MIB, rest[g], left[g] > 0 ? 0 : RAW / 2);
        }
        GenerationView v = captured(10, 10 * 20_000, RAW / 2 - 48 * MIB, 0);
        assertEquals(48 * MIB, v.othersLeftAtCapture());
        double after = Predictor.atCapture(j, v, Long.MAX_VALUE).orElseThrow().predictedSecondsToEstablished() - 0.5;
        assertTrue(after > 0.7 && after < 1.1, "as the snapshots that wrote nothing took (0.81 to 1.06 s): " + after);
    }

    /**
     * Generation {@code g} requested at {@code at}, rank 0 captured on {@code n} 0.1 s later, rank 1 on {@code m}
     * 0.5 s after the request; {@code nRead} (-1: no report) of n's bytes read by then.
     */
    private GenerationView captured(long g, long at, long nRead) {
        return captured(g, at, nRead, -1);
    }

    /** As {@link #captured(long, long, long)}, each rank's sample saying it writes {@code expected} (-1: none). */
    private GenerationView captured(long g, long at, long nRead, long expected) {
        jobs.apply(new Event.CheckpointRequested("j", g, "request"), at);
        jobs.apply(new Event.ImageCaptured("j", g, 0, "n", RAW / 2, 0.1, expected), at + 100);
        if (nRead >= 0) {
            jobs.apply(new Event.StagingProgress("j", g, "n", nRead, RAW / 2, 0, 0), at + 200);
        }
        jobs.apply(new Event.ImageCaptured("j", g, 1, "m", RAW / 2, 0.1, expected), at + 500);
        return generation(g);
    }

    /**
     * A snapshot writing all it holds whose other node had {@code left} bytes to read, established {@code rest} s
     * after its capture.
     */
    private void snapshot(long g, long left, double rest) {
        snapshot(g, left, rest, RAW / 2);
    }

    /** As {@link #snapshot(long, long, double)}, each rank writing {@code written} bytes. */
    private void snapshot(long g, long left, double rest, long written) {
        long at = g * 20_000;
        captured(g, at, RAW / 2 - left);
        long established = at + 500 + Math.round(rest * 1000);
        jobs.apply(new Event.ImageStaged("j", g, 0, "remote", RAW / 2, written, 0.5), established - 300);
        jobs.apply(new Event.ImageStaged("j", g, 1, "remote", RAW / 2, written, 0.5), established - 100);
        jobs.apply(new Event.SnapshotEstablished("j", g, "remote", 0.5 + rest), established);
    }

    /** The forecast at capture of generation {@code g} (0.5 s to its capture), its other node with {@code left} to read. */
    private double forecastAtCapture(long g, long left) {
        GenerationView v = captured(g, g * 20_000, RAW / 2 - left);
        assertEquals(left, v.othersLeftAtCapture());
        return Predictor.atCapture(j, v, Long.MAX_VALUE).orElseThrow().predictedSecondsToEstablished();
    }

    private GenerationView generation(long g) {
        return j.generations().stream().filter(x -> x.generation() == g).findFirst().orElseThrow();
    }
}

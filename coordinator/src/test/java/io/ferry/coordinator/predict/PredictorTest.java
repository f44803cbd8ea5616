package io.ferry.coordinator.predict;

import io.ferry.coordinator.JobView;
import io.ferry.coordinator.Jobs;
import io.ferry.model.Event;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PredictorTest {
    private final Jobs jobs = new Jobs();

    /**
     * A job of 2 ranks whose snapshots write all their bytes (incompressible, nothing shared) and
     * follow t = 1.5 s + bytes / 100 MB/s, stall = 0.1 s + share / 400 MB/s.
     */
    private JobView history(long... sizes) {
        long[] raw = sizes.clone();
        return history(raw, sizes);
    }

    /**
     * As {@link #history(long...)}, generation g of {@code raw[g]} bytes writing {@code written[g]}: t = 1.5 s +
     * written / 100 MB/s.
     */
    private JobView history(long[] raw, long[] written) {
        JobView j = jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "n"), 0);
        for (int g = 0; g < raw.length; g++) {
            jobs.apply(new Event.CheckpointRequested("j", g, "request"), 0);
            double stall = 0.1 + raw[g] / 2 / 400e6;
            jobs.apply(new Event.ImageCaptured("j", g, 0, "n", raw[g] / 2, stall), 0);
            jobs.apply(new Event.ImageCaptured("j", g, 1, "n", raw[g] - raw[g] / 2, stall), 0);
            jobs.apply(new Event.ImageStaged("j", g, 0, "remote", raw[g] / 2, written[g] / 2, 1), 0);
            jobs.apply(new Event.ImageStaged("j", g, 1, "remote", raw[g] - raw[g] / 2, written[g] - written[g] / 2, 1),
                    0);
            jobs.apply(new Event.SnapshotEstablished("j", g, "remote", 1.5 + written[g] / 100e6), 0);
        }
        return j;
    }

    @Test
    void aJobWhoseLaterSnapshotsWriteAFifthIsForecastFromWhatTheyWriteNotTheirRawSize() {
        long gib = 1L << 30;
        long fifth = 200L << 20;
        // The first snapshot writes everything; later ones of the same raw size only what changed (varying a little).
        JobView j = history(new long[]{2 * gib, 2 * gib, 2 * gib, 2 * gib, 2 * gib},
                new long[]{gib, fifth, fifth + (50L << 20), fifth - (40L << 20), fifth});
        Event.PredictionMade p = Predictor.predict(j, 5, 2 * gib, 2).orElseThrow();
        assertEquals(1.5 + fifth / 100e6, p.predictedSecondsToEstablished(), 1e-6,
                "the raw size is the same every time: only the written bytes tell the first snapshot from the others");
    }

    @Test
    void noForecastDuringWarmUp() {
        JobView j = history(100_000_000, 200_000_000);
        assertTrue(Predictor.predict(j, 2, 300_000_000, 2).isEmpty());
    }

    @Test
    void forecastFollowsTheJobsOwnCostPerByte() {
        JobView j = history(100_000_000, 400_000_000, 200_000_000, 800_000_000, 300_000_000, 600_000_000);
        Event.PredictionMade p = Predictor.predict(j, 6, 1_000_000_000, 2).orElseThrow();
        assertEquals(1.5 + 10.0, p.predictedSecondsToEstablished(), 1e-6);
        assertEquals(0.1 + 500e6 / 400e6, p.predictedStallSeconds(), 1e-6);
        assertEquals(3, p.basedOn(), "the first three snapshots are warm-up");
        // The law: the bytes over the best capture write rate, far below the real time to established.
        assertTrue(p.idealSeconds() > 0 && p.idealSeconds() < p.predictedSecondsToEstablished(), p.toString());
    }

    @Test
    void sameSizedSnapshotsForecastTheirMeanInsteadOfAGuessedSlope() {
        JobView j = history(100_000_000, 100_000_000, 100_000_000, 100_000_000);
        Event.PredictionMade p = Predictor.predict(j, 4, 100_000_000, 2).orElseThrow();
        assertEquals(2.5, p.predictedSecondsToEstablished(), 1e-9);
    }

    /** Generation g of 200 MB (all written) taking {@code seconds[g]}, requested at g x 20 s and established then. */
    private JobView timed(double... seconds) {
        JobView j = jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "n"), 1);
        for (int g = 0; g < seconds.length; g++) {
            long at = 1_000 + g * 20_000L;
            jobs.apply(new Event.CheckpointRequested("j", g, "request"), at);
            jobs.apply(new Event.ImageCaptured("j", g, 0, "n", 100_000_000, 0.2), at);
            jobs.apply(new Event.ImageCaptured("j", g, 1, "n", 100_000_000, 0.2), at);
            jobs.apply(new Event.ImageStaged("j", g, 0, "remote", 100_000_000, 100_000_000, 1), at);
            jobs.apply(new Event.ImageStaged("j", g, 1, "remote", 100_000_000, 100_000_000, 1), at);
            jobs.apply(new Event.SnapshotEstablished("j", g, "remote", seconds[g]), at + (long) (seconds[g] * 1000));
        }
        return j;
    }

    @Test
    void aJobThatSpeedsUpIsFollowedInsteadOfAveraged() {
        // Every snapshot writes the same bytes while the job gets faster (17 s down to 10.4 s):
        // no feature explains it, so the fit is a mean, and recent snapshots weigh more in it.
        double[] s = new double[12];
        for (int g = 0; g < s.length; g++) {
            s[g] = 17 - 0.6 * g;
        }
        double windowMean = 0;
        for (int g = 3; g < 12; g++) {
            windowMean += s[g] / 9;
        }
        Event.PredictionMade p = Predictor.predict(timed(s), 12, 200_000_000, 2).orElseThrow();
        double next = 17 - 0.6 * 12;
        assertTrue(p.predictedSecondsToEstablished() < windowMean - 1 && p.predictedSecondsToEstablished() > next,
                "forecast " + p.predictedSecondsToEstablished() + " s: nearer the newest snapshots (next " + next
                        + " s) than the window's mean " + windowMean + " s");
    }

    @Test
    void aRefitForecastsEachGenerationFromWhatWasEstablishedBeforeItsRequest() {
        // Generation 4 takes 30 s: established only after generation 5 was requested (at 101 s).
        JobView j = timed(2, 2, 2, 2, 30, 2, 2);
        List<ForecastErrors.Row> rows = ForecastErrors.refit(j);
        assertEquals(List.of(3L, 4L, 5L, 6L), rows.stream().map(ForecastErrors.Row::generation).toList());
        assertEquals(2.0, rows.get(2).predicted(), 1e-9,
                "generation 5's forecast cannot have seen generation 4's 30 s");
        assertTrue(rows.get(3).predicted() > 2.01, "generation 6's did: " + rows.get(3).predicted());
        assertEquals(30, rows.get(1).actual(), 1e-9);
    }

    /**
     * Generation g of 200 MB (all written): its ranks are captured {@code capture[g]} seconds after
     * the request (noisy: another program shares the disk), staged and committed 3 s later.
     */
    private JobView noisyCapture(double... capture) {
        JobView j = jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "n"), 1);
        for (int g = 0; g < capture.length; g++) {
            long at = 1_000 + g * 20_000L;
            long caught = at + (long) (capture[g] * 1000);
            jobs.apply(new Event.CheckpointRequested("j", g, "request"), at);
            jobs.apply(new Event.ImageCaptured("j", g, 0, "n", 100_000_000, capture[g]), caught - 100);
            jobs.apply(new Event.ImageCaptured("j", g, 1, "n", 100_000_000, capture[g]), caught);
            jobs.apply(new Event.ImageStaged("j", g, 0, "remote", 100_000_000, 100_000_000, 1), caught + 1_000);
            jobs.apply(new Event.ImageStaged("j", g, 1, "remote", 100_000_000, 100_000_000, 1), caught + 2_000);
            jobs.apply(new Event.SnapshotEstablished("j", g, "remote", capture[g] + 3), caught + 3_000);
        }
        return j;
    }

    @Test
    void aForecastMadeOnceCapturedMeasuresTheCaptureAndForecastsOnlyTheRest() {
        JobView j = noisyCapture(1, 5, 2, 6, 1.5, 4.5, 2, 5);
        assertEquals(5.0, j.latest().orElseThrow().secondsToCaptured(), 1e-9,
                "log times: request to the last rank captured");
        // Generation 8 was captured 2.5 s after its request: the forecast is those 2.5 s and the steady 3 s after.
        Event.PredictionMade p = Predictor.predict(j, 8, 200_000_000, 2, 2.5, Long.MAX_VALUE).orElseThrow();
        assertEquals(5.5, p.predictedSecondsToEstablished(), 1e-6);
        // Before the request (the dashboard's next snapshot), the capture is forecast as well: between the extremes.
        double next = Predictor.predict(j, 8, 200_000_000, 2).orElseThrow().predictedSecondsToEstablished();
        assertTrue(next > 3 + 1 && next < 3 + 6, "capture forecast from the history, then 3 s: " + next);
        // Replayed, each forecast is exact: only the capture varied, and it was measured.
        for (ForecastErrors.Row r : ForecastErrors.refit(j)) {
            assertEquals(0, r.error(), 1e-6, r.toString());
            assertEquals(3, r.actual() - r.captured(), 1e-6);
        }
    }

    /**
     * Generation g of {@code mib[g]} MiB (all written) over 2 ranks, captured 0.2 s after its request and established
     * {@code after[g]} s after that.
     */
    private JobView curved(long[] mib, double[] after) {
        JobView j = jobs.apply(new Event.JobStarted("c", 2, 0, false, "file:/s", "n"), 1);
        for (int g = 0; g < mib.length; g++) {
            long at = 1_000 + g * 20_000L;
            long half = (mib[g] << 20) / 2;
            jobs.apply(new Event.CheckpointRequested("c", g, "request"), at);
            jobs.apply(new Event.ImageCaptured("c", g, 0, "n", half, 0.1), at + 200);
            jobs.apply(new Event.ImageCaptured("c", g, 1, "n", half, 0.1), at + 200);
            long established = at + 200 + Math.round(after[g] * 1000);
            jobs.apply(new Event.ImageStaged("c", g, 0, "remote", half, half, 0.2), established - 20);
            jobs.apply(new Event.ImageStaged("c", g, 1, "remote", half, half, 0.2), established - 10);
            jobs.apply(new Event.SnapshotEstablished("c", g, "remote", 0.2 + after[g]), established);
        }
        return j;
    }

    /**
     * A node whose time after capture grows faster than the bytes (0.5, 0.8 and 1.7 s at 64, 144 and 248 MiB, as
     * the one-node accuracy job's did): each size is forecast mostly from the snapshots of about its size. A straight
     * line through all three sizes forecast the small and the large ones short and the middle one long (-4.8%, +10.1%,
     * -6.4%); the middle one is still a little long (+7.7%), its neighbours on either side being the nearest.
     */
    @Test
    void aTimeThatCurvesWithTheBytesIsForecastFromSnapshotsOfAboutTheSameSize() {
        long[] mib = {64, 144, 248, 64, 144, 248, 64, 144, 248};
        double[] after = new double[mib.length];
        for (int g = 0; g < mib.length; g++) {
            after[g] = 0.4 + 1.3 * (mib[g] / 248.0) * (mib[g] / 248.0);
        }
        JobView j = curved(mib, after);
        for (int g = 0; g < 3; g++) {
            double p = Predictor.predict(j, 9, mib[g] << 20, 2, 0.2, Long.MAX_VALUE).orElseThrow()
                    .predictedSecondsToEstablished();
            double actual = 0.2 + after[g];
            assertEquals(actual, p, (mib[g] == 144 ? 0.08 : 0.03) * actual, mib[g] + " MiB");
        }
    }

    @Test
    void theHindsightFitLeavesOnlyTheScatterThatSizesDoNotExplain() {
        // Captured in 1 s, then 0.4 s plus 5 ns per written byte: a fit that knows every snapshot has no error left.
        long[] written = {250_000_000, 90_000_000, 170_000_000, 60_000_000, 230_000_000, 130_000_000, 210_000_000,
                80_000_000, 150_000_000, 110_000_000};
        List<ForecastErrors.Row> rows = new ArrayList<>();
        for (int i = 0; i < written.length; i++) {
            double actual = 1 + 0.4 + written[i] * 5e-9;
            rows.add(new ForecastErrors.Row(3 + i, written[i], 2, 99, 0, actual, -1, written[i], 1.0, 0));
        }
        for (ForecastErrors.Row r : ForecastErrors.hindsight(rows)) {
            assertEquals(0, r.error(), 1e-6, r.toString());
        }
        // One snapshot took twice as long after its capture as its size says: only it keeps a large error.
        ForecastErrors.Row slow = rows.get(3);
        double slowActual = 1 + 2 * (slow.actual() - 1);
        rows.set(3, new ForecastErrors.Row(slow.generation(), slow.rawBytes(), 2, 99, 0, slowActual, -1, slow.written(),
                1.0, 0));
        List<Double> err = ForecastErrors.hindsight(rows).stream().map(ForecastErrors.Row::error).toList();
        assertTrue(Math.abs(err.get(3)) > 0.15, "the slow snapshot: " + err);
        assertEquals(Math.abs(err.get(3)), ForecastErrors.quantileAbs(err, 1), 1e-12,
                "the largest error is the slow one's: " + err);
        assertTrue(ForecastErrors.quantileAbs(err, 0.5) < 0.1, "the others: " + err);
        assertTrue(ForecastErrors.quantileAbs(err, 0.5) > 0, "a scatter it cannot explain leaves an error: " + err);
        // Where the log does not say when the ranks were captured, the whole time is fitted.
        List<ForecastErrors.Row> unknown = rows.stream()
                .map(r -> new ForecastErrors.Row(r.generation(), r.rawBytes(), 2, 99,
                0, r.actual(), -1, r.written(), Double.NaN, 0)).toList();
        assertEquals(rows.size(), ForecastErrors.hindsight(unknown).size());
        assertTrue(ForecastErrors.hindsight(unknown).stream().allMatch(r -> r.predicted() > 1),
                "fitted from 0, not from the capture");
        assertEquals(List.of(), ForecastErrors.hindsight(rows.subList(0, 2)), "too few snapshots to fit");
    }

    @Test
    void theHindsightFitOfAJobOnSeveralNodesKnowsTheOtherNodesLoad() {
        // As above, and 3 ns more per byte the other nodes still had to read when the last rank was captured: the
        // reference fits that term as the forecasts do, and has no error left.
        long[] written = {250_000_000, 90_000_000, 170_000_000, 60_000_000, 230_000_000, 130_000_000, 210_000_000,
                80_000_000, 150_000_000, 110_000_000};
        long[] others = {0, 200_000_000, 40_000_000, 0, 120_000_000, 300_000_000, 0, 60_000_000, 180_000_000, 0};
        List<ForecastErrors.Row> rows = new ArrayList<>();
        for (int i = 0; i < written.length; i++) {
            double actual = 1 + 0.4 + written[i] * 5e-9 + others[i] * 3e-9;
            rows.add(new ForecastErrors.Row(3 + i, written[i], 6, 99, 0, actual, -1, written[i], 1.0, others[i]));
        }
        for (ForecastErrors.Row r : ForecastErrors.hindsight(rows)) {
            assertEquals(0, r.error(), 1e-6, r.toString());
        }
    }

    @Test
    void youngAndDaly() {
        assertEquals(Math.sqrt(2 * 10 * 86400), Predictor.youngSeconds(10, 86400), 1e-9);
        double daly = Predictor.dalySeconds(10, 86400);
        assertTrue(daly > Predictor.youngSeconds(10, 86400) - 10 && daly < Predictor.youngSeconds(10, 86400) + 10,
                "" + daly);
        assertEquals(5, Predictor.dalySeconds(20, 5), 1e-9, "a checkpoint longer than 2 MTBF: checkpoint every MTBF");
    }
}

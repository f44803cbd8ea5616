package io.ferry.coordinator.predict;

import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.coordinator.Jobs;
import io.ferry.model.Event;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A snapshot's forecast made again as its nodes stage it, from what their pushes found new so
 * far: right where the data changed and the forecast at capture, which can only assume the last
 * snapshot's share of new bytes, is wrong.
 */
class StagingForecastTest {
    private static final long MIB = 1L << 20;
    private final Jobs jobs = new Jobs();

    @Test
    void extrapolatesEachNodesNewBytesAndTakesTheReportingNodesShareForTheSilentOnes() {
        StagingSoFar s = new StagingSoFar();
        assertEquals(0, s.readShare(400 * MIB));
        assertEquals(100 * MIB, s.writtenEstimate(400 * MIB, 0.25), "nothing heard: the fallback share");
        s.report(new Event.StagingProgress("j", 3, "a", 25 * MIB, 100 * MIB, 20 * MIB, 10 * MIB), 1_000);
        s.report(new Event.StagingProgress("j", 3, "b", 50 * MIB, 100 * MIB, 0, 0), 1_000);
        assertEquals(75.0 / 400, s.readShare(400 * MIB), 1e-12);
        // a: 10 of 25 read written, scaled to its 100: 40; b: nothing new in half its bytes: 0;
        // the 200 MiB of nodes not heard from at the heard nodes' 10 / 75.
        assertEquals(40 * MIB + Math.round(200 * MIB * 10.0 / 75), s.writtenEstimate(400 * MIB, 0.9));
        s.report(new Event.StagingProgress("j", 3, "a", 20 * MIB, 100 * MIB, 20 * MIB, 10 * MIB), 1_100);
        assertEquals(75.0 / 400, s.readShare(400 * MIB), 1e-12, "an older report arriving late is not taken");
    }

    /**
     * Three snapshots that wrote nothing new (the forecast at capture expects the same) and then
     * one that writes all of its 1 GiB: at capture the forecast is the fixed cost alone; at 25%
     * of the bytes read it is the time of writing all of it.
     */
    @Test
    void theForecastAtAQuarterReadFollowsTheNewBytesTheForecastAtCaptureCouldNotKnow() {
        JobView j = jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "n"), 0);
        long raw = 1L << 30;
        // t = 1.5 s + written / 100 MB/s (1.2 s to start, reading at 100 MB/s, a commit of 0.3 s);
        // history: 0, 0, 0.5 GiB, 0.25 GiB written (so the slope is known)
        long[] written = {raw, raw / 2, raw / 4, 0, 0};
        for (int g = 0; g < written.length; g++) {
            snapshot(j, g, raw, written[g], 1.5 + written[g] / 100e6);
        }
        long at = 100_000;
        jobs.apply(new Event.CheckpointRequested("j", 5, "request"), at);
        jobs.apply(new Event.ImageCaptured("j", 5, 0, "n", raw / 2, 0.1), at + 500);
        jobs.apply(new Event.ImageCaptured("j", 5, 1, "n", raw / 2, 0.1), at + 500);
        GenerationView g = j.generations().stream().filter(x -> x.generation() == 5).findFirst().orElseThrow();
        Event.PredictionMade atCapture = Predictor.predict(j, 5, raw, 2, g.secondsToCaptured(), Long.MAX_VALUE)
                .orElseThrow();
        jobs.apply(atCapture, at + 500);
        assertEquals(0, atCapture.writtenBytes(), "the last snapshot wrote nothing new: so is this one expected to");
        double actual = 0.5 + 1.5 + raw / 100e6; // its capture took 0.5 s
        assertTrue(Math.abs(atCapture.predictedSecondsToEstablished() - actual) / actual > 0.5, atCapture.toString());

        StagingSoFar soFar = new StagingSoFar();
        long reading = at + 500 + 1_200; // the agent's report as its push begins reading, then a quarter read
        soFar.report(new Event.StagingProgress("j", 5, "n", 0, raw, 0, 0), reading);
        long quarter = reading + Math.round(raw / 4 / 100e6 * 1000);
        soFar.report(new Event.StagingProgress("j", 5, "n", raw / 4, raw, raw / 4, raw / 4), quarter); // all new
        Event.PredictionMade again = Predictor.during(j, g, soFar, 0.25, quarter).orElseThrow();
        assertEquals(0.25, again.readShare());
        assertEquals(raw, again.writtenBytes());
        assertEquals(actual, again.predictedSecondsToEstablished(), actual * 0.05, again.toString());
        jobs.apply(again, quarter);
        assertEquals(again, g.currentPrediction().orElseThrow(), "status shows the newest forecast");
        assertEquals(atCapture, g.prediction().orElseThrow(), "the one at capture is kept for its accuracy");
        assertEquals(again, g.predictionAt(0.25).orElseThrow());
        jobs.apply(new Event.ImageStaged("j", 5, 0, "remote", raw / 2, raw / 2, 5), at + 12_000);
        jobs.apply(new Event.ImageStaged("j", 5, 1, "remote", raw / 2, raw / 2, 5), at + 12_000);
        jobs.apply(new Event.SnapshotEstablished("j", 5, "remote", actual), at + 12_238);
        assertEquals(1, ForecastErrors.rows(j, 0.25).size());
        assertTrue(Math.abs(ForecastErrors.rows(j, 0.25).get(0).error()) < 0.05);
        assertTrue(Math.abs(ForecastErrors.rows(j, 0).get(0).error()) > 0.5, "at capture, as before");
    }

    @Test
    void aForecastAgainIsNeverEarlierThanNow() {
        JobView j = jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "n"), 0);
        for (int g = 0; g < 4; g++) {
            snapshot(j, g, 100 * MIB, 10 * MIB, 1.0 + g * 0.01);
        }
        jobs.apply(new Event.CheckpointRequested("j", 4, "request"), 100_000);
        jobs.apply(new Event.ImageCaptured("j", 4, 0, "n", 50 * MIB, 0.1), 100_100);
        jobs.apply(new Event.ImageCaptured("j", 4, 1, "n", 50 * MIB, 0.1), 100_100);
        GenerationView g = j.generations().stream().filter(x -> x.generation() == 4).findFirst().orElseThrow();
        jobs.apply(Predictor.predict(j, 4, 100 * MIB, 2, g.secondsToCaptured(), Long.MAX_VALUE).orElseThrow(), 100_100);
        StagingSoFar soFar = new StagingSoFar();
        // done reading, so its rate says the snapshot is about due; the history, long due
        soFar.report(new Event.StagingProgress("j", 4, "n", 50 * MIB, 50 * MIB, 5 * MIB, 5 * MIB), 100_000 + 30_000);
        Event.PredictionMade late = Predictor.during(j, g, soFar, 0.5, 100_000 + 30_000).orElseThrow();
        assertEquals(30.0, late.predictedSecondsToEstablished(), 1e-9, "30 s have passed since the request");
    }

    /**
     * Once every node has reported twice, the rest of the staging is forecast from the rate the
     * slowest node reads at (its first report's time and bytes to its newest), plus the commit's
     * seconds the job's recent snapshots took: a node slowed by its neighbours is seen as it stages.
     */
    @Test
    void withTwoReportsFromEveryNodeTheRestIsForecastAtTheSlowestNodesOwnRate() {
        JobView j = jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "a"), 0);
        for (int g = 0; g < 4; g++) { // each: staged 1 s after its request, established 0.3 s later
            long at = g * 20_000L;
            jobs.apply(new Event.CheckpointRequested("j", g, "request"), at);
            jobs.apply(new Event.ImageCaptured("j", g, 0, "a", 50 * MIB, 0.1), at);
            jobs.apply(new Event.ImageCaptured("j", g, 1, "b", 50 * MIB, 0.1), at);
            jobs.apply(new Event.ImageStaged("j", g, 0, "remote", 50 * MIB, 10 * MIB, 1), at + 1_000);
            jobs.apply(new Event.ImageStaged("j", g, 1, "remote", 50 * MIB, 10 * MIB, 1), at + 1_000);
            jobs.apply(new Event.SnapshotEstablished("j", g, "remote", 1.3), at + 1_300);
        }
        assertEquals(0.3, j.generations().stream().filter(x -> x.generation() == 3).findFirst().orElseThrow()
                .secondsToCommit(), 1e-9);
        long at = 100_000;
        jobs.apply(new Event.CheckpointRequested("j", 4, "request"), at);
        jobs.apply(new Event.ImageCaptured("j", 4, 0, "a", 100 * MIB, 0.1), at + 200);
        jobs.apply(new Event.ImageCaptured("j", 4, 1, "b", 100 * MIB, 0.1), at + 200);
        GenerationView g = j.generations().stream().filter(x -> x.generation() == 4).findFirst().orElseThrow();
        jobs.apply(Predictor.predict(j, 4, 200 * MIB, 2, g.secondsToCaptured(), Long.MAX_VALUE).orElseThrow(),
                at + 200);
        StagingSoFar soFar = new StagingSoFar();
        soFar.report(new Event.StagingProgress("j", 4, "a", 10 * MIB, 100 * MIB, 2 * MIB, 2 * MIB), at + 500);
        soFar.report(new Event.StagingProgress("j", 4, "b", 10 * MIB, 100 * MIB, 2 * MIB, 2 * MIB), at + 500);
        assertTrue(Double.isNaN(soFar.secondsLeft(2, at + 500)), "no rate from one report");
        // 100 MiB/s
        soFar.report(new Event.StagingProgress("j", 4, "a", 30 * MIB, 100 * MIB, 6 * MIB, 6 * MIB), at + 700);
        // 10 MiB/s
        soFar.report(new Event.StagingProgress("j", 4, "b", 20 * MIB, 100 * MIB, 4 * MIB, 4 * MIB), at + 1_500);
        assertEquals(8.0, soFar.secondsLeft(2, at + 1_500), 1e-9, "b's 80 MiB left at 10 MiB/s");
        StagingSoFar noRate = new StagingSoFar(); // b not heard from: no rate for the job
        noRate.report(new Event.StagingProgress("j", 4, "a", 30 * MIB, 100 * MIB, 6 * MIB, 6 * MIB), at + 700);
        assertTrue(Double.isNaN(noRate.secondsLeft(2, at + 1_500)));
        double model = Predictor.during(j, g, noRate, 0.25, at + 1_500).orElseThrow().predictedSecondsToEstablished();
        assertTrue(model < 1.5 + 8.0 + 0.3, "the history knows nothing of b's slowness: " + model);
        Event.PredictionMade p = Predictor.during(j, g, soFar, 0.25, at + 1_500).orElseThrow();
        assertEquals(0.25 * (1.5 + 8.0 + 0.3) + 0.75 * model, p.predictedSecondsToEstablished(), 1e-9,
                "at a quarter read, the rate counts a quarter");
        Event.PredictionMade late = Predictor.during(j, g, soFar, 0.75, at + 1_500).orElseThrow();
        assertEquals(0.75 * (1.5 + 8.0 + 0.3) + 0.25 * model, late.predictedSecondsToEstablished(), 1e-9);
    }

    /** A node that has read all it holds has nothing left, whatever its rate: the job waits on the others. */
    @Test
    void aNodeThatHasReadAllItHoldsLeavesTheOthersToDecide() {
        StagingSoFar soFar = new StagingSoFar();
        soFar.report(new Event.StagingProgress("j", 1, "a", 5 * MIB, 5 * MIB, MIB, MIB), 10_000);
        soFar.report(new Event.StagingProgress("j", 1, "b", 10 * MIB, 100 * MIB, MIB, MIB), 11_000);
        soFar.report(new Event.StagingProgress("j", 1, "b", 30 * MIB, 100 * MIB, 3 * MIB, 3 * MIB), 12_000);
        assertEquals(3.5, soFar.secondsLeft(2, 12_000), 1e-9, "b's 70 MiB at 20 MiB/s");
        soFar.report(new Event.StagingProgress("j", 1, "b", 100 * MIB, 100 * MIB, 9 * MIB, 9 * MIB), 14_000);
        assertEquals(0.0, soFar.secondsLeft(2, 14_000), 1e-9);
    }

    /**
     * A push's first tenth is its slowest: the rest is forecast at the rate of the newer half of a
     * node's reports, the first tenth left out.
     */
    @Test
    void aSlowFirstTenthDoesNotSetTheRateOfTheRest() {
        StagingSoFar soFar = new StagingSoFar();
        soFar.report(new Event.StagingProgress("j", 1, "a", 0, 100 * MIB, 0, 0), 10_000);
        soFar.report(new Event.StagingProgress("j", 1, "a", 10 * MIB, 100 * MIB, MIB, MIB), 11_000); // 10 MiB/s
        assertTrue(Double.isNaN(soFar.secondsLeft(1, 11_000)), "no rate from the first tenth alone");
        soFar.report(new Event.StagingProgress("j", 1, "a", 20 * MIB, 100 * MIB, 2 * MIB, 2 * MIB), 11_100);
        assertEquals(0.8, soFar.secondsLeft(1, 11_100), 1e-9, "80 MiB at the second tenth's 100 MiB/s");
        soFar.report(new Event.StagingProgress("j", 1, "a", 40 * MIB, 100 * MIB, 4 * MIB, 4 * MIB), 11_300);
        assertEquals(0.6, soFar.secondsLeft(1, 11_300), 1e-9, "60 MiB at 100 MiB/s, the newer half");
    }

    /**
     * What comes before a quarter of the bytes read (the capture, a push's set-up and its slow first
     * tenth) swings from one snapshot to the next, and from there on each took the same 0.8 s: at a
     * quarter read the forecast is the time already spent and the rest as the job's snapshots took it
     * from the same mark, where the fit of the whole time after capture is as far off as at capture.
     */
    @Test
    void atAQuarterReadTheRestIsTheJobsOwnTimeFromTheSameMark() {
        long raw = 400 * MIB;
        JobView j = sevenStaged(raw);
        GenerationView third = j.generations().stream().filter(x -> x.generation() == 3).findFirst().orElseThrow();
        assertEquals(2.5, third.secondsToMark(0.25), 1e-9);
        assertTrue(Double.isNaN(third.secondsToMark(0.5)), "never reported past a quarter");
        // a node that stages while another still captures: a quarter of what is captured so far is no mark
        jobs.apply(new Event.CheckpointRequested("j", 20, "request"), 150_000);
        jobs.apply(new Event.ImageCaptured("j", 20, 0, "n", raw / 2, 0.1), 150_100);
        jobs.apply(new Event.StagingProgress("j", 20, "n", raw / 4, raw / 2, 0, 0), 150_200);
        jobs.apply(new Event.ImageCaptured("j", 20, 1, "m", raw / 2, 0.1), 150_300);
        GenerationView early = j.generations().stream().filter(x -> x.generation() == 20).findFirst().orElseThrow();
        assertTrue(Double.isNaN(early.secondsToMark(0.25)), "passed before every rank was captured");
        jobs.apply(new Event.StagingProgress("j", 20, "m", raw / 8, raw / 2, 0, 0), 150_400);
        assertEquals(0.4, early.secondsToMark(0.25), 1e-9, "a quarter of all its bytes");

        long at = 200_000;
        GenerationView g = capturedSeventh(j, at, raw);
        Event.PredictionMade atCapture = Predictor.atCapture(j, g, Long.MAX_VALUE).orElseThrow();
        jobs.apply(atCapture, at + 500);
        double actual = 3.6 + 0.8; // a slow start this time
        assertTrue(Math.abs(atCapture.predictedSecondsToEstablished() - actual) / actual > 0.2, atCapture.toString());
        StagingSoFar soFar = new StagingSoFar();
        for (Event.StagingProgress p : reports(7, raw)) {
            soFar.report(p, p.readBytes() == 0 ? at + 600 : at + 3_600);
        }
        Event.PredictionMade again = Predictor.during(j, g, soFar, 0.25, at + 3_600).orElseThrow();
        assertEquals(actual, again.predictedSecondsToEstablished(), 1e-6, again.toString());
        // The fold has the report's log time; the coordinator reads it 0.15 s later: counted from the log time,
        // as the history's marks are.
        jobs.apply(reports(7, raw).get(0), at + 600);
        jobs.apply(reports(7, raw).get(1), at + 3_600);
        assertEquals(actual, Predictor.during(j, g, soFar, 0.25, at + 3_750).orElseThrow()
                .predictedSecondsToEstablished(), 1e-6);
        // A node's rate by a quarter rests on its second tenth (here 4 s for the rest): not blended in where the
        // job's snapshots say how the rest went from the mark.
        StagingSoFar withRate = new StagingSoFar();
        withRate.report(new Event.StagingProgress("j", 7, "n", 0, raw, 0, 0), at + 600);
        withRate.report(new Event.StagingProgress("j", 7, "n", raw / 10, raw, raw / 20, raw / 20), at + 2_600);
        withRate.report(new Event.StagingProgress("j", 7, "n", raw / 5, raw, raw / 10, raw / 10), at + 3_100);
        assertEquals(4.0 - 0.5, withRate.secondsLeft(1, at + 3_600), 1e-9);
        assertEquals(actual, Predictor.during(j, g, withRate, 0.25, at + 3_750).orElseThrow()
                .predictedSecondsToEstablished(), 1e-6);
        assertEquals(0.8, Predictor.restAfterMark(j, g, 0.25, raw / 2, at + 3_600), 1e-6);
        assertTrue(Double.isNaN(Predictor.restAfterMark(j, g, 0.5, raw / 2, at + 3_600)), "no snapshot says");
    }

    /**
     * {@code ferry plan --accuracy J --refit} at a quarter read: the time the snapshot took to the mark
     * and the rest as the snapshots established by then took it from there, for the bytes the live
     * forecast expected; the live forecast (here 9 s, made by an older model) stays in the log's rows.
     */
    @Test
    void theRefitAtAQuarterIsTheTimeToTheMarkAndTheRestAsTheSnapshotsBeforeTookIt() {
        long raw = 400 * MIB;
        JobView j = sevenStaged(raw);
        long at = 200_000;
        GenerationView g = capturedSeventh(j, at, raw);
        Event.PredictionMade atCapture = Predictor.atCapture(j, g, Long.MAX_VALUE).orElseThrow();
        jobs.apply(atCapture, at + 500);
        jobs.apply(reports(7, raw).get(0), at + 600);
        jobs.apply(reports(7, raw).get(1), at + 2_000);
        jobs.apply(atCapture.during(0.25, 9.0, raw / 2), at + 2_100);
        jobs.apply(new Event.ImageStaged("j", 7, 0, "remote", raw / 2, raw / 4, 1), at + 2_500);
        jobs.apply(new Event.ImageStaged("j", 7, 1, "remote", raw / 2, raw / 4, 1), at + 2_500);
        jobs.apply(new Event.SnapshotEstablished("j", 7, "remote", 2.8), at + 2_800);

        List<ForecastErrors.Row> refit = ForecastErrors.refit(j, 0.25);
        assertEquals(1, refit.size(), "only generation 7 was forecast at a quarter: " + refit);
        assertEquals(7, refit.get(0).generation());
        assertEquals(2.0 + 0.8, refit.get(0).predicted(), 1e-6);
        assertEquals(0, refit.get(0).error(), 1e-6);
        assertEquals(raw / 2, refit.get(0).expectedWritten());
        assertEquals(9.0, ForecastErrors.rows(j, 0.25).get(0).predicted(), 1e-9, "the log's own forecast");
        assertTrue(ForecastErrors.refit(j, 0.5).isEmpty(), "no snapshot passed half, none was forecast there");
    }

    /**
     * On one node, a snapshot slower than usual from its capture to a quarter read (the node busier than
     * usual) is forecast slower for the rest too: by the square root of how much slower, at most
     * {@link Predictor#PACE_LIMIT}'s. On two nodes it is not ({@link #onTwoNodesTheTimeToTheMarkSaysNothingOfTheRest}):
     * there the time to the mark is also how much the nodes captured first had read meanwhile.
     */
    @Test
    void onOneNodeTheRestFollowsThePaceToTheMark() {
        long raw = 400 * MIB;
        JobView j = jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "n"), 0);
        for (int g = 0; g < 7; g++) { // a quarter read 1 s after the capture, the rest 0.8 s: every time
            staged(j, g, g * 20_000L, raw, 1.5, "n", 0.8);
        }
        assertEquals(0.8, restAtQuarter(j, 7, 200_000, raw, "n", 1.5), 1e-6, "as usual");
        assertEquals(0.8 * Math.sqrt(2), restAtQuarter(j, 8, 220_000, raw, "n", 2.5), 1e-6, "twice as slow");
        assertEquals(0.8 / Math.sqrt(2), restAtQuarter(j, 9, 240_000, raw, "n", 1.0), 1e-6, "twice as fast");
        assertEquals(0.8 * Math.sqrt(Predictor.PACE_LIMIT), restAtQuarter(j, 10, 260_000, raw, "n", 8.5), 1e-6,
                "eight times as slow: at most the limit");
    }

    /**
     * The time from a capture to a mark is taken between the times both were logged: live, the coordinator reads
     * a capture 10 to 20 ms after it is logged, by as much more or less each time, a tenth of what it measures
     * on a short snapshot. The capture as read still counts for its liveness and the forecast at capture.
     */
    @Test
    void theTimeFromACaptureToAMarkIsTakenBetweenLoggedTimes() {
        long raw = 400 * MIB;
        JobView j = jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "n"), 0);
        jobs.apply(new Event.CheckpointRequested("j", 0, "request"), 1_000);
        jobs.apply(new Event.ImageCaptured("j", 0, 0, "n", raw / 2, 0.1), 1_480);
        jobs.apply(new Event.ImageCaptured("j", 0, 1, "n", raw / 2, 0.1), 1_520, 1_500, null); // read 20 ms late
        GenerationView g = j.generations().stream().filter(x -> x.generation() == 0).findFirst().orElseThrow();
        jobs.apply(reports(0, raw).get(0), 1_550);
        jobs.apply(reports(0, raw).get(1), 1_700);
        assertEquals(0.52, g.secondsToCaptured(), 1e-9, "as read");
        assertEquals(0.2, g.secondsFromCaptureToMark(0.25), 1e-9, "as logged");
        assertTrue(Double.isNaN(g.secondsFromCaptureToMark(0.5)), "not passed");
    }

    @Test
    void onTwoNodesTheTimeToTheMarkSaysNothingOfTheRest() {
        long raw = 400 * MIB;
        JobView j = jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "n"), 0);
        for (int g = 0; g < 7; g++) {
            staged(j, g, g * 20_000L, raw, 1.5, "m", 0.8);
        }
        assertEquals(0.8, restAtQuarter(j, 7, 200_000, raw, "m", 2.5), 1e-6);
    }

    /** The rest {@link Predictor#restAfterMark} forecasts for generation {@code g} of job j at a quarter read. */
    private double restAtQuarter(JobView j, long g, long at, long raw, String other, double toQuarter) {
        GenerationView v = captured(j, g, at, raw, other);
        jobs.apply(reports(g, raw).get(0), at + 600);
        jobs.apply(reports(g, raw).get(1), at + Math.round(toQuarter * 1000));
        return Predictor.restAfterMark(j, v, 0.25, raw / 2, at + Math.round(toQuarter * 1000));
    }

    /**
     * A job on two nodes (rank 1 on {@code m}) whose generations 0 to 6 each read a quarter of their
     * {@code raw} bytes after a different time (1 to 3 s), each established 0.8 s after that. On several
     * nodes the time to a mark says nothing of the pace of the rest ({@link Predictor#restAfterMark}).
     */
    private JobView sevenStaged(long raw) {
        JobView j = jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "n"), 0);
        double[] toQuarter = {1.0, 3.0, 1.5, 2.5, 1.2, 2.8, 1.9};
        for (int g = 0; g < toQuarter.length; g++) {
            staged(j, g, g * 20_000L, raw, toQuarter[g], "m", 0.8);
        }
        return j;
    }

    /** Generation 7 of {@link #sevenStaged}, requested at {@code at} and its two ranks captured 0.5 s later. */
    private GenerationView capturedSeventh(JobView j, long at, long raw) {
        return captured(j, 7, at, raw, "m");
    }

    /** Generation {@code g} requested at {@code at}, rank 0 captured on {@code n} and rank 1 on {@code other} 0.5 s later. */
    private GenerationView captured(JobView j, long g, long at, long raw, String other) {
        jobs.apply(new Event.CheckpointRequested("j", g, "request"), at);
        jobs.apply(new Event.ImageCaptured("j", g, 0, "n", raw / 2, 0.1), at + 500);
        jobs.apply(new Event.ImageCaptured("j", g, 1, other, raw / 2, 0.1), at + 500);
        return j.generations().stream().filter(x -> x.generation() == g).findFirst().orElseThrow();
    }

    /** A node's reports of generation {@code g}: as its reading begins, then at a quarter read, half of it new. */
    private static List<Event.StagingProgress> reports(long g, long raw) {
        return List.of(new Event.StagingProgress("j", g, "n", 0, raw, 0, 0),
                new Event.StagingProgress("j", g, "n", raw / 4, raw, raw / 8, raw / 8));
    }

    /**
     * A snapshot captured 0.5 s after its request (rank 1 on {@code other}), whose nodes read a quarter of its
     * bytes {@code toQuarter} s after its request, established {@code rest} s after that.
     */
    private void staged(JobView j, long g, long at, long raw, double toQuarter, String other, double rest) {
        captured(j, g, at, raw, other);
        List<Event.StagingProgress> reports = reports(g, raw);
        jobs.apply(reports.get(0), at + 600);
        long quarter = at + Math.round(toQuarter * 1000);
        jobs.apply(reports.get(1), quarter);
        long staged = quarter + Math.round(rest * 1000) - 300;
        jobs.apply(new Event.ImageStaged("j", g, 0, "remote", raw / 2, raw / 4, 1), staged);
        jobs.apply(new Event.ImageStaged("j", g, 1, "remote", raw / 2, raw / 4, 1), staged);
        jobs.apply(new Event.SnapshotEstablished("j", g, "remote", toQuarter + rest), quarter + Math.round(rest * 1000));
    }

    /** The agents' sample at capture said the snapshot writes all of it: the forecast at capture says so too. */
    @Test
    void theForecastAtCaptureTakesTheAgentsSampleOverTheLastSnapshotsShare() {
        JobView j = jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "n"), 0);
        long raw = 1L << 30;
        long[] written = {raw, raw / 2, raw / 4, 0, 0};
        for (int g = 0; g < written.length; g++) {
            snapshot(j, g, raw, written[g], 1.5 + written[g] / 100e6);
        }
        jobs.apply(new Event.CheckpointRequested("j", 5, "request"), 100_000);
        jobs.apply(new Event.ImageCaptured("j", 5, 0, "n", raw / 2, 0.1, raw / 2), 100_000);
        GenerationView g = j.generations().stream().filter(x -> x.generation() == 5).findFirst().orElseThrow();
        assertEquals(raw / 2, g.expectedWrittenBytes(), "what the captured ranks said");
        jobs.apply(new Event.ImageCaptured("j", 5, 1, "n", raw / 2, 0.1, raw / 2 - 1000), 100_000);
        jobs.apply(new Event.ImageCaptured("j", 5, 1, "n", raw / 2, 0.1, raw / 2 - 1000), 100_000); // a repeat
        assertEquals(raw - 1000, g.expectedWrittenBytes());
        Event.PredictionMade p = Predictor.atCapture(j, g, Long.MAX_VALUE).orElseThrow();
        assertEquals(raw - 1000, p.writtenBytes());
        assertEquals(1.5 + (raw - 1000) / 100e6, p.predictedSecondsToEstablished(), 1e-6);
        assertEquals(0, Predictor.predict(j, 5, raw, 2).orElseThrow().writtenBytes(),
                "without the sample: the last share");
    }

    /** The seconds from the last image staged to the snapshot established, in {@link #snapshot}'s history. */
    private static final double COMMIT = 0.3;

    private void snapshot(JobView j, long g, long raw, long written, double seconds) {
        long at = g * 20_000;
        jobs.apply(new Event.CheckpointRequested("j", g, "request"), at);
        jobs.apply(new Event.ImageCaptured("j", g, 0, "n", raw / 2, 0.1), at);
        jobs.apply(new Event.ImageCaptured("j", g, 1, "n", raw - raw / 2, 0.1), at);
        long staged = at + Math.round((seconds - Math.min(seconds, COMMIT)) * 1000);
        jobs.apply(new Event.ImageStaged("j", g, 0, "remote", raw / 2, written / 2, 1), staged);
        jobs.apply(new Event.ImageStaged("j", g, 1, "remote", raw - raw / 2, written - written / 2, 1), staged);
        jobs.apply(new Event.SnapshotEstablished("j", g, "remote", seconds), at + Math.round(seconds * 1000));
    }
}

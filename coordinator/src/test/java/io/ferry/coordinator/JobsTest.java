package io.ferry.coordinator;

import io.ferry.model.Event;
import io.ferry.model.LaunchSpec;
import io.ferry.model.RankSet;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JobsTest {
    private final Jobs jobs = new Jobs();

    private JobView apply(Event... events) {
        JobView j = null;
        for (Event e : events) {
            j = jobs.apply(e, 1000);
        }
        return j;
    }

    @Test
    void anEventNamingARankBeyondItsJobsRanksIsRefusedNotFolded() {
        apply(new Event.JobStarted("j", 2, 1000, true, "file:/s", "n"),
                new Event.CheckpointRequested("j", 0, "interval"));
        assertTrue(jobs.refuses(new Event.ImageCaptured("j", 0, 2, "n", 10, 0.1)).orElseThrow().contains("rank 2"));
        assertTrue(jobs.refuses(new Event.ImageStaged("j", 0, 5, "remote", 1, 1, 0.1)).isPresent());
        assertTrue(jobs.refuses(new Event.RankExited("j", 2, 0)).isPresent());
        // A launcher's ranks joining: one beyond the job's ranks made the fold throw (the job set aside), not parked.
        assertTrue(jobs.refuses(new Event.RanksJoined("j", -1, "n1", "0-2")).orElseThrow().contains("rank 2"));
        assertTrue(jobs.refuses(new Event.RanksJoined("j", -1, "n1", "0-1")).isEmpty());
        assertTrue(jobs.refuses(new Event.ImageCaptured("j", 0, 1, "n", 10, 0.1)).isEmpty());
        assertTrue(jobs.refuses(new Event.ImageCaptured("unknown", 0, 7, "n", 10, 0.1)).isEmpty(),
                "its job decides, once known");
    }

    /**
     * A run whose start waited for its DMTCP lead and ended before it was heard: the next run of the job
     * starts without that wait behind it, else the coordinator's next tick would start it a second time.
     */
    @Test
    void aNewRunForgetsTheLastRunsDeferredStart() {
        JobView j = jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "n"), 1000);
        j.startDeferredSinceMillis = 1000;
        j.startDeferredResumes = true;
        jobs.apply(new Event.JobFinished("j", false, "halted"), 2000);
        jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "n"), 3000);
        assertEquals(-1, j.startDeferredSinceMillis);
    }

    /**
     * What a coordinator that takes a job over reads of its current run's start: decided once the log
     * holds where the start launches the ranks (or a rollback, or a checkpoint, as logs from before that
     * placement show), undecided again for a new run; and whether that run resumes one that failed.
     */
    @Test
    void aRunIsLaunchedOnceItsStartsPlacementIsLoggedAndANewRunAfterAFailureResumes() {
        JobView j = jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "n"), 1000);
        assertFalse(j.launched, "started, not launched");
        assertFalse(j.startResumes, "the first run");
        jobs.apply(new Event.JobPlaced("j", j.placement.toString(), Event.JobPlaced.START), 1001);
        assertTrue(j.launched);
        jobs.apply(new Event.JobFinished("j", false, "a rank failed"), 2000);
        jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "n"), 3000);
        assertFalse(j.launched, "a new run is launched anew");
        assertTrue(j.startResumes, "after a failed run");
        jobs.apply(new Event.CheckpointRequested("j", 0, "interval"), 4000);
        assertTrue(j.launched, "a checkpoint of the run says it runs");
        jobs.apply(new Event.JobFinished("j", true, "done"), 5000);
        jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "n"), 6000);
        assertFalse(j.startResumes, "after a run that succeeded");
        jobs.apply(new Event.RecoveryStarted("j", -1, "resumed"), 7000);
        assertTrue(j.launched);
    }

    /**
     * The nodes that answered the current run's start (ranks launched, or a launch failed), as a coordinator that
     * takes the job over reads them ({@link Overdue#unansweredStart}): from the start's placement until a rollback or
     * another placement launches every node again, or a new run starts.
     */
    @Test
    void theNodesThatAnsweredAStartAreFoldedUntilARollbackOrANewRun() {
        JobView j = jobs.apply(new Event.JobStarted("s", 3, 0, true, "file:/s", "n", "block:a,b,c",
                LaunchSpec.of(List.of("./sim"))), 1000);
        assertEquals(0, j.startPlacedAtMillis, "started, not placed");
        jobs.apply(new Event.JobPlaced("s", "block:a,b,c", Event.JobPlaced.START), 1001);
        assertEquals(1001, j.startPlacedAtMillis);
        jobs.apply(new Event.ImagesRestored("s", -1, "a", Map.of()), 1002);
        jobs.apply(new Event.RestoreFailed("s", -1, "b", "no such program"), 1003);
        jobs.apply(new Event.ImagesRestored("s", 4, "c", Map.of()), 1004); // a restore, not the start
        assertEquals(Set.of("a", "b"), j.startAnswered);
        jobs.apply(new Event.JobPlaced("s", "block:a,b,c", Event.JobPlaced.START), 1005); // delivered twice
        assertEquals(1001, j.startPlacedAtMillis);
        assertEquals(Set.of("a", "b"), j.startAnswered, "the same start again: its answers stand");
        j.judgedSinceMillis = 1500; // the log came back after an outage: this coordinator placed the start itself
        assertFalse(j.startAwaitsAnswers(), "a start this coordinator placed: its launches went out");
        j.replayedAtMillis = 1500; // ... or it replayed the start: placed by an earlier one, and c never answered
        assertTrue(j.startAwaitsAnswers());
        jobs.apply(new Event.Heartbeat("s", "c"), 1600);
        assertFalse(j.startAwaitsAnswers(), "c beats: it runs the job");
        jobs.apply(new Event.RecoveryStarted("s", -1, "rank 0 exited with 1"), 2000);
        assertEquals(0, j.startPlacedAtMillis, "a rollback launches every node again, with a deadline of its own");
        assertTrue(j.startAnswered.isEmpty());
        jobs.apply(new Event.JobPlaced("s", "block:a,b,c", Event.JobPlaced.START), 3000);
        jobs.apply(new Event.JobPlaced("s", "block:a,b", "node c lost"), 3001);
        assertEquals(0, j.startPlacedAtMillis, "a placement after a node loss is not a start");
    }

    @Test
    void snapshotMovesOpenCapturedEstablished() {
        JobView j = apply(new Event.JobStarted("j", 2, 1000, true, "file:/s", "n"),
                new Event.CheckpointRequested("j", 0, "interval"),
                new Event.ImageCaptured("j", 0, 0, "n", 10, 0.1));
        assertEquals(GenerationView.State.OPEN, j.latest().orElseThrow().state());
        assertTrue(j.capturing());
        apply(new Event.ImageCaptured("j", 0, 1, "n", 20, 0.3));
        assertEquals(GenerationView.State.CAPTURED, j.latest().orElseThrow().state());
        assertEquals(30, j.latest().orElseThrow().rawBytes());
        assertEquals(0.3, j.latest().orElseThrow().maxStallSeconds());
        assertFalse(j.capturing());
        apply(new Event.SnapshotEstablished("j", 0, "remote", 1.2));
        assertEquals(0, j.newestEstablished().orElseThrow().generation());
        assertEquals(1, j.nextGeneration());
    }

    @Test
    void failedGenerationNeverBecomesTheRestartPoint() {
        JobView j = apply(new Event.JobStarted("j", 1, 0, true, "s", "n"),
                new Event.CheckpointRequested("j", 0, "request"),
                new Event.ImageCaptured("j", 0, 0, "n", 1, 0),
                new Event.SnapshotEstablished("j", 0, "remote", 1),
                new Event.CheckpointRequested("j", 1, "request"),
                new Event.CaptureFailed("j", 1, "rank 0 did not answer"));
        assertEquals(GenerationView.State.FAILED, j.latest().orElseThrow().state());
        assertEquals(0, j.newestEstablished().orElseThrow().generation());
        assertEquals("rank 0 did not answer", j.latest().orElseThrow().problem());
    }

    @Test
    void rollbackAbandonsOpenGenerationsAndCountsRecoveries() {
        JobView j = apply(new Event.JobStarted("j", 1, 0, true, "s", "n"),
                new Event.CheckpointRequested("j", 0, "request"),
                new Event.ImageCaptured("j", 0, 0, "n", 1, 0),
                new Event.SnapshotEstablished("j", 0, "remote", 1),
                new Event.CheckpointRequested("j", 1, "request"),
                new Event.RankExited("j", 0, 137),
                new Event.RecoveryStarted("j", 0, "rank 0 exited with 137"));
        assertEquals(1, j.recoveries());
        assertTrue(j.rollingBack());
        assertEquals(137, j.exits.get(0), "the dead rank's exit stays until its node restored it");
        apply(new Event.ImagesRestored("j", 0, "n", Map.of(0, "local")));
        assertFalse(j.rollingBack(), "every node of the placement restored");
        assertTrue(j.exits.isEmpty());
        assertEquals(GenerationView.State.FAILED, j.latest().orElseThrow().state());
        assertEquals(2, j.nextGeneration(), "generations stay strictly increasing");
    }

    @Test
    void rollbacksInARowAreCountedUntilANewerSnapshotIsEstablishedOrTheJobIsRunAgain() {
        JobView j = apply(new Event.JobStarted("j", 1, 0, true, "s", "n"),
                new Event.RecoveryStarted("j", -1, "rank 0 exited with 7"),
                new Event.RecoveryStarted("j", -1, "rank 0 exited with 7"));
        assertEquals(2, j.rollbacksWithoutProgress);
        apply(new Event.CheckpointRequested("j", 0, "request"),
                new Event.ImageCaptured("j", 0, 0, "n", 1, 0),
                new Event.SnapshotEstablished("j", 0, "remote", 1),
                new Event.RecoveryStarted("j", 0, "rank 0 exited with 7"));
        assertEquals(1, j.rollbacksWithoutProgress, "generation 0 is progress: the count starts again");
        apply(new Event.RecoveryStarted("j", 0, "rank 0 exited with 7"));
        assertEquals(2, j.rollbacksWithoutProgress, "rolling back to the same generation is not");
        apply(new Event.JobStarted("j", 1, 0, true, "s", "n"));
        assertEquals(0, j.rollbacksWithoutProgress, "a new ferry run gets the whole budget");
        assertEquals(0, RecoveryPolicy.backoffMillis(Map.of(), 0), "the first rollback after progress never waits");
        assertEquals(2_000, RecoveryPolicy.backoffMillis(Map.of(), 1));
        assertEquals(8_000, RecoveryPolicy.backoffMillis(Map.of(), 3));
        assertEquals(300_000, RecoveryPolicy.backoffMillis(Map.of(), 40), "capped at recovery.max-backoff");
        assertEquals(1_000, RecoveryPolicy.backoffMillis(Map.of("recovery.backoff", "250ms"), 3));
    }

    @Test
    void aRestoreFailedByAnUnreachableStoreLeavesTheGenerationUsable() {
        JobView j = apply(new Event.JobStarted("j", 1, 0, true, "s", "n"),
                new Event.CheckpointRequested("j", 0, "request"),
                new Event.ImageCaptured("j", 0, 0, "n", 1, 0),
                new Event.SnapshotEstablished("j", 0, "remote", 1),
                new Event.RecoveryStarted("j", 0, "rank 0 exited with 9"),
                new Event.RestoreFailed("j", 0, "n", "store considered down", true, false));
        assertEquals(0, j.newestUsable(Long.MAX_VALUE).orElseThrow().generation(), "tried again later, not set aside");
        apply(new Event.RestoreFailed("j", 0, "n", "manifest does not verify"));
        assertTrue(j.newestUsable(Long.MAX_VALUE).isEmpty(), "bad data: not chosen again by this run");
        apply(new Event.JobStarted("j", 1, 0, true, "s", "n"));
        assertEquals(0, j.newestUsable(Long.MAX_VALUE).orElseThrow().generation(),
                "a new run looks again at what the last one set aside (a node, a program or a store"
                        + " may have been the cause)");
    }

    @Test
    void aRestoreFailedThatProvesNothingAgainstTheDataLeavesTheGenerationUsable() {
        JobView j = apply(new Event.JobStarted("j", 1, 0, true, "s", "n"),
                new Event.CheckpointRequested("j", 0, "request"),
                new Event.ImageCaptured("j", 0, 0, "n", 1, 0),
                new Event.SnapshotEstablished("j", 0, "remote", 1),
                new Event.RecoveryStarted("j", 0, "rank 0 exited with 9"),
                new Event.RestoreFailed("j", 0, "n", "Cannot run program \"./sim\": error=2", false, false, true));
        assertEquals(0, j.newestUsable(Long.MAX_VALUE).orElseThrow().generation(), "a program missing on a node");
        assertEquals("", j.generations.get(0L).restoreFailure);
        apply(new Event.RestoreFailed("j", 0, "n", "dmtcp_restart refused the image", false, true));
        assertTrue(j.newestUsable(Long.MAX_VALUE).isEmpty(), "a restart the checkpointer refused: set aside");
    }

    @Test
    void aRunOfAnotherRankCountPassesOverSnapshotsOfTheOldCountWithoutSettingThemAside() {
        JobView j = apply(new Event.JobStarted("j", 2, 0, true, "s", "n"),
                new Event.CheckpointRequested("j", 0, "request"),
                new Event.ImageCaptured("j", 0, 0, "n", 1, 0),
                new Event.ImageCaptured("j", 0, 1, "n", 1, 0),
                new Event.SnapshotEstablished("j", 0, "remote", 1));
        assertEquals(0, j.newestUsable(Long.MAX_VALUE).orElseThrow().generation());
        apply(new Event.JobStarted("j", 4, 0, true, "s", "n"));
        assertTrue(j.newestUsable(Long.MAX_VALUE).isEmpty(),
                "4 ranks cannot restore a snapshot of 2: start from the beginning");
        apply(new Event.JobStarted("j", 2, 0, true, "s", "n"));
        assertEquals(0, j.newestUsable(Long.MAX_VALUE).orElseThrow().generation(), "resubmitted with 2 again: usable");
    }

    @Test
    void heartbeatsMoveTheLastSeenTime() {
        JobView j = jobs.apply(new Event.JobStarted("j", 1, 0, true, "s", "n"), 1000);
        assertEquals(1000, j.lastHeartbeatMillis("n"));
        jobs.apply(new Event.Heartbeat("j", "n"), 6000);
        jobs.apply(new Event.Heartbeat("j", "n"), 5000); // out of order: the newest wins
        assertEquals(6000, j.lastHeartbeatMillis("n"));
        jobs.apply(new Event.Heartbeat("j", "elsewhere"), 7000);
        assertFalse(j.heartbeats.containsKey("elsewhere"), "a node outside the placement is not tracked");
    }

    @Test
    void aMultiNodeRollbackEndsWhenEveryNodeRestoredAndAFailedGenerationIsNotChosenAgain() {
        JobView j = apply(new Event.JobStarted("j", 4, 0, true, "s", "login", "block:a,b", LaunchSpec.of(
                        List.of("x"))),
                new Event.CheckpointRequested("j", 0, "request"),
                new Event.SnapshotEstablished("j", 0, "remote", 1),
                new Event.CheckpointRequested("j", 1, "request"),
                new Event.SnapshotEstablished("j", 1, "remote", 1),
                new Event.RankExited("j", 3, 9),
                new Event.RecoveryStarted("j", 1, "rank 3 exited with 9"),
                new Event.ImagesRestored("j", 1, "a", Map.of(0, "local", 1, "local")));
        assertTrue(j.rollingBack(), "node b has not restored yet");
        assertEquals(9, j.exits.get(3));
        apply(new Event.RestoreFailed("j", 1, "b", "rank 3: no tier holds a verified copy"));
        assertEquals(0, j.newestUsable(Long.MAX_VALUE).orElseThrow().generation());
        assertTrue(j.generations.get(1L).problem().contains("no tier holds"));
        apply(new Event.RecoveryStarted("j", 0, "generation 1 unusable"),
                new Event.ImagesRestored("j", 0, "a", Map.of()), new Event.ImagesRestored("j", 0, "b", Map.of()));
        assertFalse(j.rollingBack());
        assertEquals(2, j.recoveries());
        apply(new Event.JobPlaced("j", "map:0-3:a", "node b lost"));
        assertEquals("0-3", j.placement().orElseThrow().ranksOn("a").toString());
        assertEquals(Set.of("a"), j.heartbeats.keySet());
    }

    @Test
    void aRankThatFinishedStopsCheckpointsUntilItsNextLife() {
        JobView j = apply(new Event.JobStarted("j", 2, 1000, true, "s", "login", "block:a,b",
                LaunchSpec.of(
                List.of("x"))));
        assertFalse(j.aRankFinished());
        apply(new Event.RankExited("j", 1, 0));
        assertTrue(j.aRankFinished(), "rank 1 cannot be asked for an image any more");
        apply(new Event.ImagesRestored("j", 0, "b", Map.of(1, "local")));
        assertFalse(j.aRankFinished(), "a rollback restarted rank 1");
        apply(new Event.RankExited("j", 0, 137));
        assertFalse(j.aRankFinished(), "a failed rank rolls the job back; it did not finish");
    }

    @Test
    void aLaunchersRanksJoinTheirNodesAndRunOnceEveryOneIsAdopted() {
        JobView j = apply(new Event.JobStarted("j", 4, 1000, true, "s", "login", "launcher:",
                        LaunchSpec.of(List.of("x"))),
                new Event.LauncherRequested("j", 1, -1, "start"),
                new Event.RanksJoined("j", -1, "h1", "2-3"),
                new Event.RanksJoined("j", 7, "h0", "0-1")); // a stale rank of another attempt: not placed
        assertEquals(List.of("h1"), j.placement().orElseThrow().nodes());
        assertFalse(j.placement().orElseThrow().complete());
        apply(new Event.RanksJoined("j", -1, "h0", "0-1"),
                new Event.ImagesRestored("j", -1, "h1", Map.of(2, "none", 3, "none")));
        assertTrue(j.placement().orElseThrow().complete());
        assertFalse(j.allRanksRunning(), "h0's ranks are not adopted yet");
        apply(new Event.ImagesRestored("j", -1, "h0", Map.of(0, "none", 1, "none")));
        assertTrue(j.allRanksRunning());
        assertEquals(1, j.launchAttempt());
        // A rollback: the next attempt learns its nodes anew.
        apply(new Event.RecoveryStarted("j", -1, "the launcher exited with 137"),
                new Event.LauncherRequested("j", 2, -1, "x"));
        assertFalse(j.allRanksRunning());
        assertEquals(List.of(), j.placement().orElseThrow().nodes());
        assertTrue(j.rollingBack());
        apply(new Event.RanksJoined("j", -1, "h2", "0-3"),
                new Event.ImagesRestored("j", -1, "h2", Map.of(0, "none", 1, "none", 2, "none", 3, "none")));
        assertFalse(j.rollingBack());
        assertEquals("0-3", j.placement().orElseThrow().ranksOn("h2").toString());
    }

    @Test
    void stragglersAreTheNodesWhoseRanksTheInFlightGenerationStillWaitsFor() {
        JobView j = apply(new Event.JobStarted("j", 6, 0, true, "s", "login", "block:a,b,c",
                        LaunchSpec.of(List.of("x"))),
                new Event.CheckpointRequested("j", 0, "interval"),
                new Event.ImageCaptured("j", 0, 0, "a", 1, 0.1), new Event.ImageCaptured("j", 0, 1, "a", 1, 0.1),
                new Event.ImageCaptured("j", 0, 3, "b", 1, 0.1));
        assertEquals(List.of(new JobView.Straggler("c", RankSet.parse("4-5"), "capture"),
                new JobView.Straggler("b", RankSet.parse("2"), "capture")), j.stragglers());
        assertEquals("generation 0 waits for c (ranks 4-5 to capture) and 1 more nodes",
                j.stragglersLine(1).orElseThrow());
        apply(new Event.ImageCaptured("j", 0, 2, "b", 1, 0.1), new Event.ImageCaptured("j", 0, 4, "c", 1, 0.1),
                new Event.ImageCaptured("j", 0, 5, "c", 1, 0.1), new Event.ImageStaged("j", 0, 0, "remote", 1, 1, 0.1));
        assertEquals("a", j.stragglers().get(j.stragglers().size() - 1).node());
        assertEquals("staging", j.stragglers().get(0).phase());
        for (int r = 1; r < 6; r++) {
            apply(new Event.ImageStaged("j", 0, r, "remote", 1, 1, 0.1));
        }
        apply(new Event.SnapshotEstablished("j", 0, "remote", 1));
        assertTrue(j.stragglers().isEmpty());
        assertTrue(j.stragglersLine(5).isEmpty());
    }

    @Test
    void stagingProblemShowsUntilStaged() {
        JobView j = apply(new Event.JobStarted("j", 1, 0, true, "s", "n"),
                new Event.CheckpointRequested("j", 0, "request"),
                new Event.StagingFailed("j", 0, 0, "store down"));
        assertTrue(j.latest().orElseThrow().problem().contains("store down"));
        apply(new Event.ImageStaged("j", 0, 0, "remote", 1, 1, 0.1));
        assertEquals("", j.latest().orElseThrow().problem());
    }

    @Test
    void anEstablishedGenerationKeepsPerNodeTotalsOnceItsPerRankDetailIsDropped() {
        JobView j = apply(new Event.JobStarted("j", 4, 0, true, "s", "login", "block:a,b",
                        LaunchSpec.of(List.of("true"))),
                new Event.CheckpointRequested("j", 0, "request"),
                new Event.ImageCaptured("j", 0, 0, "a", 10, 0.1),
                new Event.ImageCaptured("j", 0, 1, "a", 20, 0.2),
                new Event.ImageCaptured("j", 0, 2, "b", 40, 0.2),
                new Event.ImageStaged("j", 0, 1, "remote", 20, 5, 1.5), // staged before rank 3 is captured
                new Event.ImageCaptured("j", 0, 3, "b", 80, 0.8),
                new Event.ImageStaged("j", 0, 0, "remote", 10, 5, 0.5),
                new Event.ImageStaged("j", 0, 2, "remote", 40, 5, 2.0),
                new Event.ImageStaged("j", 0, 3, "remote", 80, 5, 3.0));
        GenerationView g = j.latest().orElseThrow();
        double[] inFlight = {30, 120, 2.0, 5.0};
        assertEquals(Set.of("a", "b"), g.nodes());
        assertEquals(inFlight[0], g.bytesOn("a"));
        assertEquals(inFlight[1], g.bytesOn("b"));
        assertEquals(inFlight[2], g.stagingSecondsOn("a"));
        assertEquals(inFlight[3], g.stagingSecondsOn("b"));
        assertEquals(4, g.stalls().length);
        double spread = g.stragglerSpread();
        assertEquals(0.8 / 0.2, spread, 1e-12);
        apply(new Event.SnapshotEstablished("j", 0, "remote", 4.0));
        assertEquals(Set.of("a", "b"), g.nodes());
        assertEquals(30, g.bytesOn("a"));
        assertEquals(120, g.bytesOn("b"));
        assertEquals(0, g.bytesOn("c"));
        assertEquals(2.0, g.stagingSecondsOn("a"), 1e-12);
        assertEquals(5.0, g.stagingSecondsOn("b"), 1e-12);
        assertEquals(spread, g.stragglerSpread());
        assertEquals(4, g.capturedRanks());
        assertEquals(4, g.stagedRanks());
        assertEquals(150, g.rawBytes());
        assertEquals(20, g.storedBytes());
        assertEquals(0, g.stalls().length, "per-rank stalls are dropped once established");
        apply(new Event.ImageStaged("j", 0, 3, "remote", 80, 5, 3.0)); // a late repeat changes no count
        assertEquals(4, g.stagedRanks());
    }

    @Test
    void partnerCopiesAreCountedAndARestartIsToldWhichLiveNodesMayHoldEachRank() {
        LaunchSpec spec = new LaunchSpec(List.of("x"), "app", 60_000, "USR2",
                Map.of("cache.partner", "true"));
        JobView j = apply(new Event.JobStarted("j", 6, 0, true, "s", "login", "block:a,b,c", spec),
                new Event.PeerAddress("j", "a", "10.0.0.1:7001"), new Event.PeerAddress("j", "b", "10.0.0.2:7002"),
                new Event.PeerAddress("j", "c", "10.0.0.3:7003"),
                new Event.CheckpointRequested("j", 0, "interval"),
                new Event.PartnerCopied("j", 0, "a", "b", "0-1", 100, 0.1),
                new Event.PartnerCopied("j", 0, "b", "c", "2-3", 50, 0.1),
                new Event.SnapshotEstablished("j", 0, "remote", 1));
        GenerationView g = j.generations.get(0L);
        assertEquals(4, g.partnerRanks());
        assertEquals(150, g.partnerBytes());

        Map<String, String> partners = PeerHints.partners(j, j.placement);
        assertEquals(Map.of("a", "b", "b", "c", "c", "a"), partners);
        assertEquals("b=10.0.0.2:7002", PeerHints.captureTarget(j, partners, "a"));

        // a is lost; its ranks 0-1 land on c: ask a (where they ran) first, then b (a's partner).
        RankSet moved = RankSet.parse("0-1");
        assertEquals(Map.of(0, "a=10.0.0.1:7001,b=10.0.0.2:7002", 1, "a=10.0.0.1:7001,b=10.0.0.2:7002"),
                PeerHints.forRestart(j, 0, moved, "c", 1000));
        // On b itself, b's own cache holds the copy: only a is worth asking.
        assertEquals("a=10.0.0.1:7001", PeerHints.forRestart(j, 0, moved, "b", 1000).get(0));
        // Once the job's ranks were moved off a (it was lost), a's partner b is asked first: a's host may be down,
        // and a connection to it would wait out the timeout before b was asked.
        apply(new Event.JobPlaced("j", "map:0-1:c,2-3:b,4-5:c", "node a lost; its ranks 0-1 move to c"));
        assertEquals(Map.of(0, "b=10.0.0.2:7002,a=10.0.0.1:7001", 1, "b=10.0.0.2:7002,a=10.0.0.1:7001"),
                PeerHints.forRestart(j, 0, moved, "c", 1000));
        // An agent silent for longer than FRESH_MILLIS is not asked at all.
        apply(new Event.Heartbeat("j", "b"));
        assertEquals(Map.of(), PeerHints.forRestart(j, 0, moved, "c", 1000 + PeerHints.FRESH_MILLIS + 1));

        // Without --partner there is no partner: only where the rank ran.
        JobView plain = apply(new Event.JobStarted("k", 2, 0, true, "s", "login", "block:a,b",
                LaunchSpec.of(List.of("x"))), new Event.PeerAddress("k", "a", "10.0.0.1:7001"),
                new Event.CheckpointRequested("k", 0, "interval"));
        assertEquals(Map.of(), PeerHints.partners(plain, plain.placement));
        assertEquals("", PeerHints.captureTarget(plain, Map.of(), "a"));
        assertEquals(Map.of(0, "a=10.0.0.1:7001"),
                PeerHints.forRestart(plain, 0, RankSet.parse("0"), "b", 1000));
    }
}

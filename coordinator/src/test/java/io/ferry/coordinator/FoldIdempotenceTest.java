package io.ferry.coordinator;

import io.ferry.model.Event;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * The fold of issue 13's findings: an event delivered twice (a producer's retry, a replay after
 * a takeover) or late changes nothing it should not, and a snapshot of an abandoned timeline or
 * of an earlier, wider run of the job is never taken for the job's newest.
 */
class FoldIdempotenceTest {
    private final Jobs jobs = new Jobs();

    private JobView apply(Event... events) {
        JobView j = null;
        for (Event e : events) {
            j = jobs.apply(e, 1000);
        }
        return j;
    }

    private JobView established(int ranks, long generation) {
        JobView j = apply(new Event.JobStarted("j", ranks, 1000, true, "file:/s", "n"));
        for (long g = 0; g <= generation; g++) {
            apply(new Event.CheckpointRequested("j", g, "interval"));
            for (int r = 0; r < ranks; r++) {
                apply(new Event.ImageCaptured("j", g, r, "n", 100, 0.1));
                apply(new Event.ImageStaged("j", g, r, "remote", 100, 40, 0.2));
            }
            apply(new Event.SnapshotEstablished("j", g, "remote", 1.0));
        }
        return j;
    }

    @Test
    void aRepeatedCaptureOrStagingAddsNoBytes() {
        JobView j = apply(new Event.JobStarted("j", 2, 1000, true, "file:/s", "n"),
                new Event.CheckpointRequested("j", 0, "interval"),
                new Event.ImageCaptured("j", 0, 0, "n", 100, 0.1),
                new Event.ImageCaptured("j", 0, 0, "n", 100, 0.1),
                new Event.ImageStaged("j", 0, 0, "remote", 100, 40, 0.2),
                new Event.ImageStaged("j", 0, 0, "remote", 100, 40, 0.2));
        GenerationView g = j.latest().orElseThrow();
        assertEquals(100, g.rawBytes(), "rank 0 captured once, reported twice");
        assertEquals(40, g.storedBytes());
        assertEquals(GenerationView.State.OPEN, g.state(), "rank 1 is still missing");
        apply(new Event.ImageCaptured("j", 0, 1, "n", 50, 0.1), new Event.ImageStaged("j", 0, 1, "remote", 50, 10, 0.2),
                new Event.SnapshotEstablished("j", 0, "remote", 1.0),
                new Event.ImageCaptured("j", 0, 1, "n", 50, 0.1),
                new Event.ImageStaged("j", 0, 1, "remote", 50, 10, 0.2));
        assertEquals(150, g.rawBytes(), "late repeats after the establishment add nothing either");
        assertEquals(50, g.storedBytes());
    }

    @Test
    void aLateCaptureFailureLeavesAnEstablishedGenerationEstablished() {
        JobView j = established(2, 1);
        apply(new Event.CaptureFailed("j", 1, "rank 1 did not answer (late)"));
        assertEquals(1, j.newestEstablished().orElseThrow().generation());
        assertEquals(GenerationView.State.ESTABLISHED, j.latest().orElseThrow().state());
    }

    @Test
    void aGenerationOfTheTimelineARollbackAbandonedIsNeverEstablished() {
        JobView j = established(2, 1);
        apply(new Event.CheckpointRequested("j", 2, "interval"),
                new Event.ImageCaptured("j", 2, 0, "n", 100, 0.1), new Event.ImageCaptured("j", 2, 1, "n", 100, 0.1));
        apply(new Event.RecoveryStarted("j", 1, "rank 0 exited with 9"));
        // Generation 2 was captured before the failure; its staging ends after the rollback.
        apply(new Event.ImageStaged("j", 2, 0, "remote", 100, 40, 0.2),
                new Event.ImageStaged("j", 2, 1, "remote", 100, 40, 0.2),
                new Event.SnapshotEstablished("j", 2, "remote", 3.0));
        assertEquals(1, j.newestEstablished().orElseThrow().generation(),
                "the ranks run on from generation 1: generation 2 belongs to a timeline that no longer exists");
    }

    @Test
    void aRunAgainWithFewerRanksNeverTakesAnOlderWiderGenerationAsItsOwn() {
        JobView j = established(4, 0);
        apply(new Event.CheckpointRequested("j", 1, "interval"));
        for (int r = 0; r < 4; r++) {
            apply(new Event.ImageCaptured("j", 1, r, "n", 100, 0.1));
        }
        // The job is run again with 2 ranks before generation 1 (4 ranks) was established.
        apply(new Event.JobStarted("j", 2, 1000, true, "file:/s", "n"));
        apply(new Event.ImageStaged("j", 1, 0, "remote", 100, 40, 0.2),
                new Event.ImageStaged("j", 1, 1, "remote", 100, 40, 0.2));
        GenerationView g1 = j.generations().stream().filter(g -> g.generation() == 1).findFirst().orElseThrow();
        assertNotEquals(GenerationView.State.CAPTURED, g1.state(),
                "a 4-rank generation is not one the 2-rank run can commit");
        assertNotEquals(GenerationView.State.ESTABLISHED, g1.state());
    }
}

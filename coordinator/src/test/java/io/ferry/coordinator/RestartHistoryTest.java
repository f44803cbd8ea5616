package io.ferry.coordinator;

import io.ferry.model.Event;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RestartHistoryTest {
    private final Jobs jobs = new Jobs();

    @Test
    void aRollbackCountsEachRankOnceByItsSourceAndEachNodesSource() {
        JobView j = jobs.apply(new Event.JobStarted("j", 4, 0, true, "file:/s", "a"), 1_000);
        jobs.apply(new Event.RecoveryStarted("j", 3, "rank 2 exited with 9"), 10_000);
        jobs.apply(new Event.RestoreFailed("j", 3, "b", "disk gone", false, true), 10_500);
        jobs.apply(new Event.ImagesRestored("j", 3, "a", Map.of(0, "local", 1, "local")), 11_000);
        jobs.apply(new Event.ImagesRestored("j", 3, "a", Map.of(0, "local", 1, "local")), 11_100); // re-sent
        jobs.apply(new Event.ImagesRestored("j", 3, "b", Map.of(2, "partner", 3, "remote")), 12_500);
        RestartHistory.Restart r = j.restarts().get(0);
        assertEquals(Map.of("local", 2, "partner", 1, "remote", 1), r.ranksBySource());
        assertEquals(Map.of("a", "local", "b", "mixed"), r.sourceByNode());
        assertEquals(2.5, r.secondsToRestored(), 1e-9);
        assertTrue(r.failedNodes().isEmpty(), "b restored after all: " + r.failedNodes());
        assertEquals("rank 2 exited with 9", r.cause());
    }

    @Test
    void aLaunchThatCarriesOutARollbackIsOneRestartAndAResumingLaunchIsAnother() {
        JobView j = jobs.apply(new Event.JobStarted("j", 2, 0, true, "file:/s", "a"), 1_000);
        jobs.apply(new Event.RecoveryStarted("j", 1, "lost node"), 2_000);
        jobs.apply(new Event.LauncherRequested("j", 2, 1, "lost node"), 2_001);
        assertEquals(1, j.restarts().size());
        jobs.apply(new Event.ImagesRestored("j", 1, "a", Map.of(0, "remote", 1, "remote")), 3_000);
        jobs.apply(new Event.LauncherRequested("j", 3, 1, "resumed on a new allocation"), 9_000);
        assertEquals(2, j.restarts().size());
        assertEquals("resumed on a new allocation", j.restarts().get(1).cause());
    }

    @Test
    void onlyTheNewestRestartsAreKept() {
        JobView j = jobs.apply(new Event.JobStarted("j", 1, 0, true, "file:/s", "a"), 1_000);
        for (int i = 0; i < RestartHistory.KEPT + 5; i++) {
            jobs.apply(new Event.RecoveryStarted("j", i, "again"), 2_000 + i);
        }
        assertEquals(RestartHistory.KEPT, j.restarts().size());
        assertEquals(5, j.restarts().get(0).generation());
    }
}

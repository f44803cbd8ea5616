package io.ferry.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferry.model.Event;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StateJsonTest {
    @Test
    void aMonthOfCheckpointsFitsInOneSmallRecordThatStillNamesTheNewestEstablished() throws Exception {
        Jobs jobs = new Jobs();
        jobs.apply(new Event.JobStarted("j", 1, 600_000, true, "file:/s", "n"), 0);
        int generations = 5_000; // one every ten minutes for 35 days
        for (long g = 0; g < generations; g++) {
            jobs.apply(new Event.CheckpointRequested("j", g, "interval"), g);
            if (g >= generations - 40) { // the last forty fail: the newest established is out of the window
                jobs.apply(new Event.CaptureFailed("j", g, "rank 0 exited"), g);
                continue;
            }
            jobs.apply(new Event.ImageCaptured("j", g, 0, "n", 10, 0.1), g);
            jobs.apply(new Event.ImageStaged("j", g, 0, "remote", 10, 5, 0.1), g);
            jobs.apply(new Event.SnapshotEstablished("j", g, "remote", 1.0), g);
        }
        byte[] record = StateJson.of(jobs.get("j").orElseThrow());
        assertTrue(record.length < 4096, "bounded: " + record.length + " bytes");
        JsonNode n = new ObjectMapper().readTree(record);
        assertEquals(generations, n.get("generationCount").asInt());
        assertEquals(generations - 40, n.get("establishedCount").asInt());
        assertEquals(40, n.get("failedCount").asInt());
        assertEquals(generations - 41, n.get("newestEstablished").asLong());
        assertEquals(StateJson.WINDOW, n.get("generations").size());
        assertEquals(generations - 1, n.get("generations").get(StateJson.WINDOW - 1).get("generation").asLong());
        assertEquals("FAILED", n.get("generations").get(0).get("state").asText());
    }
}

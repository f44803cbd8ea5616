package io.ferry.coordinator;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Who may control a job ({@link JobOwners}) as the fold judges it; what the relay passes ({@link RequestRelay}). */
class JobOwnersTest {
    private static final Event.JobStarted A = new Event.JobStarted("a", 2, 1000, true, "file:///s", "n1");

    @Test
    void aJobIsItsSubmittersAndTheOperatorsAlone() {
        Jobs jobs = new Jobs();
        assertEquals(Optional.empty(), jobs.refuses(A, "alice"), "a new job: anyone may start it");
        jobs.apply(A, 1, "alice");
        assertEquals("alice", jobs.get("a").orElseThrow().owner);
        assertEquals(Optional.empty(), jobs.refuses(A, "alice"), "her own job, run again");
        assertEquals(Optional.empty(), jobs.refuses(A, null), "an operator's");
        assertEquals(Optional.of("job a belongs to login alice: login bob may not control it"), jobs.refuses(A, "bob"));
        assertTrue(jobs.refuses(new Event.LauncherExited("a", 1, 0), "bob").isPresent());
        assertEquals(Optional.empty(), jobs.refuses(new Event.LauncherExited("a", 1, 0), "alice"));
        jobs.apply(A, 2, null); // an operator runs it again: it stays hers
        assertEquals("alice", jobs.get("a").orElseThrow().owner);

        jobs.apply(new Event.JobStarted("ops", 1, 1000, true, "file:///s", "n2"), 3);
        assertNull(jobs.get("ops").orElseThrow().owner);
        assertEquals(Optional.of("job ops was started by an operator: login alice may not control it"),
                jobs.refuses(new Event.LauncherExited("ops", 1, 0), "alice"));
        assertEquals(Optional.of("login bob asked about job nope, which does not run"),
                JobOwners.refuses(null, "nope", false, "bob"));
    }

    @Test
    void theOwnerOutlivesASnapshot() {
        Jobs jobs = new Jobs();
        jobs.apply(A, 1, "alice");
        List<JobView> back = FoldSnapshot.decode(FoldSnapshot.encode(jobs.all()));
        assertEquals("alice", back.get(0).owner);
    }

    @Test
    void theRelayPassesOnlyWhatAUserDoesToItsJobs() {
        assertEquals(Optional.empty(), RequestRelay.refuses(KafkaLog.EVENTS, "a", EventCodec.encode(A)));
        assertEquals(Optional.empty(), RequestRelay.refuses(KafkaLog.HEARTBEATS, "a",
                EventCodec.encode(new Event.Heartbeat("a", Event.Heartbeat.LAUNCHER))));
        assertEquals(Optional.empty(), RequestRelay.refuses(KafkaLog.COMMANDS, KafkaLog.COORDINATOR,
                EventCodec.encode(new Command.Halt("a", 1, "mine"))));
        assertEquals(Optional.of("ImageCaptured is an operator's to write"), RequestRelay.refuses(KafkaLog.EVENTS, "a",
                EventCodec.encode(new Event.ImageCaptured("a", 1, 0, "n1", 10, 0.1, 10))));
        assertEquals(Optional.of("Heartbeat is an operator's to write"), RequestRelay.refuses(KafkaLog.HEARTBEATS, "a",
                EventCodec.encode(new Event.Heartbeat("a", "n1"))), "a node's heartbeat is its agent's");
        assertEquals(Optional.of("Release to n1 is an operator's to send"), RequestRelay.refuses(KafkaLog.COMMANDS,
                "n1",
                EventCodec.encode(new Command.Release("a"))));
        assertTrue(RequestRelay.refuses(KafkaLog.COMMANDS, "n1", EventCodec.encode(new Command.PlanRestart("a", "n1", 1,
                "0", "file:///s", Map.of(), "req", Map.of()))).isPresent(), "an agent opens the store it names");
        assertEquals(Optional.of("Halt to n1 is an operator's to send"), RequestRelay.refuses(KafkaLog.COMMANDS, "n1",
                EventCodec.encode(new Command.Halt("a", 1, "x"))));
        assertTrue(RequestRelay.refuses(KafkaLog.EVENTS, "b", EventCodec.encode(A)).orElseThrow()
                .contains("does not belong in ferry.events under key b"));
        assertTrue(RequestRelay.refuses(KafkaLog.EVENTS, "a", "{".getBytes()).orElseThrow().startsWith("malformed"));
    }
}

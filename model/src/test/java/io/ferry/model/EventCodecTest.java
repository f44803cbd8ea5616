package io.ferry.model;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EventCodecTest {
    @Test
    void aRecordOverTheLimitIsRefusedBeforeItIsParsed() {
        byte[] huge = new byte[EventCodec.MAX_BYTES + 1];
        Arrays.fill(huge, (byte) ' ');
        IllegalArgumentException e = Assertions.assertThrows(IllegalArgumentException.class,
                () -> EventCodec.decode(huge));
        assertTrue(e.getMessage().contains("over the limit of " + EventCodec.MAX_BYTES), e.getMessage());
        Assertions.assertThrows(IllegalArgumentException.class,
                () -> EventCodec.decodeCommand(huge));
    }

    @Test
    void everyEventTypeRoundTrips() {
        List<Event> all = List.of(new Event.JobStarted("j", 4, 3000, true, "file:/s", "n0"),
                new Event.CheckpointRequested("j", 2, "interval"),
                new Event.ImageCaptured("j", 2, 1, "n0", 1234, 0.25),
                new Event.CaptureFailed("j", 3, "rank 1 exited"),
                new Event.ImageStaged("j", 2, 1, "remote", 1234, 600, 0.5),
                new Event.StagingFailed("j", 2, 1, "store down"),
                new Event.SnapshotEstablished("j", 2, "remote", 1.5),
                new Event.RankExited("j", 3, 137),
                new Event.RecoveryStarted("j", 2, "rank 3 exited with 137"),
                new Event.ImagesRestored("j", 2, "n1", Map.of(0, "local", 1, "remote")),
                new Event.RestoreFailed("j", 2, "n1", "no tier holds rank 1"),
                new Event.RestoreFailed("j", 3, "n1", "store down", true, false),
                new Event.RestoreFailed("j", 3, "n1", "cannot run dmtcp_restart", false, false),
                new Event.RestoreFailed("j", 4, "n1", "Cannot run program", false, false, true),
                new Event.JobPlaced("j", "map:0-3:n1,4-7:n3", "node n2 lost"),
                new Event.RanksJoined("j", 3, "n1", "0-3,7"), new Event.LauncherRequested("j", 2, 3, "rank 3 exited"),
                new Event.LauncherExited("j", 2, 137),
                new Event.RestartPlanned("j", 4, "n1", "r-1", Map.of(2, "local", 3, "remote"), ""),
                new Event.PeerAddress("j", "n1", "10.0.0.7:40123"), new Event.PeerAddress("j", "n2", "[fd00::2]:7"),
                new Event.PartnerCopied("j", 4, "n1", "n2", "4-7", 4096, 0.125),
                new Event.JobStarted("j", 8, 0, true, "file:/s", "login1", "launcher:",
                        LaunchSpec.of(List.of("./sim"))),
                new Event.JobStarted("j", 8, 0, false, "file:/s", "login1", "block:n1,n2",
                        new LaunchSpec(List.of("./sim", "in.cfg"), "app", 30_000, "USR2", Map.of("s3.region", "eu"))),
                new Event.JobFinished("j", true, "all ranks exited 0"), new Event.Heartbeat("j", "n0"),
                new Event.CacheReported("j", "n0", 100_000, 40_000, 12_000, 3, 2),
                new Event.PredictionMade("j", 4, 1234, 2, 0.5, 3.0, 0.2, 5),
                new Event.PredictionMade("j", 4, 1234, 2, 0.5, 3.0, 0.2, 5, 600, 0.25),
                new Event.StagingProgress("j", 4, "n0", 1000, 4000, 250, 120),
                new Event.StoreHealthReported("j", "n0", "s3://b/p", "OPEN", 10, 3, 2, 1),
                new Event.HaltRequested("j", 1_795_000_000_000L, "ferry halt"),
                new Event.AgentPresent("n0", "0123456789abcdef", "host-a", "/ssd/ferry", 5000, 42, false),
                new Event.AgentPresent("n0", "0123456789abcdef", "host-a", "/ssd/ferry", 5000, -1, false).leave(),
                new Event.AgentPresent("n0", "0123456789abcdef", "host-a", "/ssd/ferry", 5000, 7, false,
                        "10.0.0.7:40123"));
        for (Event e : all) {
            assertEquals(e, EventCodec.decode(EventCodec.encode(e)));
            assertEquals(e, EventCodec.decodeTree(EventCodec.encode(e), Event.class), "the general path alone");
        }
        for (Command c : List.of(new Command.Capture("j", 5), new Command.Capture("j", 6, "n3=10.0.0.3:4000"),
                new Command.Release("j"), new Command.Restart("j", -1, "user"),
                new Command.RequestCheckpoint("j"), new Command.Launch("j", "n2", 4, "4-7", 8, "file:/s",
                        LaunchSpec.of(List.of("./sim")), "rank 3 exited with 137"),
                new Command.Launch("j", "n2", -1, "4", 8, "file:/s", LaunchSpec.of(List.of("./sim")), "joined", true),
                new Command.KillRank("j", 4), new Command.KillNode("n2"),
                new Command.Halt("j", 1_795_000_000_000L, "SIGTERM"),
                new Command.PlanRestart("j", "n1", 4, "2-3", "file:/s", Map.of("s3.region", "eu"), "r-1"),
                new Command.PlanRestart("j", "n1", 4, "2-3", "file:/s", Map.of(), "r-2",
                        Map.of(2, "n0=10.0.0.1:9,n2=h2:10")),
                new Command.Launch("j", "n2", 4, "4-7", 8, "file:/s", LaunchSpec.of(List.of("./sim")),
                        "node lost", false, Map.of(4, "n1=10.0.0.1:5000", 5, "n1=10.0.0.1:5000,n3=10.0.0.3:5000")),
                new Command.Launch("j", "n2", 4, "4-7", 8, "file:/s", LaunchSpec.of(List.of("./sim")),
                        "node lost", false, Map.of(), "n0=10.0.0.1:5000", 1_795_000_000_123L))) {
            assertEquals(c, EventCodec.decodeCommand(EventCodec.encode(c)));
        }
    }

    @Test
    void aRestoreFailedWrittenBeforeItsCauseWasClassifiedStillSetsItsGenerationAside() {
        // as the coordinator read these then: bad data unless the store was away
        String old = "{\"job\":\"j\",\"generation\":4,\"node\":\"n1\",\"reason\":\"cannot launch: x\","
                + "\"storeUnreachable\":false,\"type\":\"RestoreFailed\",\"v\":1}";
        assertEquals(new Event.RestoreFailed("j", 4, "n1", "cannot launch: x", false, true),
                EventCodec.decode(utf8(old)));
        String away = old.replace("\"storeUnreachable\":false", "\"storeUnreachable\":true");
        assertEquals(false, ((Event.RestoreFailed) EventCodec.decode(utf8(away))).provenBad(),
                "the store away proves nothing");
    }

    @Test
    void launchesAndPresencesWrittenBeforeSpanningComputationsReadAsNoneAndAreChecked() {
        Command.Launch plain = new Command.Launch("j", "n2", 4, "4-7", 8, "file:/s",
                LaunchSpec.of(List.of("./sim")), "x");
        String json = new String(EventCodec.encode(plain), StandardCharsets.UTF_8);
        String old = json.replace(",\"lead\":\"\"", "").replace(",\"launchId\":0", "");
        assertFalse(old.contains("lead") || old.contains("launchId"), old);
        Command.Launch read = (Command.Launch) EventCodec.decodeCommand(utf8(old));
        assertEquals(plain, read);
        assertEquals("", read.leadNode());
        assertEquals("n0", new Command.Launch("j", "n2", 4, "4", 8, "file:/s",
                LaunchSpec.of(List.of("./sim")), "x", false,
                Map.of(), "n0=10.0.0.1:5000", 9).leadNode());
        assertThrows(IllegalArgumentException.class, () -> new Command.Launch("j", "n2", 4, "4", 8, "file:/s",
                LaunchSpec.of(List.of("./sim")), "x", false, Map.of(), "n0=h:1,n1=h:2", 9), "one lead, not two");
        assertThrows(IllegalArgumentException.class, () -> new Command.Launch("j", "n2", 4, "4", 8, "file:/s",
                LaunchSpec.of(List.of("./sim")), "x", false, Map.of(), "", -1), "a negative launch id");
        String presence = "{\"node\":\"n0\",\"incarnation\":\"0123456789abcdef\",\"host\":\"h\",\"home\":\"/f\","
                + "\"intervalMillis\":5000,\"epoch\":3,\"leaving\":false,\"type\":\"AgentPresent\",\"v\":1}";
        assertEquals("", ((Event.AgentPresent) EventCodec.decode(utf8(presence))).peer());
        assertThrows(IllegalArgumentException.class, () -> EventCodec.decode(utf8(presence.replace("\"leaving\":false",
                "\"leaving\":false,\"peer\":\"no-port\""))), "a peer address without a port");
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void theHotEventsTakeTheFastPathAndGiveWhatTheGeneralPathGives() {
        FlatRecords flat = new FlatRecords(Map.of("ImageCaptured", Event.ImageCaptured.class, "ImageStaged",
                Event.ImageStaged.class,
                        "Heartbeat", Event.Heartbeat.class, "JobStarted", Event.JobStarted.class),
                Map.of(Event.ImageStaged.class, Map.of("manifest", ""), Event.ImageCaptured.class,
                        Map.of("expectedWrittenBytes", "-1")));
        String digest = "ab".repeat(32);
        for (Event e : List.of(new Event.ImageCaptured("j", 2, 1, "n0", 1234, 0.25),
                new Event.ImageCaptured("j", 2, 1, "n0", 1234, 0.25, 600),
                new Event.ImageStaged("j", 2, 1, "remote", 1234, 600, 0.5, digest),
                new Event.ImageStaged("j", 2, 1, "remote", 1234, 600, 0.5), new Event.Heartbeat("j", "n0"))) {
            assertEquals(e, flat.decode(EventCodec.encode(e), Event.class, EventCodec.VERSION), e.toString());
        }
        // an event written before ImageStaged carried its manifest's digest: both paths read it as ""
        String old = "{\"job\":\"j\",\"generation\":2,\"rank\":1,\"tier\":\"remote\",\"rawBytes\":1,"
                + "\"storedBytes\":1,\"seconds\":0.5,\"type\":\"ImageStaged\",\"v\":1}";
        Event.ImageStaged expected = new Event.ImageStaged("j", 2, 1, "remote", 1, 1, 0.5, "");
        assertEquals(expected, flat.decode(utf8(old), Event.class, 1));
        assertEquals(expected, EventCodec.decodeTree(utf8(old), Event.class));
        // the type first, a whole number for a double: still the plain case
        assertEquals(new Event.ImageCaptured("j", 2, 1, "n0", 7, 1.0),
                flat.decode(utf8("{\"type\":\"ImageCaptured\",\"v\":1,"
                + "\"job\":\"j\",\"generation\":2,\"rank\":1,\"node\":\"n0\",\"bytes\":7,\"seconds\":1}"),
                Event.class, 1));
        assertEquals(new Event.Heartbeat("j", "n0"),
                flat.decode(utf8(" {\n \"job\" : \"j\" ,\t\"node\":\"n0\", \"type\":\"Heartbeat\",\"v\":1 }\n"),
                Event.class, 1), "white space between tokens");
        // not the plain case: left to the general path (which coerces or refuses by Jackson's rules)
        for (String other : List.of(
                "{\"job\":\"j\",\"node\":\"n0\",\"type\":\"Heartbeat\",\"v\":1,\"extra\":1}",
                "{\"job\":\"j\",\"node\":\"n0\",\"node\":\"n1\",\"type\":\"Heartbeat\",\"v\":1}",
                "{\"job\":\"j\",\"node\":null,\"type\":\"Heartbeat\",\"v\":1}",
                "{\"job\":\"j\",\"node\":\"n\\u0030\",\"type\":\"Heartbeat\",\"v\":1}",
                "{\"job\":\"j\",\"node\":\"nœud\",\"type\":\"Heartbeat\",\"v\":1}",
                "{\"job\":\"j\",\"node\":\"n0\",\"type\":\"Heartbeat\",\"v\":01}",
                "{\"job\":\"j\",\"node\":\"n0\",\"type\":\"Heartbeat\",\"v\":1,}",
                "{\"job\":\"j\",\"node\":\"n0\" \"type\":\"Heartbeat\",\"v\":1}",
                "{\"job\":\"j\",\"type\":\"Heartbeat\",\"v\":1}",
                "{\"job\":\"j\",\"node\":\"n0\",\"type\":\"Heartbeat\",\"v\":2}",
                "{\"job\":\"j\",\"node\":\"n0\",\"type\":\"Heartbeat\"}",
                "{\"job\":\"../j\",\"node\":\"n0\",\"type\":\"Heartbeat\",\"v\":1}",
                "{\"job\":\"j\",\"generation\":2,\"rank\":3000000000,\"node\":\"n0\",\"bytes\":7,\"seconds\":1,"
                        + "\"type\":\"ImageCaptured\",\"v\":1}",
                "{\"job\":\"j\",\"generation\":\"2\",\"rank\":1,\"node\":\"n0\",\"bytes\":7,\"seconds\":1,"
                        + "\"type\":\"ImageCaptured\",\"v\":1}",
                "{\"job\":\"j\",\"node\":\"n0\",\"type\":\"Heartbeat\",\"v\":1} trailing",
                "{\"job\":\"j\",\"ranks\":2,\"type\":\"JobStarted\",\"v\":1}")) {
            assertEquals(null, flat.decode(utf8(other), Event.class, 1), other);
        }
        assertEquals(null, flat.decode(EventCodec.encode(new Event.Heartbeat("j", "n0")), Command.class, 1),
                "not a command");
        assertEquals(new Event.Heartbeat("j", "nœud"),
                EventCodec.decode(EventCodec.encode(new Event.Heartbeat("j", "nœud"))),
                "the general path reads what the fast one leaves");
    }

    @Test
    void aForecastRecordedBeforeItSaidWhatItExpectedWrittenReadsAsMinusOne() {
        String old = "{\"type\":\"PredictionMade\",\"v\":1,\"job\":\"j\",\"generation\":4,"
                + "\"rawBytes\":1234,\"ranks\":2,\"predictedStallSeconds\":0.5,"
                + "\"predictedSecondsToEstablished\":3.0,\"idealSeconds\":0.2,\"basedOn\":5}";
        assertEquals(new Event.PredictionMade("j", 4, 1234, 2, 0.5, 3.0, 0.2, 5, -1), EventCodec.decode(utf8(old)));
        Event.PredictionMade now = new Event.PredictionMade("j", 4, 1234, 2, 0.5, 3.0, 0.2, 5, 600);
        assertEquals(now, EventCodec.decode(EventCodec.encode(now)));
    }

    @Test
    void ranksAndGenerationsBeyondWhatAJobCanHoldAreRefusedAtDecode() {
        // Folded, rank 10^9 sized per-rank tables by it (OutOfMemoryError at every start), and
        // generation 2^63-1 overflowed "the next generation".
        String rank = "{\"type\":\"ImageCaptured\",\"v\":1,\"job\":\"j\",\"generation\":2,\"rank\":1000000000,"
                + "\"node\":\"n0\",\"bytes\":7,\"seconds\":1.0}";
        IllegalArgumentException r = assertThrows(IllegalArgumentException.class, () -> EventCodec.decode(utf8(rank)));
        assertTrue(r.getMessage().contains("1000000000"), r.getMessage());
        String generation = "{\"type\":\"CheckpointRequested\",\"v\":1,\"job\":\"j\",\"generation\":"
                + Long.MAX_VALUE + ",\"why\":\"x\"}";
        IllegalArgumentException g = assertThrows(IllegalArgumentException.class,
                () -> EventCodec.decode(utf8(generation)));
        assertTrue(g.getMessage().contains(Long.toString(Long.MAX_VALUE)), g.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new Event.RankExited("j", RankSet.MAX_RANK + 1, 1));
        assertThrows(IllegalArgumentException.class,
                () -> new Event.JobStarted("j", RankSet.MAX_RANK + 2, 0, false, "file:/s", "n"));
        assertEquals(Names.MAX_GENERATION, new Event.CheckpointRequested("j", Names.MAX_GENERATION, "x").generation());
    }

    @Test
    void malformedEventsAreClearErrors() {
        for (String bad : List.of("not json", "[]", "{\"type\":\"RankExited\",\"v\":1}",
                "{\"type\":\"Nope\",\"v\":1,\"job\":\"j\"}",
                "{\"type\":\"RankExited\",\"v\":9,\"job\":\"j\",\"rank\":1,\"exitCode\":0}",
                "{\"type\":\"RankExited\",\"v\":1,\"job\":\"../x\",\"rank\":1,\"exitCode\":0}",
                "{\"type\":\"RankExited\",\"v\":1,\"job\":\"j\",\"rank\":1,\"exitCode\":0,\"extra\":1}",
                "{\"type\":\"PeerAddress\",\"v\":1,\"job\":\"j\",\"node\":\"n1\",\"address\":\"10.0.0.1\"}",
                "{\"type\":\"PeerAddress\",\"v\":1,\"job\":\"j\",\"node\":\"n1\",\"address\":\"h:70000\"}",
                "{\"type\":\"PartnerCopied\",\"v\":1,\"job\":\"j\",\"generation\":1,\"node\":\"n1\","
                        + "\"partner\":\"../n\",\"ranks\":\"0\",\"bytes\":1,\"seconds\":0}",
                "{\"type\":\"ImageStaged\",\"v\":1,\"job\":\"j\",\"generation\":1,\"rank\":0,\"tier\":\"remote\","
                        + "\"rawBytes\":1,\"storedBytes\":1,\"seconds\":0,\"manifest\":\"not a digest\"}",
                "{\"type\":\"ImageCaptured\",\"v\":1,\"job\":\"j\",\"generation\":1,\"rank\":3000000000,\"node\":\"n\","
                        + "\"bytes\":1,\"seconds\":0}")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> EventCodec.decode(bad.getBytes(StandardCharsets.UTF_8)), bad);
            assertTrue(e.getMessage() != null && !e.getMessage().isBlank(), bad);
        }
        assertThrows(IllegalArgumentException.class,
                () -> EventCodec.decode(EventCodec.encode(new Command.Capture("j", 1))), "a command is not an event");
        assertThrows(IllegalArgumentException.class, () -> new Command.Capture("j", 1, "n2"),
                "a partner without an address");
        assertThrows(IllegalArgumentException.class, () -> new Command.Launch("j", "n2", 4, "4", 8, "file:/s",
                LaunchSpec.of(List.of("./sim")), "x", false, Map.of(4, "n1=host")), "a peer without a port");
    }
}

package io.ferry.model;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.util.Map;

/**
 * JSON for {@link Event}s on the wire: the record's fields plus {@code "type"} (the record's
 * simple name) and {@code "v": 1}. Decoding is strict; a bad event is a
 * {@link MalformedManifestException}-like {@link IllegalArgumentException} the coordinator
 * counts and parks on the dead-letter topic. Thread-safe.
 */
public final class EventCodec {
    public static final int VERSION = 1;
    private static final ObjectMapper JSON = new ObjectMapper(JsonFactory.builder()
            // correctly rounded, as the JDK's parser, and several times faster: stalls and seconds are in every event
            .enable(StreamReadFeature.USE_FAST_DOUBLE_PARSER).build())
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true)
            .configure(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES, true)
            .configure(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES, true);
    private static final Map<String, Class<?>> TYPES = Map.ofEntries(
            type(Event.JobStarted.class), type(Event.CheckpointRequested.class), type(Event.ImageCaptured.class),
            type(Event.CaptureFailed.class), type(Event.ImageStaged.class), type(Event.StagingFailed.class),
            type(Event.SnapshotEstablished.class), type(Event.RankExited.class), type(Event.RecoveryStarted.class),
            type(Event.JobFinished.class), type(Event.Heartbeat.class), type(Event.StoreHealthReported.class),
            type(Event.PredictionMade.class), type(Event.CacheReported.class), type(Event.ImagesRestored.class),
            type(Event.RestoreFailed.class), type(Event.JobPlaced.class), type(Event.RanksJoined.class),
            type(Event.LauncherRequested.class), type(Event.LauncherExited.class), type(Event.RestartPlanned.class),
            type(Event.PeerAddress.class), type(Event.PartnerCopied.class), type(Event.HaltRequested.class),
            type(Event.StagingProgress.class), type(Event.AgentPresent.class),
            type(Command.Capture.class), type(Command.Launch.class), type(Command.Release.class),
            type(Command.Restart.class), type(Command.RequestCheckpoint.class), type(Command.KillRank.class),
            type(Command.KillNode.class), type(Command.PlanRestart.class), type(Command.Halt.class));

    /**
     * Fields added to a type after events of it were written: an event without one decodes with
     * this value (the topics keep events forever, and a coordinator replays them all).
     */
    private static final Map<Class<?>, Map<String, String>> ADDED_LATER = Map.of(
            Event.ImageStaged.class, Map.of("manifest", ""),
            Event.PredictionMade.class, Map.of("writtenBytes", "-1", "readShare", "0"),
            Event.RestoreFailed.class, Map.of("provenBad", "true", "launch", "false"),
            Event.ImageCaptured.class, Map.of("expectedWrittenBytes", "-1"),
            Event.AgentPresent.class, Map.of("peer", ""),
            Command.Launch.class, Map.of("lead", "", "launchId", "0"));
    private static final FlatRecords FLAT = new FlatRecords(TYPES, ADDED_LATER);

    private EventCodec() {}

    private static Map.Entry<String, Class<?>> type(Class<?> c) {
        return Map.entry(c.getSimpleName(), c);
    }

    public static byte[] encode(Command c) {
        return encodeRecord(c);
    }

    public static Command decodeCommand(byte[] bytes) {
        return decode(bytes, Command.class);
    }

    public static byte[] encode(Event e) {
        return encodeRecord(e);
    }

    private static byte[] encodeRecord(Object e) {
        ObjectNode n = JSON.valueToTree(e);
        n.put("type", e.getClass().getSimpleName());
        n.put("v", VERSION);
        try {
            return JSON.writeValueAsBytes(n);
        } catch (JsonProcessingException ex) {
            throw new IllegalStateException("cannot encode " + e, ex);
        }
    }

    /**
     * The largest event or command written or decoded (a job's placement is the largest: a few
     * hundred KiB at 1M ranks); the log's topics and clients are set to it. A record over it (a
     * site broker allowing more, a writer that is not Ferry) is refused before it is parsed.
     */
    public static final int MAX_BYTES = 4 << 20;

    /** Decodes an event; any problem is an {@link IllegalArgumentException} saying what. */
    public static Event decode(byte[] bytes) {
        return decode(bytes, Event.class);
    }

    private static <T> T decode(byte[] bytes, Class<T> base) {
        if (bytes.length > MAX_BYTES) {
            throw new IllegalArgumentException("record of " + bytes.length
                    + " bytes is over the limit of " + MAX_BYTES);
        }
        T plain = FLAT.decode(bytes, base, VERSION);
        return plain != null ? plain : decodeTree(bytes, base);
    }

    /** The general path: a JSON tree, checked, then bound to the record (Jackson's rules). */
    static <T> T decodeTree(byte[] bytes, Class<T> base) {
        try {
            JsonNode n = JSON.readTree(bytes);
            if (n == null || !n.isObject()) {
                throw new IllegalArgumentException("event is not a JSON object");
            }
            ObjectNode o = (ObjectNode) n;
            JsonNode v = o.remove("v");
            if (v == null || v.asInt() != VERSION) {
                throw new IllegalArgumentException("event version must be " + VERSION);
            }
            JsonNode t = o.remove("type");
            Class<?> c = t == null ? null : TYPES.get(t.asText());
            if (c == null || !base.isAssignableFrom(c)) {
                throw new IllegalArgumentException("unknown " + base.getSimpleName().toLowerCase() + " type " + t);
            }
            for (Map.Entry<String, String> f : ADDED_LATER.getOrDefault(c, Map.of()).entrySet()) {
                if (!o.has(f.getKey())) {
                    o.put(f.getKey(), f.getValue());
                }
            }
            return base.cast(JSON.treeToValue(o, c));
        } catch (IOException | RuntimeException e) {
            if (e instanceof IllegalArgumentException iae && iae.getMessage() != null
                    && iae.getMessage().startsWith("unknown")) {
                throw iae;
            }
            Throwable cause = e.getCause() instanceof IllegalArgumentException iae ? iae : e;
            throw new IllegalArgumentException("malformed event: " + cause.getMessage(), e);
        }
    }
}

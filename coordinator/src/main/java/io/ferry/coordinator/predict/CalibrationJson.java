package io.ferry.coordinator.predict;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A calibration file ({@code ferry plan --save-calibration}), so a planner can project from a
 * job measured weeks ago: {@code {"v":1,"job":..,"snapshots":..,"localBytesPerSecond":..,...,
 * "store":[{"writers":1,"bytesPerSecond":..},...]}}. Reading is strict: a missing or bad field
 * is one {@link IllegalArgumentException} naming it.
 */
public final class CalibrationJson {
    public static final int VERSION = 1;
    private static final ObjectMapper JSON = new ObjectMapper();

    private CalibrationJson() {}

    public static ObjectNode toJson(Calibration c) {
        ObjectNode n = JSON.createObjectNode().put("v", VERSION).put("job", c.job()).put("snapshots", c.snapshots())
                .put("localBytesPerSecond", c.localBytesPerSecond()).put("stallFixedSeconds", c.stallFixedSeconds())
                .put("stagingBytesPerSecond", c.stagingBytesPerSecond()).put("compressionRatio", c.compressionRatio())
                .put("stragglerSpread", c.stragglerSpread()).put("fixedSeconds", c.fixedSeconds());
        if (c.rawDiskBytesPerSecond() > 0) {
            n.put("rawDiskBytesPerSecond", c.rawDiskBytesPerSecond());
        }
        ArrayNode a = n.putArray("store");
        c.store().points().forEach(p -> a.addObject().put("writers", p.writers())
                .put("bytesPerSecond", p.bytesPerSecond()));
        return n;
    }

    /** Writes {@code c} to {@code file} atomically (temporary file, then rename). */
    public static void write(Calibration c, Path file) throws IOException {
        Path abs = file.toAbsolutePath();
        Path tmp = abs.resolveSibling("." + abs.getFileName() + ".tmp");
        Files.writeString(tmp, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(toJson(c)) + "\n");
        Files.move(tmp, abs, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    public static Calibration read(Path file) throws IOException {
        JsonNode n;
        try {
            n = JSON.readTree(file.toFile());
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("calibration file " + file + " is not JSON: " + e.getOriginalMessage());
        }
        try {
            return fromJson(n);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("calibration file " + file + ": " + e.getMessage());
        }
    }

    static Calibration fromJson(JsonNode n) {
        if (n == null || !n.isObject()) {
            throw new IllegalArgumentException("not a JSON object");
        }
        if (number(n, "v") != VERSION) {
            throw new IllegalArgumentException("version must be " + VERSION);
        }
        JsonNode job = n.get("job");
        if (job == null || !job.isTextual()) {
            throw new IllegalArgumentException("field 'job' must be a string");
        }
        JsonNode store = n.get("store");
        if (store == null || !store.isArray() || store.isEmpty()) {
            throw new IllegalArgumentException("field 'store' must list at least one {writers, bytesPerSecond}");
        }
        List<StoreCurve.Point> points = new ArrayList<>();
        for (JsonNode p : store) {
            points.add(new StoreCurve.Point((int) number(p, "writers"), number(p, "bytesPerSecond")));
        }
        double raw = n.has("rawDiskBytesPerSecond") ? number(n, "rawDiskBytesPerSecond") : Double.NaN;
        return new Calibration(job.asText(), (int) number(n, "snapshots"), number(n, "localBytesPerSecond"),
                number(n, "stallFixedSeconds"), number(n, "stagingBytesPerSecond"), number(n, "compressionRatio"),
                number(n, "stragglerSpread"), number(n, "fixedSeconds"), new StoreCurve(points), raw);
    }

    private static double number(JsonNode n, String field) {
        JsonNode v = n.get(field);
        if (v == null || !v.isNumber() || !Double.isFinite(v.asDouble())) {
            throw new IllegalArgumentException("field '" + field + "' must be a finite number");
        }
        return v.asDouble();
    }
}

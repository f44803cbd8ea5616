package io.ferry.agent;

import java.util.Map;

/** One generation captured on this node: per rank, image bytes and stall seconds. */
public record CaptureResult(long generation, Map<Integer, Long> bytes, Map<Integer, Double> stallSeconds) {
    public CaptureResult {
        bytes = Map.copyOf(bytes);
        stallSeconds = Map.copyOf(stallSeconds);
    }
}

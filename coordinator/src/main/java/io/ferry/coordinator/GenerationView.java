package io.ferry.coordinator;

import java.util.Set;
import java.util.TreeSet;

/** What the log says about one generation of one job. Mutable, owned by {@link Jobs}; not thread-safe. */
public final class GenerationView {
    /** Snapshot states (DESIGN.md): OPEN -> CAPTURED -> ESTABLISHED, or FAILED. */
    public enum State { OPEN, CAPTURED, ESTABLISHED, FAILED }

    final long generation;
    State state = State.OPEN;
    final Set<Integer> captured = new TreeSet<>();
    final Set<Integer> staged = new TreeSet<>();
    long rawBytes;
    /** Each rank's capture (node, bytes, stall) and staging seconds (hash, compress, put). */
    final java.util.Map<Integer, io.ferry.model.Event.ImageCaptured> captures = new java.util.TreeMap<>();
    final java.util.Map<Integer, Double> stagingSecondsByRank = new java.util.TreeMap<>();
    long storedBytes;
    double maxStallSeconds;
    double secondsToEstablished = Double.NaN;
    String failure = "";
    String stagingProblem = "";
    /** Why a node could not restore this generation (it is then never chosen again), or empty. */
    String restoreFailure = "";
    long requestedAtMillis;
    io.ferry.model.Event.PredictionMade prediction;

    GenerationView(long generation) {
        this.generation = generation;
    }

    public long generation() {
        return generation;
    }

    public State state() {
        return state;
    }

    public int capturedRanks() {
        return captured.size();
    }

    public int stagedRanks() {
        return staged.size();
    }

    public long rawBytes() {
        return rawBytes;
    }

    /** Raw bytes this generation put into {@code node}'s cache (0 if none). */
    public long bytesOn(String node) {
        return captures.values().stream().filter(c -> c.node().equals(node)).mapToLong(io.ferry.model.Event.ImageCaptured::bytes).sum();
    }

    /** Nodes that captured ranks of this generation. */
    public java.util.Set<String> nodes() {
        return captures.values().stream().map(io.ferry.model.Event.ImageCaptured::node)
                .collect(java.util.stream.Collectors.toUnmodifiableSet());
    }

    /** Seconds {@code node}'s agent spent staging this generation (it stages ranks one after another). */
    public double stagingSecondsOn(String node) {
        return stagingSecondsByRank.entrySet().stream()
                .filter(e -> captures.containsKey(e.getKey()) && captures.get(e.getKey()).node().equals(node))
                .mapToDouble(java.util.Map.Entry::getValue).sum();
    }

    /** Each captured rank's stall, in rank order. */
    public double[] stalls() {
        return captures.values().stream().mapToDouble(io.ferry.model.Event.ImageCaptured::seconds).toArray();
    }

    public long storedBytes() {
        return storedBytes;
    }

    public double maxStallSeconds() {
        return maxStallSeconds;
    }

    /** The coordinator's forecast for this generation, if it made one. */
    public java.util.Optional<io.ferry.model.Event.PredictionMade> prediction() {
        return java.util.Optional.ofNullable(prediction);
    }

    /** When it was requested (log time, ms since the epoch); 0 if unknown. */
    public long requestedAtMillis() {
        return requestedAtMillis;
    }

    public double secondsToEstablished() {
        return secondsToEstablished;
    }

    /** Why it failed, or why staging is waiting (a store that is down), or empty. */
    public String problem() {
        return !failure.isEmpty() ? failure : !restoreFailure.isEmpty() ? "unusable: " + restoreFailure : stagingProblem;
    }
}

package io.ferry.coordinator.predict;

import io.ferry.model.Event;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Collections;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What a generation's staging passed at each of {@link StagingSoFar#MARKS} of its bytes read: when (the
 * log time of the report that passed it; 0: not passed, or not known), what its next snapshots'
 * forecasts at the same mark learn how long the rest took from ({@link Predictor#restAfterMark}); and
 * the forecast made again there. Kept for the generation's life, unlike {@link StagingSoFar}, which
 * is dropped once it is compacted. Not thread-safe (the coordinator's fold).
 */
public final class StagingMarks {
    private final long[] millis = new long[StagingSoFar.MARKS.length];
    private final NavigableMap<Double, Event.PredictionMade> forecasts = new TreeMap<>();

    /** Folds a forecast made again as it staged, at its {@code readShare}. */
    public void forecast(Event.PredictionMade p) {
        forecasts.put(p.readShare(), p);
    }

    /** The forecast made again at {@code share} of its bytes read, if one was. */
    public Optional<Event.PredictionMade> forecastAt(double share) {
        return Optional.ofNullable(forecasts.get(share));
    }

    /** The last forecast made as it staged, if any. */
    public Optional<Event.PredictionMade> newestForecast() {
        return forecasts.isEmpty() ? Optional.empty() : Optional.of(forecasts.lastEntry().getValue());
    }

    /** The forecasts made as it staged, by share read (read-only). */
    public SortedMap<Double, Event.PredictionMade> forecasts() {
        return Collections.unmodifiableSortedMap(forecasts);
    }

    /** The generation's nodes have read {@code share} of its bytes, said by a report logged at {@code atMillis}. */
    public void read(double share, long atMillis) {
        for (int i = 0; i < millis.length; i++) {
            if (millis[i] == 0 && share >= StagingSoFar.MARKS[i]) {
                millis[i] = atMillis;
            }
        }
    }

    /** Seconds from {@code fromMillis} (a request's or a capture's time) until {@code mark} was passed, or NaN where not known. */
    public double secondsFrom(long fromMillis, double mark) {
        for (int i = 0; i < millis.length; i++) {
            if (StagingSoFar.MARKS[i] == mark) {
                return fromMillis > 0 && millis[i] >= fromMillis
                        ? (millis[i] - fromMillis) / 1000.0 : Double.NaN;
            }
        }
        return Double.NaN;
    }

    /** Writes them for the coordinator's snapshot of its state. */
    public void writeTo(DataOutputStream out) throws IOException {
        for (long m : millis) {
            out.writeLong(m);
        }
    }

    /** Reads what {@link #writeTo} wrote into these. */
    public void readFrom(DataInputStream in) throws IOException {
        for (int i = 0; i < millis.length; i++) {
            millis[i] = in.readLong();
        }
    }
}

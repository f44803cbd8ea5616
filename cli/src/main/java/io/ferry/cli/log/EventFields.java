package io.ferry.cli.log;

import ch.qos.logback.classic.pattern.ClassicConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;

import java.util.List;
import java.util.Map;

/**
 * A Logback converter for {@code %ferryFields}: the event's job, generation, rank and node from
 * the MDC, as {@code " job=sim generation=3 rank=0 node=n1"}, each only when set, in that order;
 * nothing at all for a line about none of them (a broker's, a store's).
 */
public final class EventFields extends ClassicConverter {
    /** The MDC keys Ferry's event lines set ({@code io.ferry.eventlog.EventLines}). */
    public static final List<String> KEYS = List.of("job", "generation", "rank", "node");

    @Override
    public String convert(ILoggingEvent event) {
        Map<String, String> mdc = event.getMDCPropertyMap();
        if (mdc == null || mdc.isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder();
        for (String k : KEYS) {
            String v = mdc.get(k);
            if (v != null && !v.isEmpty()) {
                b.append(' ').append(k).append('=').append(v);
            }
        }
        return b.toString();
    }
}

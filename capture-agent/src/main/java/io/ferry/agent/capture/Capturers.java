package io.ferry.agent.capture;

import java.util.List;

/** The transparent capture methods by name: {@code proc}, {@code criu}, {@code dmtcp}. */
public final class Capturers {
    /** Every method name {@link #of} knows, plus {@code app}, the cooperative protocol. */
    public static final List<String> METHODS = List.of("app", "proc", "criu", "dmtcp");

    private Capturers() {
    }

    /** The capturer for {@code method}; {@code app} has none (the agent speaks the protocol itself). */
    public static Capturer of(String method) {
        return switch (method) {
            case "proc" -> new ProcCapturer();
            case "criu" -> new CriuCapturer();
            case "dmtcp" -> new DmtcpCapturer();
            default -> throw new IllegalArgumentException("unknown capture method '" + method + "': one of " + METHODS);
        };
    }
}

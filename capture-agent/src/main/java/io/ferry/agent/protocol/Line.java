package io.ferry.agent.protocol;

import java.io.IOException;
import java.io.Reader;

/**
 * One line of the cooperative capture protocol v1 ({@code docs/protocol.md}). Parsing is
 * strict: anything else is an {@link IllegalArgumentException} that quotes the line.
 */
public sealed interface Line {
    int MAX_LENGTH = 4096;

    record Hello(int rank) implements Line {}

    record Checkpoint(long generation, String dir) implements Line {}

    record Done(long generation) implements Line {}

    record Fail(long generation, String reason) implements Line {}

    /** The rank's own check of its restart data of {@code generation} failed (SCR's Complete_restart(valid=0)). */
    record RestartFail(long generation, String reason) implements Line {}

    /**
     * The next line of {@code in} without its newline, null at the end; a line longer than
     * {@link #MAX_LENGTH} is an {@link IllegalArgumentException} once that many characters are
     * read, so a peer that never sends a newline cannot fill the heap.
     */
    static String read(Reader in) throws IOException {
        StringBuilder b = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0) {
            if (c == '\n') {
                int end = b.length() > 0 && b.charAt(b.length() - 1) == '\r' ? b.length() - 1 : b.length();
                return b.substring(0, end);
            }
            if (b.length() == MAX_LENGTH) {
                throw new IllegalArgumentException("protocol line longer than " + MAX_LENGTH + " bytes");
            }
            b.append((char) c);
        }
        return b.length() == 0 ? null : b.toString();
    }

    /** The text of this line, without the newline. */
    default String encode() {
        if (this instanceof Hello h) {
            return "HELLO " + h.rank();
        } else if (this instanceof Checkpoint c) {
            return "CHECKPOINT " + c.generation() + " " + c.dir();
        } else if (this instanceof Done d) {
            return "DONE " + d.generation();
        } else if (this instanceof Fail f) {
            return "FAIL " + f.generation() + " " + f.reason().replace('\n', ' ');
        } else if (this instanceof RestartFail f) {
            return "RESTART_FAIL " + f.generation() + " " + f.reason().replace('\n', ' ');
        }
        throw new AssertionError(this);
    }

    static Line parse(String text) {
        if (text == null || text.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("protocol line missing or longer than " + MAX_LENGTH + " bytes");
        }
        String[] p = text.split(" ", 3);
        try {
            switch (p[0]) {
                case "HELLO":
                    if (p.length == 2) {
                        return new Hello(Integer.parseInt(p[1]));
                    }
                    break;
                case "CHECKPOINT":
                    if (p.length == 3 && !p[2].isEmpty()) {
                        return new Checkpoint(Long.parseLong(p[1]), p[2]);
                    }
                    break;
                case "DONE":
                    if (p.length == 2) {
                        return new Done(Long.parseLong(p[1]));
                    }
                    break;
                case "FAIL":
                    if (p.length >= 2) {
                        return new Fail(Long.parseLong(p[1]), p.length == 3 ? p[2] : "");
                    }
                    break;
                case "RESTART_FAIL":
                    if (p.length >= 2) {
                        return new RestartFail(Long.parseLong(p[1]), p.length == 3 ? p[2] : "");
                    }
                    break;
                default:
                    break;
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad number in protocol line '" + text + "'", e);
        }
        throw new IllegalArgumentException("not a protocol v1 line: '" + text + "'");
    }
}

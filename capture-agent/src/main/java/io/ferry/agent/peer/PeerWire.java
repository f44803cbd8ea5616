package io.ferry.agent.peer;

import io.ferry.model.ImageRef;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * The request and answer lines of the peer protocol: {@code FERRY-PEER/1 PUT|GET|HAS JOB GEN RANK}
 * asked; {@code OK [BYTES]}, {@code YES BYTES}, {@code NO} or {@code ERR WHY} answered, each
 * ending in a newline; a {@link ImageStream} follows a PUT request and an OK to a GET. A question
 * about a computation this agent leads for a job ({@link PeerServer.Questions}) is
 * {@code FERRY-PEER/1 COORD|CKPT JOB NUMBER 0}, answered {@code OK TEXT}, {@code NO} (not yet) or
 * {@code ERR WHY}.
 */
final class PeerWire {
    static final String MAGIC = "FERRY-PEER/1";
    private static final int MAX_LINE = 1024;

    private PeerWire() {}

    record Request(String op, ImageRef ref) {
        static Request parse(String line) throws IOException {
            String[] f = line.split(" ");
            if (f.length != 5 || !f[0].equals(MAGIC)
                    || !Set.of("PUT", "GET", "HAS", "COORD", "CKPT").contains(f[1])) {
                throw new IOException("not a peer request: '" + line + "'");
            }
            try {
                return new Request(f[1], new ImageRef(f[2], Long.parseLong(f[3]), Integer.parseInt(f[4])));
            } catch (IllegalArgumentException e) { // a bad job name ("../x"), generation or rank
                throw new IOException("bad peer request '" + line + "': " + e.getMessage(), e);
            }
        }

        @Override
        public String toString() {
            return MAGIC + " " + op + " " + ref.job() + " " + ref.generation() + " " + ref.rank();
        }
    }

    static void writeLine(OutputStream out, String line) throws IOException {
        out.write((line.replace('\n', ' ') + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    /** One line, at most {@value #MAX_LINE} bytes, without its newline; the stream's end before it is an error. */
    static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        while (true) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("peer closed the connection" + (b.size() > 0 ? " mid-line" : ""));
            }
            if (c == '\n') {
                return b.toString(StandardCharsets.UTF_8);
            }
            if (b.size() == MAX_LINE) {
                throw new IOException("peer line longer than " + MAX_LINE + " bytes");
            }
            b.write(c);
        }
    }
}

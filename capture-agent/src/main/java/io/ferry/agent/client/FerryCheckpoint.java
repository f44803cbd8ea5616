package io.ferry.agent.client;

import io.ferry.agent.protocol.Line;
import io.ferry.model.DaemonThreads;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * The Java client of the cooperative capture protocol: one call makes a JVM program
 * checkpointable under Ferry.
 *
 * <pre>{@code
 * FerryCheckpoint ferry = FerryCheckpoint.fromEnvironment();
 * ferry.restartDir().ifPresent(dir -> state = load(dir));      // after a restart
 * ferry.serve((dir, generation) -> save(state, dir));           // answers every checkpoint
 * }</pre>
 *
 * The handler runs on the client's daemon thread while the agent waits; the program must
 * make its state consistent for the handler (a lock, or copy-on-write), as with SCR.
 */
public final class FerryCheckpoint {
    /** Writes the rank's state files into {@code dir}; throwing fails this generation. */
    @FunctionalInterface
    public interface Handler {
        void write(Path dir, long generation) throws Exception;
    }

    private final Map<String, String> env;

    private FerryCheckpoint(Map<String, String> env) {
        this.env = env;
    }

    private volatile OutputStream out;

    public static FerryCheckpoint fromEnvironment() {
        return new FerryCheckpoint(System.getenv());
    }

    public static FerryCheckpoint from(Map<String, String> env) {
        return new FerryCheckpoint(Map.copyOf(env));
    }

    /** Whether this process runs under a Ferry agent. */
    public boolean managed() {
        return env.containsKey("FERRY_SOCKET");
    }

    public int rank() {
        return Integer.parseInt(required("FERRY_RANK"));
    }

    public int ranks() {
        return Integer.parseInt(required("FERRY_NRANKS"));
    }

    /** The verified files of the generation to resume from, when this is a restart. */
    public Optional<Path> restartDir() {
        return Optional.ofNullable(env.get("FERRY_RESTART_DIR")).map(Path::of);
    }

    public Optional<Long> restartGeneration() {
        return Optional.ofNullable(env.get("FERRY_RESTART_GENERATION")).map(Long::parseLong);
    }

    /**
     * Connects to the agent, says HELLO and answers every CHECKPOINT with the handler on a
     * daemon thread, until the agent closes the connection. Returns once connected.
     */
    public Thread serve(Handler handler) throws IOException {
        SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        ch.connect(UnixDomainSocketAddress.of(required("FERRY_SOCKET")));
        OutputStream out = Channels.newOutputStream(ch);
        this.out = out;
        BufferedReader in = new BufferedReader(new InputStreamReader(Channels.newInputStream(ch),
                StandardCharsets.US_ASCII));
        send(out, new Line.Hello(rank()));
        return DaemonThreads.start("ferry-checkpoint-client", () -> loop(ch, in, out, handler));
    }

    /**
     * After checking the restart data ({@link #restartDir()}): with {@code valid} false, tells
     * the agent the data failed this rank's own check (as SCR's {@code SCR_Complete_restart}
     * with valid=0); every rank then rolls back to the next older established generation, and
     * this one is never chosen again. Call after {@link #serve}; nothing to do when valid.
     */
    public void completeRestart(boolean valid, String reason) throws IOException {
        if (valid || restartGeneration().isEmpty()) {
            return;
        }
        if (out == null) {
            throw new IllegalStateException("completeRestart before serve: not connected to the agent");
        }
        send(out, new Line.RestartFail(restartGeneration().get(), reason == null ? "" : reason));
    }

    private static void loop(SocketChannel ch, BufferedReader in, OutputStream out, Handler handler) {
        try (ch) {
            String text;
            while ((text = Line.read(in)) != null) {
                if (!(Line.parse(text) instanceof Line.Checkpoint c)) {
                    throw new IOException("unexpected line from agent: " + text);
                }
                Line answer;
                try {
                    handler.write(Path.of(c.dir()), c.generation());
                    answer = new Line.Done(c.generation());
                } catch (Exception e) {
                    answer = new Line.Fail(c.generation(), String.valueOf(e));
                }
                send(out, answer);
            }
        } catch (IOException | IllegalArgumentException e) {
            System.err.println("ferry client: connection to the agent lost: " + e);
        }
    }

    private static synchronized void send(OutputStream out, Line line) throws IOException {
        out.write((line.encode() + "\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    private String required(String name) {
        String v = env.get(name);
        if (v == null) {
            throw new IllegalStateException(name + " is not set: not running under a Ferry agent");
        }
        return v;
    }
}

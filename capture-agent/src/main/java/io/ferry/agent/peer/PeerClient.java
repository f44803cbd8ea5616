package io.ferry.agent.peer;

import io.ferry.model.DaemonThreads;
import io.ferry.model.ImageRef;
import io.ferry.model.PeerAddresses;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/** Talks to another node's {@link PeerServer}: puts a partner copy there, gets or asks about an image. */
public final class PeerClient {
    private static final int CONNECT_TIMEOUT_MILLIS = 5_000;
    private static final int READ_TIMEOUT_MILLIS = 60_000;
    /** A peer that took the connection but does not answer a GET or HAS within this is passed over. */
    private static final int ANSWER_TIMEOUT_MILLIS = 15_000;

    /**
     * A partner copy may take this long, and a second more for every {@link #PUT_BYTES_PER_SECOND}
     * bytes: a frozen or wedged partner (its port still accepts, nothing reads) would otherwise hold
     * the copy, and the staging behind it, for ever: a socket write has no timeout of its own.
     */
    static final long PUT_BASE_MILLIS = 30_000;
    static final long PUT_BYTES_PER_SECOND = 50L << 20;
    /** Closes the socket of a copy past its deadline, which fails the blocked write or read at once. */
    private static final ScheduledExecutorService WATCHDOG =
            Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("ferry-peer-watchdog"));

    private PeerClient() {}

    /** The deadline of a partner copy of {@code bytes}: {@link #PUT_BASE_MILLIS} and a second per 50 MiB. */
    public static Duration putDeadline(long bytes) {
        return Duration.ofMillis(PUT_BASE_MILLIS + bytes / (PUT_BYTES_PER_SECOND / 1000));
    }

    /** The peer could not be connected to at all (its agent or host is gone): not worth asking again soon. */
    public static final class Unreachable extends IOException {
        Unreachable(PeerAddresses.Peer peer, IOException cause) {
            super("cannot reach " + peer + ": " + cause.getMessage(), cause);
        }
    }

    /** {@link #put(PeerAddresses.Peer, ImageRef, Path, PeerAuth)} without a secret. */
    public static long put(PeerAddresses.Peer peer, ImageRef ref, Path dir) throws IOException {
        return put(peer, ref, dir, PeerAuth.NONE);
    }

    /**
     * Copies the image in {@code dir} into {@code peer}'s cache as {@code ref}, proving {@code auth}'s
     * secret first (and that the peer knows it: images go only to a peer that does); returns the
     * bytes it acknowledged.
     */
    public static long put(PeerAddresses.Peer peer, ImageRef ref, Path dir, PeerAuth auth) throws IOException {
        return put(peer, ref, dir, auth, putDeadline(ImageStream.bytes(dir)));
    }

    /**
     * {@link #put(PeerAddresses.Peer, ImageRef, Path, PeerAuth)} that gives up at {@code deadline}:
     * past it the connection is closed and an {@link IOException} says so.
     */
    public static long put(PeerAddresses.Peer peer, ImageRef ref, Path dir, PeerAuth auth, Duration deadline)
            throws IOException {
        Socket s = connect(peer);
        AtomicBoolean expired = new AtomicBoolean();
        ScheduledFuture<?> watch = WATCHDOG.schedule(() -> {
            expired.set(true);
            try {
                s.close();
            } catch (IOException ignored) {
                // closed either way
            }
        }, deadline.toMillis(), TimeUnit.MILLISECONDS);
        try {
            return putOn(s, peer, ref, dir, auth);
        } catch (IOException e) {
            if (expired.get()) {
                throw new IOException("the partner copy of rank " + ref.rank() + " to " + peer.node()
                        + " did not finish within "
                        + deadline.toSeconds() + " s (a frozen or overloaded partner?): given up", e);
            }
            throw e;
        } finally {
            watch.cancel(false);
            s.close();
        }
    }

    private static long putOn(Socket s, PeerAddresses.Peer peer, ImageRef ref, Path dir, PeerAuth auth)
            throws IOException {
        try (InputStream in = new BufferedInputStream(s.getInputStream());
             OutputStream out = new BufferedOutputStream(s.getOutputStream(), 1 << 16)) {
            handshake(s, in, out, peer, auth);
            PeerWire.writeLine(out, new PeerWire.Request("PUT", ref).toString());
            ImageStream.write(dir, out);
            String answer = PeerWire.readLine(in);
            if (!answer.startsWith("OK ")) {
                throw answer.startsWith(PeerAuth.MAGIC) ? unexpected(peer, answer)
                        : new IOException(peer.node() + " refused the partner copy of rank " + ref.rank()
                                + ": " + answer);
            }
            return Long.parseLong(answer.substring(3).trim());
        }
    }

    /**
     * Fetches {@code ref} from {@code peer}'s cache into {@code target} (must not exist);
     * false when the peer does not hold it. The copy is not verified here.
     */
    public static boolean get(PeerAddresses.Peer peer, ImageRef ref, Path target) throws IOException {
        return get(peer, ref, target, PeerAuth.NONE);
    }

    /** {@link #get(PeerAddresses.Peer, ImageRef, Path)}, proving {@code auth}'s secret first. */
    public static boolean get(PeerAddresses.Peer peer, ImageRef ref, Path target, PeerAuth auth) throws IOException {
        try (Socket s = connect(peer); InputStream in = new BufferedInputStream(s.getInputStream(), 1 << 16);
             OutputStream out = new BufferedOutputStream(s.getOutputStream())) {
            handshake(s, in, out, peer, auth);
            PeerWire.writeLine(out, new PeerWire.Request("GET", ref).toString());
            s.setSoTimeout(ANSWER_TIMEOUT_MILLIS);
            String answer = PeerWire.readLine(in);
            s.setSoTimeout(READ_TIMEOUT_MILLIS);
            if (answer.equals("NO")) {
                return false;
            }
            if (!answer.equals("OK")) {
                throw unexpected(peer, answer);
            }
            ImageStream.read(in, target, false); // a restart's scratch copy: verified next, not kept
            return true;
        }
    }

    /** The bytes of {@code ref} in {@code peer}'s cache, or empty when it holds none. */
    public static OptionalLong has(PeerAddresses.Peer peer, ImageRef ref) throws IOException {
        return has(peer, ref, PeerAuth.NONE);
    }

    /** {@link #has(PeerAddresses.Peer, ImageRef)}, proving {@code auth}'s secret first. */
    public static OptionalLong has(PeerAddresses.Peer peer, ImageRef ref, PeerAuth auth) throws IOException {
        try (Socket s = connect(peer); InputStream in = new BufferedInputStream(s.getInputStream());
             OutputStream out = s.getOutputStream()) {
            handshake(s, in, out, peer, auth);
            PeerWire.writeLine(out, new PeerWire.Request("HAS", ref).toString());
            s.setSoTimeout(ANSWER_TIMEOUT_MILLIS);
            String answer = PeerWire.readLine(in);
            if (answer.startsWith("YES ")) {
                return OptionalLong.of(Long.parseLong(answer.substring(4).trim()));
            }
            if (answer.equals("NO")) {
                return OptionalLong.empty();
            }
            throw unexpected(peer, answer);
        }
    }

    /**
     * Asks {@code peer} a {@link PeerServer.Questions} question ({@code COORD} or {@code CKPT})
     * about {@code job}: the text after its {@code OK}, or empty for {@code NO} (not yet); an
     * {@code ERR} is an {@link IOException} with the peer's reason.
     */
    public static Optional<String> ask(PeerAddresses.Peer peer, String op, String job, long number,
                                                 PeerAuth auth) throws IOException {
        try (Socket s = connect(peer); InputStream in = new BufferedInputStream(s.getInputStream());
             OutputStream out = s.getOutputStream()) {
            handshake(s, in, out, peer, auth);
            PeerWire.writeLine(out, new PeerWire.Request(op, new ImageRef(job, number, 0)).toString());
            s.setSoTimeout(ANSWER_TIMEOUT_MILLIS);
            String answer = PeerWire.readLine(in);
            if (answer.startsWith("OK ")) {
                return Optional.of(answer.substring(3).trim());
            }
            if (answer.equals("NO")) {
                return Optional.empty();
            }
            throw answer.startsWith("ERR ") ? new IOException(peer.node() + ": " + answer.substring(4))
                    : unexpected(peer, answer);
        }
    }

    /** Proves the secret within the answer timeout, where there is one to prove. */
    private static void handshake(Socket s, InputStream in, OutputStream out, PeerAddresses.Peer peer, PeerAuth auth)
            throws IOException {
        if (auth.required()) {
            s.setSoTimeout(ANSWER_TIMEOUT_MILLIS);
            auth.prove(in, out, peer.node());
            s.setSoTimeout(READ_TIMEOUT_MILLIS);
        }
    }

    /** An answer that is a challenge: the peer wants a secret this agent was not given. */
    private static IOException unexpected(PeerAddresses.Peer peer, String answer) {
        return new IOException(answer.startsWith(PeerAuth.MAGIC)
                ? peer.node() + " requires peer authentication: give this agent " + PeerAuth.KEY
                : peer.node() + ": " + answer);
    }

    private static Socket connect(PeerAddresses.Peer peer) throws IOException {
        Socket s = new Socket();
        try {
            s.connect(new InetSocketAddress(peer.host(), peer.port()), CONNECT_TIMEOUT_MILLIS);
            s.setSoTimeout(READ_TIMEOUT_MILLIS);
            return s;
        } catch (IOException e) {
            s.close();
            throw new Unreachable(peer, e);
        }
    }
}

package io.ferry.agent.peer;

import io.ferry.model.DaemonThreads;
import io.ferry.model.ImageRef;
import io.ferry.staging.LocalCache;
import io.ferry.staging.internal.FileTrees;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * A node's cache, served to the other agents over TCP ({@link PeerWire}): they put partner
 * copies into it and get images out of it for restarts on their nodes. Everything received is
 * fsynced before it is acknowledged; nothing sent or received is trusted by the restart, which
 * verifies it against the committed manifest. A few connections are served at once (the
 * disk, not the CPU, is the limit); more wait. With a {@link PeerAuth} secret every connection
 * must prove it before anything is served; without one, anyone who reaches the port may read the
 * cache, so bind it to loopback or the cluster's internal network (see docs/operators.md).
 */
public final class PeerServer implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(PeerServer.class);
    private static final int READ_TIMEOUT_MILLIS = 60_000;
    /** A connection must prove the secret and say what it wants within this: idle ones are dropped, not queued. */
    private static final int HELLO_TIMEOUT_MILLIS = 5_000;
    /** Connections served at once; one more is refused (closed) at once rather than queued behind them. */
    private static final int MAX_CONNECTIONS = 16;
    private final ServerSocket socket;
    private final LocalCache cache;
    private final PeerAuth auth;
    private final ExecutorService workers = new ThreadPoolExecutor(4, MAX_CONNECTIONS, 30, TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            DaemonThreads.named("ferry-peer"));
    private final Thread acceptor;
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong sent = new AtomicLong();
    private volatile boolean open = true;
    private volatile Questions questions = (op, job, number) -> "ERR this agent leads no computation";

    /**
     * What this agent answers the others about a computation it leads for a job (DMTCP's one
     * coordinator for ranks on several nodes): {@code op} is {@code COORD} or {@code CKPT}; the
     * answer is {@code OK TEXT}, {@code NO} (not yet) or {@code ERR WHY}. Answered at once, never
     * waited on (the asker polls).
     */
    @FunctionalInterface
    public interface Questions {
        String answer(String op, String job, long number);
    }

    /** Answers the questions of {@link Questions} with {@code q} from now on. */
    public PeerServer answering(Questions q) {
        this.questions = Objects.requireNonNull(q);
        return this;
    }

    public PeerServer(InetSocketAddress bind, LocalCache cache) throws IOException {
        this(bind, cache, PeerAuth.NONE);
    }

    /** Serves {@code cache} on {@code bind} to peers that prove {@code auth}'s secret (none: to anyone). */
    public PeerServer(InetSocketAddress bind, LocalCache cache, PeerAuth auth) throws IOException {
        this.cache = cache;
        this.auth = auth;
        this.socket = new ServerSocket();
        socket.setReuseAddress(true);
        socket.bind(bind, 64);
        this.acceptor = DaemonThreads.start("ferry-peer-accept", this::accept);
    }

    /** Where it listens ({@code HOST:PORT} with the port it got). */
    public String address() {
        String host = socket.getInetAddress().getHostAddress();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + socket.getLocalPort();
    }

    /** File bytes received (partner copies) and sent (restarts elsewhere) since it started. */
    public long bytesReceived() {
        return received.get();
    }

    public long bytesSent() {
        return sent.get();
    }

    private void accept() {
        while (open) {
            try {
                Socket s = socket.accept();
                try {
                    workers.execute(() -> serve(s));
                } catch (RejectedExecutionException full) {
                    s.close();
                    if (!open) {
                        return; // closing
                    }
                    LOG.warn("ferry agent: peer server: " + MAX_CONNECTIONS
                            + " connections at once already: one refused");
                }
            } catch (IOException e) {
                if (open) {
                    LOG.warn("ferry agent: peer server: " + e.getMessage());
                }
            }
        }
    }

    private void serve(Socket s) {
        try (s; InputStream in = new BufferedInputStream(s.getInputStream(), 1 << 16);
             OutputStream out = new BufferedOutputStream(s.getOutputStream(), 1 << 16)) {
            s.setSoTimeout(HELLO_TIMEOUT_MILLIS); // until it has proved the secret and said what it wants
            if (auth.required()) {
                auth.serve(in, out);
            }
            PeerWire.Request req;
            try {
                req = PeerWire.Request.parse(PeerWire.readLine(in));
            } catch (SocketTimeoutException idle) {
                return; // said nothing in time: dropped, its worker freed
            } catch (IOException e) {
                PeerWire.writeLine(out, "ERR " + e.getMessage());
                return;
            }
            s.setSoTimeout(READ_TIMEOUT_MILLIS);
            switch (req.op()) {
                case "PUT" -> receive(req.ref(), in, out);
                case "GET" -> send(req.ref(), out);
                case "COORD", "CKPT" -> PeerWire.writeLine(out, questions.answer(req.op(), req.ref().job(),
                        req.ref().generation()));
                default -> has(req.ref(), out);
            }
        } catch (IOException e) {
            LOG.warn("ferry agent: peer " + s.getRemoteSocketAddress() + ": " + e.getMessage());
        }
    }

    private void receive(ImageRef ref, InputStream in, OutputStream out) throws IOException {
        Path incoming = cache.incomingDir(ref);
        try {
            Path image = incoming.resolve("image");
            long bytes = ImageStream.read(in, image, true);
            cache.installPartnerCopy(image, ref);
            received.addAndGet(bytes);
            PeerWire.writeLine(out, "OK " + bytes);
        } catch (IOException | RuntimeException e) {
            PeerWire.writeLine(out, "ERR " + e.getMessage());
        } finally {
            FileTrees.delete(incoming);
        }
    }

    private void send(ImageRef ref, OutputStream out) throws IOException {
        Path dir = cache.imageDir(ref);
        if (!Files.isDirectory(dir)) {
            PeerWire.writeLine(out, "NO");
            return;
        }
        PeerWire.writeLine(out, "OK");
        sent.addAndGet(ImageStream.write(dir, out)); // a copy dropped meanwhile ends the stream short: the peer sees it
    }

    private void has(ImageRef ref, OutputStream out) throws IOException {
        Path dir = cache.imageDir(ref);
        if (!Files.isDirectory(dir)) {
            PeerWire.writeLine(out, "NO");
            return;
        }
        long bytes;
        try (Stream<Path> s = Files.walk(dir)) {
            bytes = s.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS))
                    .mapToLong(p -> p.toFile().length()).sum();
        }
        PeerWire.writeLine(out, "YES " + bytes);
    }

    @Override
    public void close() throws IOException {
        open = false;
        socket.close();
        workers.shutdownNow();
    }
}

package io.ferry.cli;

import io.ferry.cli.log.ServedLog;
import io.ferry.model.DaemonThreads;
import io.ferry.model.OwnerOnly;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.Charset;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The server side of {@code ferry daemon}: a Unix-domain socket, 0600 in a 0700 directory of its
 * user, that runs {@code image push} and {@code image pull} for {@link ThinClient}s of the same
 * user (checked by {@code SO_PEERCRED}, from the kernel) on this node, each on a thread of its own,
 * with the client's working directory and output ({@link Invocation}). A client whose build or
 * environment differs from the daemon's is declined, and runs its command in a JVM of its own. A
 * client that goes away mid-command (Ctrl-C) has its command interrupted: a push then writes no
 * manifest and a pull leaves no directory, as when the command's own JVM is killed. Stops after
 * {@code idleExit} without a command, or when the build it runs is replaced. Thread-safe.
 */
final class DaemonServer implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(DaemonServer.class);
    private static final int MAX_ARGS = 4096;

    private final Path socket;
    private final ServerSocketChannel server;
    private final int uid = ThinClient.uid();
    private final UserPrincipal self;
    private final String build = ThinClient.build();
    private final byte[] environment;
    private final Duration idleExit;
    private final AtomicInteger active = new AtomicInteger();
    private final AtomicInteger served = new AtomicInteger();
    private volatile long lastActive = System.nanoTime();

    /** Binds {@code socket}, refusing a directory others could write in and a socket a live daemon serves. */
    DaemonServer(Path socket, Duration idleExit, Map<String, String> env) throws IOException {
        this.socket = socket.toAbsolutePath();
        this.idleExit = idleExit;
        this.environment = ThinClient.environmentDigest(env);
        this.self = ThinClient.self();
        Path dir = this.socket.getParent();
        if (!Files.isDirectory(dir)) {
            OwnerOnly.createDirectories(dir);
        }
        int owner = (Integer) Files.getAttribute(dir, "unix:uid");
        Set<PosixFilePermission> mode = Files.getPosixFilePermissions(dir);
        if (owner != uid || mode.contains(PosixFilePermission.GROUP_WRITE)
                || mode.contains(PosixFilePermission.OTHERS_WRITE)) {
            throw new IllegalArgumentException("daemon socket directory " + dir + " is "
                    + (owner != uid ? "owned by uid " + owner
                    : "writable by others (" + PosixFilePermissions.toString(mode) + ")")
                    + ": another user could put a socket of theirs in its place; use a"
                    + " directory of your own (--socket)");
        }
        if (Files.exists(this.socket, LinkOption.NOFOLLOW_LINKS)) {
            try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                probe.connect(UnixDomainSocketAddress.of(this.socket));
                throw new IllegalStateException("a daemon serves " + this.socket + " already");
            } catch (IOException stale) {
                Files.delete(this.socket); // left by a daemon that was killed
            }
        }
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(this.socket));
        OwnerOnly.restrict(this.socket);
    }

    Path socket() {
        return socket;
    }

    /** Commands served so far. */
    int served() {
        return served.get();
    }

    /**
     * Serves until {@link #close()}, or until idle for {@code idleExit} (zero: never); then returns
     * once the commands under way have ended (a SIGTERM's shutdown does not wait for them).
     */
    void serve() {
        if (!idleExit.isZero()) {
            DaemonThreads.start("ferry-daemon-idle", this::closeWhenIdle);
        }
        while (server.isOpen()) {
            try {
                SocketChannel ch = server.accept();
                active.incrementAndGet();
                DaemonThreads.start("ferry-daemon-client", () -> serve(ch));
            } catch (IOException e) {
                if (server.isOpen()) {
                    LOG.warn("ferry daemon: accept failed: " + e);
                }
            }
        }
        // Closed (idle, or a rebuilt distribution): the commands under way end first, as they would in their own JVMs.
        while (active.get() > 0) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private void closeWhenIdle() {
        while (server.isOpen()) {
            try {
                Thread.sleep(Math.min(1000, Math.max(1, idleExit.toMillis() / 4)));
            } catch (InterruptedException e) {
                return;
            }
            if (active.get() == 0 && System.nanoTime() - lastActive > idleExit.toNanos()) {
                LOG.info("ferry daemon: idle for " + idleExit + ", exiting");
                closeQuietly();
            }
        }
    }

    private void serve(SocketChannel ch) {
        try (ch) {
            UserPrincipal peer = ch.getOption(jdk.net.ExtendedSocketOptions.SO_PEERCRED).user();
            if (!peer.equals(self)) {
                throw new IllegalArgumentException("a process of user " + peer.getName()
                        + " is not of the daemon's user (" + self.getName() + "): refused (SO_PEERCRED)");
            }
            DataInputStream in = new DataInputStream(new BufferedInputStream(new ThinClient.ChannelInput(ch)));
            Request r = Request.read(in);
            String declined = declined(r);
            if (declined != null) {
                ByteArrayOutputStream b = new ByteArrayOutputStream();
                DataOutputStream d = new DataOutputStream(b);
                d.writeByte(ThinClient.DECLINED);
                d.writeUTF(declined);
                ThinClient.writeFully(ch, b.toByteArray());
                return;
            }
            run(ch, in, r);
        } catch (IOException | IllegalArgumentException e) {
            LOG.warn("ferry daemon: dropping a client: " + e.getMessage());
        } finally {
            lastActive = System.nanoTime();
            active.decrementAndGet();
        }
    }

    /**
     * Why {@code r} is not served here, or null. A client of this installation whose classes changed
     * since the daemon started also stops it (it is stale); one of another installation (another
     * checkout, sharing the default socket) is only declined.
     */
    private String declined(Request r) {
        if (!r.build.equals(build)) {
            if (rebuilt(build, r.build)) {
                LOG.warn("ferry daemon: exiting: a client of build " + r.build + " came, this daemon runs " + build
                        + " (the distribution was rebuilt since it started)");
                closeQuietly();
            }
            return "this daemon runs another build (" + build + ")";
        }
        if (!Arrays.equals(r.environment, environment)) {
            return "the environment differs from the daemon's (FERRY_*, AWS_*, HADOOP_*, KRB5*, JAVA_*, PATH, HOME...)";
        }
        return ThinClient.unservable(r.args, Map.of());
    }

    /**
     * Whether build {@code other} ({@code PATH@MILLIS}) is {@code mine} rebuilt: the same classes' path, changed since.
     */
    static boolean rebuilt(String mine, String other) {
        int a = mine.lastIndexOf('@');
        int b = other.lastIndexOf('@');
        return a > 0 && b > 0 && mine.substring(0, a).equals(other.substring(0, b)) && !mine.equals(other);
    }

    private void run(SocketChannel ch, DataInputStream in, Request r) throws IOException {
        Charset cs = Charset.defaultCharset();
        ClientLine line = new ClientLine(ch); // written by a thread of its own: see ClientLine
        PrintWriter out = new PrintWriter(new OutputStreamWriter(line.stream(ThinClient.OUT), cs), true);
        PrintWriter err = new PrintWriter(new OutputStreamWriter(line.stream(ThinClient.ERR), cs), true);
        AtomicBoolean done = new AtomicBoolean();
        Thread command = Thread.currentThread();
        DaemonThreads.start("ferry-daemon-watch", () -> {
            try {
                in.read(); // the client sends nothing more: this returns when it goes away
            } catch (IOException closed) {
                // closed by us at the end, or the client's end reset
            }
            if (!done.get()) {
                LOG.warn("ferry daemon: the client of `ferry " + String.join(" ", r.args)
                        + "` went away; interrupting it");
                command.interrupt();
            }
        });
        int code;
        try {
            try (ServedLog.Sink lines = ServedLog.open(err)) {
                code = Main.run(Invocation.client(r.cwd, r.console, out, err), r.args);
            } finally {
                done.set(true);
                Thread.interrupted(); // an interrupt meant for this command must not outlive it
            }
            out.flush();
            err.flush();
            served.incrementAndGet();
            line.exit(code);
        } finally {
            line.close();
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        Files.deleteIfExists(socket);
    }

    private void closeQuietly() {
        try {
            close();
        } catch (IOException e) {
            LOG.warn("ferry daemon: closing " + socket + ": " + e);
        }
    }

    /** What a client asks: see {@code docs/formats/daemon.md}. */
    private record Request(String build, byte[] environment, Path cwd, boolean console, String[] args) {
        static Request read(DataInputStream in) throws IOException {
            int magic = in.readInt();
            if (magic != ThinClient.MAGIC) {
                throw new IllegalArgumentException("not a Ferry client (magic " + Integer.toHexString(magic) + ")");
            }
            int version = in.readUnsignedByte();
            if (version != ThinClient.VERSION) {
                throw new IllegalArgumentException("protocol version " + version + ", this daemon speaks "
                        + ThinClient.VERSION);
            }
            String build = in.readUTF();
            byte[] env = new byte[32];
            in.readFully(env);
            Path cwd = Path.of(in.readUTF());
            if (!cwd.isAbsolute()) {
                throw new IllegalArgumentException("working directory is not absolute: " + cwd);
            }
            boolean console = in.readBoolean();
            int n = in.readInt();
            if (n < 0 || n > MAX_ARGS) {
                throw new IllegalArgumentException(n + " arguments (at most " + MAX_ARGS + ")");
            }
            String[] args = new String[n];
            for (int i = 0; i < n; i++) {
                args[i] = in.readUTF();
            }
            return new Request(build, env, cwd, console, args);
        }
    }
}

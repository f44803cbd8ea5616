package io.ferry.agent;

import io.ferry.agent.protocol.Line;
import io.ferry.model.DaemonThreads;
import io.ferry.model.OwnerOnly;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.function.BiConsumer;
import java.util.function.IntFunction;

/**
 * The agent's Unix-domain socket (protocol v1, socket mode): one thread accepts, one thread
 * per rank reads its lines. A rank that breaks the protocol is logged and disconnected,
 * never crashes the agent.
 */
final class ControlServer implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(ControlServer.class);
    private final Path path;
    private final ServerSocketChannel server;
    private final IntFunction<RankProcess> ranks;
    private final BiConsumer<Integer, Line.RestartFail> restartFailed;
    private final UserPrincipal self;
    private final UserPrincipal root;

    /** @param restartFailed told when a rank says its restart data failed its own check */
    ControlServer(Path path, IntFunction<RankProcess> ranks,
            BiConsumer<Integer, Line.RestartFail> restartFailed)
            throws IOException {
        this.path = path;
        this.ranks = ranks;
        this.restartFailed = restartFailed;
        Files.deleteIfExists(path);
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(path));
        // only the owner's processes may talk to the agent (its directory is 0700 too)
        OwnerOnly.restrict(path);
        self = Files.getOwner(path);
        root = path.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("root");
        DaemonThreads.start("ferry-agent-control", this::acceptLoop);
    }

    /**
     * The control socket's file name: {@code ferry-<job>-<pid>.sock}, the job id cut to 32
     * characters and, when cut, followed by 8 hex digits of its SHA-256, so that any job id (up to
     * 128 characters) fits a Unix socket's 107-byte path in a short directory and two jobs never
     * share one.
     */
    static String socketName(String job, long pid) {
        String name = job;
        if (job.length() > 32) {
            try {
                byte[] h = MessageDigest.getInstance("SHA-256")
                        .digest(job.getBytes(StandardCharsets.UTF_8));
                name = job.substring(0, 32) + "-" + HexFormat.of().formatHex(h, 0, 4);
            } catch (NoSuchAlgorithmException e) {
                throw new AssertionError(e);
            }
        }
        return "ferry-" + name + "-" + pid + ".sock";
    }

    Path path() {
        return path;
    }

    private void acceptLoop() {
        while (server.isOpen()) {
            try {
                SocketChannel ch = server.accept();
                DaemonThreads.start("ferry-agent-rank-conn", () -> serve(ch));
            } catch (IOException e) {
                if (server.isOpen()) {
                    LOG.warn("ferry agent: accept failed: " + e);
                }
            }
        }
    }

    private void serve(SocketChannel ch) {
        try (ch; BufferedReader in = new BufferedReader(new InputStreamReader(Channels.newInputStream(ch),
                StandardCharsets.US_ASCII))) {
            checkPeer(ch);
            Line first = Line.parse(Line.read(in));
            if (!(first instanceof Line.Hello hello) || ranks.apply(hello.rank()) == null) {
                throw new IllegalArgumentException("first line must be HELLO <rank> of a rank of this job, got "
                        + first);
            }
            RankProcess rank = ranks.apply(hello.rank());
            if (!rank.attach(ch)) {
                throw new IllegalArgumentException("rank " + hello.rank() + " is connected already: a second HELLO "
                        + hello.rank() + " cannot take its channel over");
            }
            String text;
            while ((text = Line.read(in)) != null) {
                Line l = Line.parse(text);
                if (l instanceof Line.Done || l instanceof Line.Fail) {
                    rank.answer(l);
                } else if (l instanceof Line.RestartFail f) {
                    restartFailed.accept(hello.rank(), f);
                } else {
                    throw new IllegalArgumentException("unexpected line from rank " + hello.rank() + ": " + text);
                }
            }
        } catch (IOException | IllegalArgumentException e) {
            LOG.warn("ferry agent: dropping a rank connection: " + e.getMessage());
        }
    }

    /**
     * The peer's credentials (SO_PEERCRED, from the kernel, not from anything the peer says):
     * only processes of the agent's own user, or root, may talk to it. The socket is 0600 in a
     * 0700 directory already; this holds where a site loosens those modes.
     */
    private void checkPeer(SocketChannel ch) throws IOException {
        UserPrincipal peer = ch.getOption(jdk.net.ExtendedSocketOptions.SO_PEERCRED).user();
        // Principals compare by uid. The socket is the agent's own (created by it): its owner is the agent's user.
        if (!peer.equals(self) && !peer.equals(root)) {
            throw new IllegalArgumentException("a process of user " + peer.getName() + " is not of the agent's user ("
                    + self.getName() + "): refused (SO_PEERCRED)");
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        Files.deleteIfExists(path);
    }
}

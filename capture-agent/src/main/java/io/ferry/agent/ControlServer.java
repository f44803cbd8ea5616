package io.ferry.agent;

import io.ferry.agent.protocol.Line;

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
import java.util.function.IntFunction;

/**
 * The agent's Unix-domain socket (protocol v1, socket mode): one thread accepts, one thread
 * per rank reads its lines. A rank that breaks the protocol is logged and disconnected,
 * never crashes the agent.
 */
final class ControlServer implements Closeable {
    private final Path path;
    private final ServerSocketChannel server;
    private final IntFunction<RankProcess> ranks;
    private final java.util.function.BiConsumer<Integer, Line.RestartFail> restartFailed;

    /** @param restartFailed told when a rank says its restart data failed its own check */
    ControlServer(Path path, IntFunction<RankProcess> ranks, java.util.function.BiConsumer<Integer, Line.RestartFail> restartFailed)
            throws IOException {
        this.path = path;
        this.ranks = ranks;
        this.restartFailed = restartFailed;
        Files.deleteIfExists(path);
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(path));
        io.ferry.model.OwnerOnly.restrict(path); // only the owner's processes may talk to the agent (its directory is 0700 too)
        Thread t = new Thread(this::acceptLoop, "ferry-agent-control");
        t.setDaemon(true);
        t.start();
    }

    Path path() {
        return path;
    }

    private void acceptLoop() {
        while (server.isOpen()) {
            try {
                SocketChannel ch = server.accept();
                Thread t = new Thread(() -> serve(ch), "ferry-agent-rank-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                if (server.isOpen()) {
                    System.err.println("ferry agent: accept failed: " + e);
                }
            }
        }
    }

    private void serve(SocketChannel ch) {
        try (ch; BufferedReader in = new BufferedReader(new InputStreamReader(Channels.newInputStream(ch),
                StandardCharsets.US_ASCII))) {
            Line first = Line.parse(in.readLine());
            if (!(first instanceof Line.Hello hello) || ranks.apply(hello.rank()) == null) {
                throw new IllegalArgumentException("first line must be HELLO <rank> of a rank of this job, got " + first);
            }
            RankProcess rank = ranks.apply(hello.rank());
            rank.attach(ch);
            String text;
            while ((text = in.readLine()) != null) {
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
            System.err.println("ferry agent: dropping a rank connection: " + e.getMessage());
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        Files.deleteIfExists(path);
    }
}

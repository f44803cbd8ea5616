package io.ferry.eventlog;

import io.ferry.model.OwnerOnly;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Free loopback ports for an embedded broker's listeners, claimed among this user's Ferry
 * processes on the host from when they are picked until the broker has bound them. The kernel
 * hands out a port for {@code bind(0)} that is free only until someone binds it, and a broker
 * learns its listeners' ports before it binds them: two brokers starting at once (two
 * coordinators on one host, tests in two JVMs) could pick the same controller port, and the
 * second then logged in to the first's controller and failed its registration a minute later
 * ("invalid credentials"). A claim is a lock on {@code ports/PORT.lock} in the user's runtime
 * directory ({@code /tmp/ferry-UID}, whatever XDG_RUNTIME_DIR says, so that every process of the
 * user meets the same files); the OS drops it if the process dies. Not thread-safe.
 */
final class PortClaims implements Closeable {
    private static final int ATTEMPTS = 64;
    private final List<FileChannel> held = new ArrayList<>();
    private final List<Path> files = new ArrayList<>();
    private final Set<Integer> avoided = new HashSet<>();
    private final PortSource source;

    /** Where candidate ports come from: the kernel's {@code bind(0)}, or a test's chosen sequence. */
    interface PortSource {
        int next() throws IOException;
    }

    PortClaims() {
        this(PortClaims::freeLoopbackPort);
    }

    PortClaims(PortSource source) {
        this.source = source;
    }

    private static int freeLoopbackPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /**
     * Never hands out {@code port}: one the broker was told to listen on, free until it binds it. A
     * controller port drawn by {@code bind(0)} was once that very port, and the broker refused to start
     * with two listeners on one port.
     */
    void avoid(int port) {
        avoided.add(port);
    }

    /** A loopback port free now that no other process of this user has claimed, and not one to avoid. */
    int claim() throws IOException {
        Path dir = OwnerOnly.createDirectories(OwnerOnly.privateRuntimeDir(Map.of()).resolve("ports"));
        for (int i = 0; i < ATTEMPTS; i++) {
            int port = source.next();
            if (avoided.contains(port)) {
                continue;
            }
            Path file = dir.resolve(port + ".lock");
            FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = ch.tryLock();
            } catch (OverlappingFileLockException thisJvm) {
                lock = null; // another broker of this process is starting on it
            }
            if (lock != null) {
                held.add(ch);
                files.add(file);
                return port;
            }
            ch.close();
        }
        throw new IOException("no free loopback port could be claimed in " + ATTEMPTS + " attempts (" + dir + ")");
    }

    /**
     * Lets go of every claim, once the broker has bound its ports (or failed to start): the
     * kernel never hands out a bound port, so the claim is needed no longer.
     */
    @Override
    public void close() {
        for (int i = 0; i < held.size(); i++) {
            try {
                Files.deleteIfExists(files.get(i));
                held.get(i).close();
            } catch (IOException ignored) {
                // a lock file left behind is taken again by the next claim of its port
            }
        }
        held.clear();
        files.clear();
    }
}

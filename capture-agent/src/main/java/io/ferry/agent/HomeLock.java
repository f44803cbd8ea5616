package io.ferry.agent;

import io.ferry.model.OwnerOnly;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One agent per home: an exclusive lock on {@code <home>/run/agent.lock}, held for the agent's
 * life, with its pid written inside. Two agents on one home would both sweep, stage from and
 * restore into one cache, and answer each other's ranks in one spool; the second is refused,
 * naming the first. The lock is the kernel's ({@code fcntl}), so it goes with the process that
 * holds it, however that process ends: a killed agent never leaves its home locked.
 */
final class HomeLock implements Closeable {
    /**
     * The run directories whose lock this JVM holds. Asked first, before any channel is opened on
     * one of them: closing any channel of a file drops every lock this process holds on it (POSIX
     * record locks belong to the process), so a probe from this JVM would free its own agent's home.
     */
    private static final Set<Path> HELD_HERE = ConcurrentHashMap.newKeySet();
    private final FileChannel channel;
    private final FileLock lock;
    private final Path run;

    private HomeLock(FileChannel channel, FileLock lock, Path run) {
        this.channel = channel;
        this.lock = lock;
        this.run = run;
    }

    /** Takes the home, or throws {@link IllegalStateException} naming the agent that holds it. */
    static HomeLock take(Path home) throws IOException {
        Path run = OwnerOnly.createDirectories(home.toAbsolutePath().resolve("run")).toRealPath();
        Path file = run.resolve("agent.lock");
        FileLock lock = null;
        FileChannel ch = null;
        if (!HELD_HERE.contains(run)) {
            ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
            lock = ch.tryLock();
        }
        if (lock == null) {
            String holder = Files.readString(file, StandardCharsets.US_ASCII).trim();
            if (ch != null) {
                ch.close(); // this JVM holds no lock on it (HELD_HERE): closing frees nobody's
            }
            throw new IllegalStateException("another ferry agent" + (holder.isEmpty() ? "" : " (pid " + holder + ")")
                    + " serves the home " + home.toAbsolutePath() + ": one agent per home (and per node name); stop it,"
                    + " or give this one a --home of its own");
        }
        OwnerOnly.restrict(file);
        ch.truncate(0);
        ch.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
        ch.force(false);
        HELD_HERE.add(run);
        return new HomeLock(ch, lock, run);
    }

    /**
     * Whether a live agent holds the lock of the run directory {@code run} (its {@code agent.lock}):
     * the kernel's word, which a reused pid cannot fool. False where there is no lock file.
     */
    static boolean held(Path run) throws IOException {
        Path real = run.toRealPath();
        if (HELD_HERE.contains(real)) {
            return true;
        }
        Path file = real.resolve("agent.lock");
        if (!Files.isRegularFile(file)) {
            return false;
        }
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            FileLock probe = ch.tryLock();
            if (probe == null) {
                return true;
            }
            probe.release();
            return false;
        }
    }

    @Override
    public void close() throws IOException {
        try {
            lock.release();
        } finally {
            channel.close();
            HELD_HERE.remove(run);
        }
    }
}

package io.ferry.agent;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One agent per home: an exclusive lock on {@code <home>/run/agent.lock}, held for the agent's
 * life, with its pid written inside. Two agents on one home would both sweep, stage from and
 * restore into one cache, and answer each other's ranks in one spool; the second is refused,
 * naming the first. The lock is the kernel's ({@code fcntl}), so it goes with the process that
 * holds it, however that process ends: a killed agent never leaves its home locked.
 */
final class HomeLock implements Closeable {
    private final FileChannel channel;
    private final FileLock lock;

    private HomeLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** Takes the home, or throws {@link IllegalStateException} naming the agent that holds it. */
    static HomeLock take(Path home) throws IOException {
        Path run = io.ferry.model.OwnerOnly.createDirectories(home.toAbsolutePath().resolve("run"));
        Path file = run.resolve("agent.lock");
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = ch.tryLock();
        } catch (OverlappingFileLockException inThisProcess) {
            lock = null;
        }
        if (lock == null) {
            String holder = Files.readString(file, StandardCharsets.US_ASCII).trim();
            ch.close();
            throw new IllegalStateException("another ferry agent" + (holder.isEmpty() ? "" : " (pid " + holder + ")")
                    + " serves the home " + home.toAbsolutePath() + ": one agent per home (and per node name); stop it,"
                    + " or give this one a --home of its own");
        }
        io.ferry.model.OwnerOnly.restrict(file);
        ch.truncate(0);
        ch.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
        ch.force(false);
        return new HomeLock(ch, lock);
    }

    @Override
    public void close() throws IOException {
        try {
            lock.release();
        } finally {
            channel.close();
        }
    }
}

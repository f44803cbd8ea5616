package io.ferry.agent.capture;

import com.sun.jna.LastErrorException;
import io.ferry.agent.capture.internal.Libc;
import io.ferry.model.DaemonThreads;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A process a restorer brought back as a child of this JVM that the JVM did not start
 * ({@code criu restore --restore-sibling}), as a {@link Process}: its exit code comes from
 * reaping it with {@code waitpid} on a thread of its own (the JDK reaps only the processes it
 * started, and an unreaped zombie would keep the pid a later restore of the same rank needs).
 * Its output is read from pipes the caller made for it. Thread-safe.
 */
final class RestoredProcess extends Process {
    private final long pid;
    private final ProcessHandle handle;
    private final InputStream out;
    private final InputStream err;
    private final CompletableFuture<Integer> exit = new CompletableFuture<>();

    RestoredProcess(long pid, InputStream out, InputStream err) throws IOException {
        this.pid = pid;
        this.handle = ProcessHandle.of(pid).orElseThrow(() -> new IOException("restored process " + pid
                + " is gone already"));
        this.out = out;
        this.err = err;
        DaemonThreads.start("ferry-reap-" + pid, this::reap);
    }

    private void reap() {
        int[] status = new int[1];
        while (true) {
            try {
                Libc.waitpid((int) pid, status, 0);
                int s = status[0];
                // As the JDK reports its children: the exit code, or 128 + the signal that ended it.
                exit.complete((s & 0x7f) == 0 ? (s >> 8) & 0xff : 128 + (s & 0x7f));
                return;
            } catch (LastErrorException e) {
                if (e.getErrorCode() == Libc.EINTR) {
                    continue;
                }
                // Not this JVM's child after all (ECHILD): its end is seen, not its code, and an end
                // whose code is unknown is counted as a failure, so the job recovers rather than
                // ending "OK" on a rank that may have crashed.
                handle.onExit().join();
                exit.complete(1);
                return;
            }
        }
    }

    @Override
    public OutputStream getOutputStream() {
        return OutputStream.nullOutputStream(); // a restored rank reads /dev/null
    }

    @Override
    public InputStream getInputStream() {
        return out;
    }

    @Override
    public InputStream getErrorStream() {
        return err;
    }

    @Override
    public int waitFor() throws InterruptedException {
        try {
            return exit.get();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    @Override
    public boolean waitFor(long timeout, TimeUnit unit) throws InterruptedException {
        try {
            exit.get(timeout, unit);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    @Override
    public int exitValue() {
        if (!exit.isDone()) {
            throw new IllegalThreadStateException("restored process " + pid + " has not exited");
        }
        return exit.join();
    }

    @Override
    public void destroy() {
        handle.destroy();
    }

    @Override
    public Process destroyForcibly() {
        handle.destroyForcibly();
        return this;
    }

    @Override
    public boolean supportsNormalTermination() {
        return true;
    }

    @Override
    public boolean isAlive() {
        return !exit.isDone();
    }

    @Override
    public long pid() {
        return pid;
    }

    @Override
    public ProcessHandle toHandle() {
        return handle;
    }

    @Override
    public CompletableFuture<Process> onExit() {
        return exit.thenApply(code -> this);
    }
}

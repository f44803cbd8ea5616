package io.ferry.agent.capture.internal;

import com.sun.jna.LastErrorException;
import io.ferry.agent.capture.ProcessGoneException;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Freezes a process with SIGSTOP, its whole process group unless that group holds Ferry
 * itself, and waits until every thread of every frozen process is seen stopped in
 * {@code /proc}. {@link #close()} thaws with SIGCONT exactly the processes that were running
 * before, so a process a user had stopped (Ctrl-Z, a debugger) stays stopped. Single use,
 * not thread-safe.
 */
public final class Freezer implements AutoCloseable {
    private final int pid;
    private final List<Integer> members;
    private final List<Integer> wereRunning = new ArrayList<>();
    private final boolean wholeGroup;
    private boolean thawed;
    private long stoppedAt;
    private long thawedAt;

    private Freezer(int pid, List<Integer> members, boolean wholeGroup) {
        this.pid = pid;
        this.members = List.copyOf(members);
        this.wholeGroup = wholeGroup;
    }

    /** Stops {@code pid} (and its group where safe) and returns once all their threads are stopped. */
    public static Freezer freeze(int pid, Duration patience) throws IOException {
        int self = (int) ProcessHandle.current().pid();
        int pgid;
        try {
            pgid = Libc.getpgid(pid);
        } catch (LastErrorException e) {
            throw Errors.of(e, pid, "find the process group of");
        }
        boolean group = pgid != Libc.getpgid(self);
        Freezer f = new Freezer(pid, group ? ProcFs.groupMembers(pgid) : List.of(pid), group);
        if (!f.members.contains(pid)) {
            throw new ProcessGoneException(pid);
        }
        for (int m : f.members) {
            try {
                if (!ProcFs.stat(m).halted()) {
                    f.wereRunning.add(m);
                }
            } catch (NoSuchFileException gone) {
                // exits before we stop it: nothing to thaw
            }
        }
        f.stoppedAt = System.nanoTime();
        try {
            if (group) {
                Libc.kill(-pgid, Libc.SIGSTOP);
            } else {
                Libc.kill(pid, Libc.SIGSTOP);
            }
        } catch (LastErrorException e) {
            throw Errors.of(e, pid, "stop");
        }
        try {
            f.awaitStopped(patience);
        } catch (IOException | RuntimeException e) {
            f.close();
            throw e;
        }
        return f;
    }

    private void awaitStopped(Duration patience) throws IOException {
        long deadline = System.nanoTime() + patience.toNanos();
        List<Integer> running = new ArrayList<>(members);
        while (true) {
            running.removeIf(this::allThreadsHalted);
            if (running.isEmpty()) {
                break;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("process " + running.get(0) + " did not stop within " + patience.toMillis()
                        + " ms (a thread blocked in the kernel, state D?); it was let go again");
            }
            LockSupport.parkNanos(20_000);
        }
        if (!ProcFs.dir(pid).toFile().exists()) {
            throw new ProcessGoneException(pid);
        }
    }

    private boolean allThreadsHalted(int p) {
        try {
            for (int tid : ProcFs.threads(p)) {
                if (!ProcFs.taskStat(p, tid).halted()) {
                    return false;
                }
            }
            return true;
        } catch (NoSuchFileException gone) {
            return true; // a thread or the process exited: it runs no more
        } catch (IOException e) {
            return false;
        }
    }

    /** The frozen processes, the target first. */
    public List<Integer> members() {
        List<Integer> out = new ArrayList<>();
        out.add(pid);
        members.stream().filter(m -> m != pid).forEach(out::add);
        return out;
    }

    /** True when the whole process group was frozen, false when only the process was. */
    public boolean wholeGroup() {
        return wholeGroup;
    }

    /** Sends SIGCONT to each process that was running before the freeze. Idempotent. */
    @Override
    public void close() {
        if (thawed) {
            return;
        }
        thawed = true;
        for (int m : wereRunning) {
            try {
                Libc.kill(m, Libc.SIGCONT);
            } catch (LastErrorException gone) {
                // exited while frozen (killed): nothing to resume
            }
        }
        thawedAt = System.nanoTime();
    }

    /** SIGSTOP to the last SIGCONT: how long the application stood still. Call after {@link #close}. */
    public java.time.Duration stall() {
        return java.time.Duration.ofNanos(thawedAt - stoppedAt);
    }
}

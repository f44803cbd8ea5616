package io.ferry.agent.capture.internal;

import com.sun.jna.LastErrorException;
import io.ferry.agent.capture.ProcessGoneException;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;

/**
 * Freezes a process with SIGSTOP, its whole process group unless that group holds Ferry
 * itself, and waits until every thread of every process in it is seen stopped in
 * {@code /proc}. The group's members are listed again after the stop, until the list holds
 * still: a process forked between the first listing and the SIGSTOP (a shell starting a
 * command) is stopped too and must be captured and thawed like the others. {@link #close()}
 * thaws with SIGCONT every member except those already stopped before the freeze, so a
 * process a user had stopped (Ctrl-Z, a debugger) stays stopped. Single use, not thread-safe.
 */
public final class Freezer implements AutoCloseable {
    private final int pid;
    private final int pgid;
    private final boolean wholeGroup;
    /** Members seen stopped before our SIGSTOP: not ours to resume. */
    private final Set<Integer> stoppedBefore = new HashSet<>();
    private List<Integer> members;
    private boolean thawed;
    /** True once the member list held still after the stop. */
    private boolean settled;
    private long stoppedAt;
    private long thawedAt;

    private Freezer(int pid, int pgid, boolean wholeGroup) {
        this.pid = pid;
        this.pgid = pgid;
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
        Freezer f = new Freezer(pid, pgid, group);
        List<Integer> before = f.listMembers();
        if (!before.contains(pid)) {
            throw new ProcessGoneException(pid);
        }
        for (int m : before) {
            try {
                if (ProcFs.stat(m).halted()) {
                    f.stoppedBefore.add(m);
                }
            } catch (IOException e) {
                if (!ProcFs.gone(e)) {
                    throw e;
                }
                // exits before we stop it: nothing to thaw
            }
        }
        f.members = before;
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

    private List<Integer> listMembers() throws IOException {
        return wholeGroup ? ProcFs.groupMembers(pgid) : List.of(pid);
    }

    /** Until every member's threads are stopped and listing the group again finds no one new. */
    private void awaitStopped(Duration patience) throws IOException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (true) {
            List<Integer> running = new ArrayList<>(members);
            running.removeIf(this::allThreadsHalted);
            if (running.isEmpty()) {
                List<Integer> now = listMembers();
                if (members.containsAll(now)) {
                    settled = true;
                    break;
                }
                members = now; // forked just before the SIGSTOP: stopped as well, wait for it too
                continue;
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
        } catch (IOException e) {
            return ProcFs.gone(e); // a thread or the process exited: it runs no more
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

    /** Sends SIGCONT to every member but those stopped before the freeze. Idempotent. */
    @Override
    public void close() {
        if (thawed) {
            return;
        }
        thawed = true;
        if (!settled) { // failed while waiting: someone forked just before the stop may be missing from the list
            try {
                List<Integer> all = new ArrayList<>(members);
                listMembers().stream().filter(m -> !all.contains(m)).forEach(all::add);
                members = all;
            } catch (IOException e) {
                // keep the list we have
            }
        }
        for (int m : members) {
            if (stoppedBefore.contains(m)) {
                continue;
            }
            try {
                Libc.kill(m, Libc.SIGCONT);
            } catch (LastErrorException gone) {
                // exited while frozen (killed): nothing to resume
            }
        }
        thawedAt = System.nanoTime();
    }

    /** SIGSTOP to the last SIGCONT: how long the application stood still. Call after {@link #close}. */
    public Duration stall() {
        return Duration.ofNanos(thawedAt - stoppedAt);
    }
}

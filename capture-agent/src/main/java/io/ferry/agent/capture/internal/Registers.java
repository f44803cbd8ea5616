package io.ferry.agent.capture.internal;

import com.sun.jna.LastErrorException;
import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reads each thread's registers of a frozen process with ptrace: {@code PTRACE_SEIZE} (which
 * sends no signal, and on a stopped thread returns only once it sits in a trace stop), then
 * {@code PTRACE_GETREGSET} for the general and the floating-point registers, then
 * {@code PTRACE_DETACH}, after which the thread is back in its group stop. The kernel ties a
 * trace to the thread that attached, so every ptrace call of one {@link #read} runs on the
 * calling thread, inside that one call. x86_64 only.
 *
 * <p>The process must not be a child of this JVM: Java's process reaper waits on its
 * children and would take a trace stop for an exit. Ferry launches ranks it will capture
 * with {@code setsid -f}, which makes them grandchildren.
 */
public final class Registers {
    /** {@code sizeof(struct user_regs_struct)} on x86_64: 27 registers of 8 bytes. */
    public static final int GENERAL_BYTES = 27 * 8;
    /** {@code sizeof(struct user_fpregs_struct)} on x86_64 (the FXSAVE area). */
    public static final int FP_BYTES = 512;
    static final int NT_PRSTATUS = 1;
    static final int NT_PRFPREG = 2;

    /** One thread's registers in the kernel's layout; {@code fp} is null if unreadable. */
    public record Thread(int tid, byte[] general, byte[] fp) {}

    private Registers() {
    }

    public static void requireSupported() {
        String arch = System.getProperty("os.arch");
        if (!"amd64".equals(arch) && !"x86_64".equals(arch)) {
            throw new UnsupportedOperationException("proc capture writes x86_64 core files; this machine is " + arch);
        }
        if (!System.getProperty("os.name").toLowerCase(Locale.ROOT).contains("linux")) {
            throw new UnsupportedOperationException("proc capture needs Linux (/proc, ptrace, process_vm_readv)");
        }
    }

    /** Registers of every thread in {@code tids} (tid order kept); all threads detached on return. */
    public static List<Thread> read(int pid, List<Integer> tids) throws IOException {
        if (ProcFs.stat(pid).ppid() == ProcessHandle.current().pid()) {
            throw new IOException("process " + pid + " is a child of this Ferry process; Java's reaper would take its "
                    + "trace stops for an exit: start it under `setsid -f` (ferry run does)");
        }
        Map<Integer, Thread> out = new LinkedHashMap<>();
        List<Integer> seized = new ArrayList<>();
        try (Memory iov = new Memory(16); Memory buf = new Memory(Math.max(GENERAL_BYTES, FP_BYTES))) {
            for (int tid : tids) {
                try {
                    Libc.ptrace(Libc.PTRACE_SEIZE, tid, Pointer.NULL, Pointer.NULL);
                } catch (LastErrorException e) {
                    if (e.getErrorCode() == Libc.ESRCH && tid != pid) {
                        continue; // a thread that exited while frozen (it was already exiting)
                    }
                    throw Errors.of(e, pid, "trace");
                }
                seized.add(tid);
                byte[] general = regset(tid, NT_PRSTATUS, GENERAL_BYTES, iov, buf);
                if (general == null) {
                    throw new IOException("cannot read the registers of thread " + tid + " of process " + pid);
                }
                out.put(tid, new Thread(tid, general, regset(tid, NT_PRFPREG, FP_BYTES, iov, buf)));
            }
        } finally {
            for (int tid : seized) {
                try {
                    Libc.ptrace(Libc.PTRACE_DETACH, tid, Pointer.NULL, Pointer.NULL);
                } catch (LastErrorException gone) {
                    // the thread died while traced (SIGKILL): nothing to let go
                }
            }
        }
        return List.copyOf(out.values());
    }

    private static byte[] regset(int tid, int type, int size, Memory iov, Memory buf) {
        iov.setPointer(0, buf);
        iov.setLong(8, size);
        try {
            Libc.ptrace(Libc.PTRACE_GETREGSET, tid, new Pointer(type), iov);
        } catch (LastErrorException e) {
            return null;
        }
        int got = (int) iov.getLong(8);
        return got == size ? buf.getByteArray(0, size) : null;
    }
}

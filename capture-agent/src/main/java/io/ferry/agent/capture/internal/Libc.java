package io.ferry.agent.capture.internal;

import com.sun.jna.LastErrorException;
import com.sun.jna.Native;
import com.sun.jna.Pointer;

/**
 * The few libc calls {@code proc} capture needs, bound with JNA direct mapping. Every call
 * throws {@link LastErrorException} carrying errno when it fails. Linux only.
 *
 * <p>{@code ptrace} is variadic in glibc; binding it with four fixed arguments is sound on
 * x86_64 and aarch64, where variadic integer arguments travel in the same registers.
 */
public final class Libc {
    public static final int SIGCONT = 18;
    public static final int SIGSTOP = 19;
    public static final int EPERM = 1;
    public static final int ESRCH = 3;
    public static final int EFAULT = 14;
    public static final int EIO = 5;

    public static final long PTRACE_DETACH = 17;
    public static final long PTRACE_GETREGSET = 0x4204;
    public static final long PTRACE_SEIZE = 0x4206;

    static {
        Native.register("c");
    }

    private Libc() {
    }

    public static native int kill(int pid, int sig) throws LastErrorException;

    public static native int getpgid(int pid) throws LastErrorException;

    public static final int ECHILD = 10;
    public static final int EINTR = 4;
    public static final int O_CLOEXEC = 02000000;

    /** waitpid(2): the status word of a child that ended, into {@code status[0]}. */
    public static native int waitpid(int pid, int[] status, int options) throws LastErrorException;

    /** pipe2(2): {@code fds[0]} the read end, {@code fds[1]} the write end. */
    public static native int pipe2(int[] fds, int flags) throws LastErrorException;

    public static native int close(int fd) throws LastErrorException;

    public static native long ptrace(long request, int pid, Pointer addr, Pointer data) throws LastErrorException;

    public static native long process_vm_readv(int pid, Pointer local, long liovcnt, Pointer remote, long riovcnt,
                                               long flags) throws LastErrorException;

    /** errno as its C name, for messages a user can search for. */
    public static String errnoName(int errno) {
        return switch (errno) {
            case EPERM -> "EPERM";
            case ESRCH -> "ESRCH";
            case EIO -> "EIO";
            case EFAULT -> "EFAULT";
            case 13 -> "EACCES";
            case 22 -> "EINVAL";
            default -> "errno " + errno;
        };
    }
}

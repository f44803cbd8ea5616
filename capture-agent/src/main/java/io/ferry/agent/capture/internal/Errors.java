package io.ferry.agent.capture.internal;

import com.sun.jna.LastErrorException;
import io.ferry.agent.capture.ProcessGoneException;

import java.io.IOException;

/** Turns an errno from a capture call into a message that says what to do about it. */
final class Errors {
    private Errors() {
    }

    static IOException of(LastErrorException e, int pid, String action) {
        return switch (e.getErrorCode()) {
            case Libc.ESRCH -> new ProcessGoneException(pid);
            case Libc.EPERM -> new IOException("permission denied to " + action + " process " + pid
                    + ": capture it as its owner or as root (CAP_SYS_PTRACE and CAP_KILL)");
            default -> new IOException("cannot " + action + " process " + pid + ": "
                    + Libc.errnoName(e.getErrorCode()), e);
        };
    }
}

package io.ferry.agent;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One agent per home: a second is refused, naming the first, and a home is free again once its agent is gone. */
class HomeLockTest {
    @TempDir
    Path tmp;

    @Test
    void aSecondAgentOnOneHomeIsRefusedInThisProcess() throws Exception {
        try (HomeLock first = HomeLock.take(tmp)) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> HomeLock.take(tmp));
            assertTrue(e.getMessage()
                    .contains("another ferry agent (pid " + ProcessHandle.current().pid() + ") serves the home"),
                    e.getMessage());
        }
        HomeLock.take(tmp).close(); // released: free again
    }

    /**
     * Asking whether a home is held (as an agent does before it takes the ranks' link) frees
     * nothing: POSIX record locks belong to the process, and a probe that opened and closed the
     * lock file in the holder's own JVM would drop the holder's lock for every other process.
     */
    @Test
    void askingWhetherAHomeIsHeldFreesNothing() throws Exception {
        Path run = tmp.resolve("run");
        try (HomeLock mine = HomeLock.take(tmp)) {
            assertTrue(HomeLock.held(run));
            assertTrue(HomeLock.held(run), "asked twice");
            assertEquals(1, lockElsewhere(run.resolve("agent.lock")), "another process still finds it locked");
        }
        assertFalse(HomeLock.held(run), "its agent gone");
        assertEquals(0, lockElsewhere(run.resolve("agent.lock")));
    }

    /** Exit status of another process's non-blocking lock of {@code file}: 0 taken, 1 held by someone. */
    private static int lockElsewhere(Path file) throws Exception {
        return new ProcessBuilder("python3", "-c", String.join("\n",
                "import fcntl, sys",
                "f = open(sys.argv[1], 'a+')",
                "try:",
                "    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)",
                "except OSError:",
                "    sys.exit(1)"), file.toString()).inheritIO().start().waitFor();
    }

    /**
     * Another process holds the home (a fcntl lock, as an agent's JVM takes it): refused with that
     * process's pid as the lock file names it; once that process is killed, the home is free.
     */
    @Test
    void anAgentOfAnotherProcessHoldsTheHomeUntilItDies() throws Exception {
        Path lock = Files.createDirectories(tmp.resolve("run")).resolve("agent.lock");
        Process other = new ProcessBuilder("python3", "-c", String.join("\n",
                "import fcntl, os, sys, time",
                "f = open(sys.argv[1], 'a+')",
                "fcntl.lockf(f, fcntl.LOCK_EX)",
                "f.truncate(0); f.write('%d\\n' % os.getpid()); f.flush()",
                "print('locked', flush=True)",
                "time.sleep(600)"), lock.toString()).start();
        try {
            assertEquals("locked", new BufferedReader(new InputStreamReader(other.getInputStream())).readLine());
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> HomeLock.take(tmp));
            assertTrue(e.getMessage().contains("(pid " + other.pid() + ")"), e.getMessage());
            assertTrue(HomeLock.held(tmp.resolve("run")));
        } finally {
            other.destroyForcibly();
            other.waitFor();
        }
        assertFalse(HomeLock.held(tmp.resolve("run")), "the kernel let go with the process");
        try (HomeLock mine = HomeLock.take(tmp)) { // the kernel let go with the process: no stale lock
            assertEquals(Long.toString(ProcessHandle.current().pid()), Files.readString(lock).trim());
        }
    }
}

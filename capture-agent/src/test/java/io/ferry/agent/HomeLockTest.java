package io.ferry.agent;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
            assertTrue(e.getMessage().contains("another ferry agent (pid " + ProcessHandle.current().pid() + ") serves the home"),
                    e.getMessage());
        }
        HomeLock.take(tmp).close(); // released: free again
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
        } finally {
            other.destroyForcibly();
            other.waitFor();
        }
        try (HomeLock mine = HomeLock.take(tmp)) { // the kernel let go with the process: no stale lock
            assertEquals(Long.toString(ProcessHandle.current().pid()), Files.readString(lock).trim());
        }
    }
}

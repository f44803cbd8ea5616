package io.ferry.agent.capture.internal;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link ProcFs} against the real {@code /proc}, with real child processes. */
class ProcFsTest {
    @Test
    void aProcessThatExitsBetweenTheOpenAndTheReadOfItsStatIsGone() throws Exception {
        Process child = new ProcessBuilder("sleep", "60").start();
        // Open its stat while it lives, then let it exit and be reaped: the read fails with ESRCH, not as a missing
        // file. Seen in CI: a process of the node exited while a capture listed a process group's members.
        try (FileChannel stat = FileChannel.open(Path.of("/proc/" + child.pid() + "/stat"), StandardOpenOption.READ)) {
            child.destroyForcibly();
            assertTrue(child.waitFor(30, TimeUnit.SECONDS));
            IOException e = assertThrows(IOException.class, () -> stat.read(ByteBuffer.allocate(4096)));
            assertTrue(ProcFs.gone(e), e.toString());
        }
        IOException opened = assertThrows(IOException.class, () -> ProcFs.stat((int) child.pid()));
        assertTrue(ProcFs.gone(opened), opened.toString());
    }

    @Test
    void otherFailuresAreNotTakenForAnExit() {
        assertTrue(!ProcFs.gone(new IOException("Permission denied")));
        assertTrue(!ProcFs.gone(new AccessDeniedException("/proc/1/mem")));
    }

    @Test
    void theMembersOfAGroupAreListedWhileProcessesOfTheNodeComeAndGo() throws Exception {
        // Short-lived processes beside the listing: none of their exits may fail it.
        Process churn = new ProcessBuilder("bash", "-c", "for i in $(seq 300); do /bin/true; done").start();
        int self = (int) ProcessHandle.current().pid();
        int pgid = ProcFs.stat(self).pgrp();
        while (churn.isAlive()) {
            assertTrue(ProcFs.groupMembers(pgid).contains(self));
        }
        assertTrue(churn.waitFor(30, TimeUnit.SECONDS));
    }
}

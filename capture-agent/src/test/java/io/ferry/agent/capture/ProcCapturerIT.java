package io.ferry.agent.capture;

import io.ferry.staging.Progress;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** proc capture of real C processes (gcc-built {@code victim.c}), read back byte by byte and by gdb. */
class ProcCapturerIT {
    private static final int NT_PRSTATUS = 1;
    private static final int NT_FILE = 0x46494c45;
    @TempDir
    Path tmp;
    final ProcCapturer proc = new ProcCapturer();

    @BeforeAll
    static void compile() throws Exception {
        assumeTrue(new ProcCapturer().unavailable().isEmpty(), () -> "proc capture unavailable: "
                + new ProcCapturer().unavailable().orElse(""));
        Victim.binary();
    }

    @Test
    void knownValuesComeBackFromTheCoreAndTheProcessGoesOn() throws Exception {
        try (Victim v = new Victim(64, 0, false)) {
            ProcCapturer.Result r = proc.dump(v.pid, tmp.resolve("img"), Progress.NONE);
            assertEquals(List.of(v.pid), r.pids());
            assertTrue(r.wholeGroup(), "the victim leads its own group, so the group is frozen");
            assertTrue(r.stall().toNanos() > 0);
            Path core = tmp.resolve("img").resolve("core." + v.pid);
            try (CoreFile c = new CoreFile(core)) {
                long marker = v.addresses.get("marker");
                assertEquals(0x314b4d5952524546L, c.u64(marker));
                assertEquals(0xfeedfacecafebeefL, c.u64(marker + 16));
                long big = v.addresses.get("big");
                assertEquals(big, c.u64(marker + 24));
                for (long i : new long[] {0, 1, 12345, (32L << 20) / 8 - 1}) {
                    assertEquals(i * 0x9E3779B97F4A7C15L + 1, c.u64(big + 8 * i), "pattern word " + i);
                }
                assertEquals(0, c.u64(big + (32L << 20) + 4096 * 7), "the zeroed half reads back as zeros");
                String files = new String(c.notes(NT_FILE).get(0).desc(), StandardCharsets.UTF_8);
                assertTrue(files.contains(Victim.binary().toString()), "NT_FILE names the executable");
                assertEquals(r.threads(), c.notes(NT_PRSTATUS).size());
            }
            assertTrue(r.zeroBytes() >= 32L << 20, "the zeroed 32 MiB are holes, not writes: " + r.zeroBytes());
            assertTrue(allocatedBytes(core) < Files.size(core) - (32L << 20), "core file is sparse");
            assertTrue(Files.exists(tmp.resolve("img").resolve(ProcCapturer.DESCRIPTION)));
            long tick = v.nextTick();
            assertTrue(v.nextTick() > tick, "the process runs on after its capture");
            assertNotEquals('T', v.state());
            assertEquals(0, v.quit());
        }
    }

    @Test
    void everyThreadIsStoppedAndEachHasRegistersThatGdbShows() throws Exception {
        try (Victim v = new Victim(16, 4, false)) {
            ProcCapturer.Result r = proc.dump(v.pid, tmp.resolve("img"), Progress.NONE);
            assertEquals(6, r.threads(), "main, four spinners and the ticker");
            Path core = tmp.resolve("img").resolve("core." + v.pid);
            try (CoreFile c = new CoreFile(core)) {
                for (CoreFile.Note n : c.notes(NT_PRSTATUS)) {
                    long rip = ByteBuffer.wrap(n.desc()).order(ByteOrder.LITTLE_ENDIAN).getLong(112 + 16 * 8);
                    assertNotEquals(0, rip, "every thread has an instruction pointer");
                }
            }
            String gdb = gdb(Victim.binary(), core, "info threads", "p/x marker");
            assertEquals(6, gdb.lines()
                    .filter(l -> l.matches("^\\*?\\s+\\d+\\s+Thread .*\\(LWP \\d+\\).*")).count(), gdb);
            assertTrue(gdb.contains(" in spin ("), "gdb unwinds the spinning threads from their registers: " + gdb);
            assertTrue(gdb.contains("0x314b4d5952524546"), gdb);
            assertEquals(0, v.quit());
        }
    }

    @Test
    void aProcessWritingDuringCaptureGivesAConsistentImage() throws Exception {
        try (Victim v = new Victim(128, 0, true)) {
            // A few passes in: the writer is busy rewriting pages when the capture freezes it.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (u64At(v.pid, v.addresses.get("pass")) < 3) {
                assertTrue(System.nanoTime() < deadline, "the writer made no passes");
                Thread.sleep(10);
            }
            proc.dump(v.pid, tmp.resolve("img"), Progress.NONE);
            try (CoreFile c = new CoreFile(tmp.resolve("img").resolve("core." + v.pid))) {
                long pass = c.u64(v.addresses.get("pass"));
                long index = c.u64(v.addresses.get("index"));
                long big = v.addresses.get("big");
                long pages = v.addresses.get("pages");
                assertTrue(pass > 1, "the writer made passes before the capture");
                for (long i = 0; i < pages; i++) {
                    long got = c.u64(big + i * 4096);
                    long want = i < index ? pass : pass - 1;
                    // the page at index may already hold the new pass: stored just before index moved
                    if (got != want && !(i == index && got == pass)) {
                        throw new AssertionError("page " + i + " holds pass " + got + ", the frozen writer was at pass "
                                + pass + " page " + index + ": the image is torn");
                    }
                }
            }
            assertEquals(0, v.quit());
        }
    }

    /** The 64-bit word at {@code address} of process {@code pid}'s memory now (/proc/PID/mem). */
    private static long u64At(long pid, long address) throws IOException {
        try (FileChannel mem =
                FileChannel.open(Path.of("/proc", Long.toString(pid), "mem"))) {
            ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder());
            while (b.hasRemaining()) {
                if (mem.read(b, address + b.position()) < 0) {
                    throw new EOFException("no word at 0x" + Long.toHexString(address) + " in " + pid);
                }
            }
            return b.flip().getLong();
        }
    }

    @Test
    void aProcessKilledDuringCaptureLeavesNoImage() throws Exception {
        try (Victim v = new Victim(256, 0, false)) {
            Path img = tmp.resolve("img");
            Progress killer = new Progress() {
                boolean done;

                @Override
                public void start(String what, long total, Unit unit) {}

                @Override
                public synchronized void advance(long bytes) {
                    if (!done) {
                        done = true;
                        ProcessHandle.of(v.pid).ifPresent(ProcessHandle::destroyForcibly);
                        awaitGone(v.pid);
                    }
                }

                @Override
                public void finish() {}
            };
            // The smallest buffer: reading waits for the writer, so the kill lands before the last read.
            IOException e = assertThrows(ProcessGoneException.class,
                    () -> new ProcCapturer(0).dump(v.pid, img, killer));
            assertTrue(e.getMessage().contains("exited during capture"), e.getMessage());
            assertFalse(Files.exists(img));
            try (var left = Files.list(tmp)) {
                assertEquals(List.of(), left.toList(), "no partial image left behind");
            }
        }
    }

    @Test
    void aGroupThatForksAllTheTimeIsThawedWhole() throws Exception {
        // A shell starting a command every 10 ms: a child forked between listing the group and the
        // SIGSTOP is stopped too, and must be thawed too, or the shell waits for it forever.
        Process wrapper =
                new ProcessBuilder(proc.launchCommand(List.of("bash", "-c", "while :; do sleep 0.01; done"), null))
                .start();
        try {
            Thread.sleep(200);
            long shell = proc.target(wrapper.pid()).orElseThrow();
            for (int i = 0; i < 25; i++) {
                proc.dump(shell, tmp.resolve("img" + i), Progress.NONE);
                Thread.sleep(30);
                List<ProcessHandle> group = new ArrayList<>();
                group.add(ProcessHandle.of(shell).orElseThrow());
                ProcessHandle.of(shell).orElseThrow().descendants().forEach(group::add);
                for (ProcessHandle h : group) {
                    try {
                        String st = Files.readString(Path.of("/proc", Long.toString(h.pid()), "stat"));
                        assertNotEquals('T', st.charAt(st.lastIndexOf(')') + 2),
                                "capture " + i + " left process " + h.pid() + " of the group stopped: " + st);
                    } catch (IOException exited) { // NoSuchFileException, or ESRCH while reading
                        if (h.isAlive()) {
                            throw exited;
                        }
                        // a sleep that finished: fine
                    }
                }
            }
        } finally {
            ProcessHandle.of(wrapper.pid()).ifPresent(h -> h.descendants().forEach(ProcessHandle::destroyForcibly));
            wrapper.destroyForcibly();
        }
    }

    @Test
    void aProcessStoppedBeforeCaptureStaysStopped() throws Exception {
        try (Victim v = new Victim(8, 0, false)) {
            new ProcessBuilder("kill", "-STOP", Long.toString(v.pid)).start().waitFor();
            while (v.state() != 'T') {
                Thread.sleep(5);
            }
            proc.dump(v.pid, tmp.resolve("img"), Progress.NONE);
            Thread.sleep(100);
            assertEquals('T', v.state(), "a process the user stopped is not resumed by a capture");
            new ProcessBuilder("kill", "-CONT", Long.toString(v.pid)).start().waitFor();
            assertEquals(0, v.quit());
        }
    }

    @Test
    void badRequestsAreRefusedPlainly() throws Exception {
        assertThrows(IllegalArgumentException.class, () -> proc.dump(ProcessHandle.current().pid(), tmp.resolve("a"),
                Progress.NONE));
        Files.createDirectories(tmp.resolve("exists"));
        assertThrows(IllegalArgumentException.class, () -> proc.dump(1, tmp.resolve("exists"), Progress.NONE));
        IOException none = assertThrows(IOException.class,
                () -> proc.dump(999_999_999L, tmp.resolve("b"), Progress.NONE));
        assertTrue(none.getMessage().contains("no process"), none.getMessage());
        Process child = new ProcessBuilder("sleep", "30").start();
        try {
            IOException e = assertThrows(IOException.class,
                    () -> proc.dump(child.pid(), tmp.resolve("c"), Progress.NONE));
            assertTrue(e.getMessage().contains("setsid"), e.getMessage());
            assertTrue(child.isAlive(), "a refused child is not left stopped or reaped");
            assertFalse(child.waitFor(200, TimeUnit.MILLISECONDS));
        } finally {
            child.destroyForcibly();
        }
    }

    private static void awaitGone(long pid) {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (System.nanoTime() < deadline) {
            try {
                String s = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
                if (s.charAt(s.lastIndexOf(')') + 2) == 'Z') {
                    return;
                }
            } catch (IOException gone) {
                return;
            }
            Thread.onSpinWait();
        }
    }

    private static long allocatedBytes(Path file) throws Exception {
        Process p = new ProcessBuilder("du", "-B1", file.toString()).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        p.waitFor();
        return Long.parseLong(out.split("\\s+")[0]);
    }

    static String gdb(Path exe, Path core, String... commands) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("gdb", "-nx", "-batch"));
        for (String c : commands) {
            cmd.add("-ex");
            cmd.add(c);
        }
        cmd.add(exe.toString());
        cmd.add(core.toString());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return out;
    }
}

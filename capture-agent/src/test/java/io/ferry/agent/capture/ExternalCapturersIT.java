package io.ferry.agent.capture;

import io.ferry.staging.Progress;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * CRIU and DMTCP drivers against the real tools. Where a tool is missing or refuses this
 * kernel the test is skipped with the reason printed, never passed: Debian's CRIU 3.17 fails
 * `criu check` on kernel 6.18's vDSO layout and DMTCP has no package, so both are built from
 * ../shared (.ci/run does it).
 */
class ExternalCapturersIT {
    @TempDir
    Path tmp;

    private static void requireAvailable(Capturer c) {
        Scenario.requireAvailable(c);
    }

    /** Restores are TransparentRestartIT's: a victim that reads its stdin pipe cannot be handed a new one. */
    @Test
    void criuDumpsARunningProcessThatGoesOn() throws Exception {
        Capturer criu = Capturers.of("criu");
        requireAvailable(criu);
        try (Victim v = new Victim(16, 2, false)) {
            Capturer.Captured c = criu.capture(v.pid, null, tmp.resolve("img"), Progress.NONE);
            assertTrue(c.imageBytes() > 16L << 20, c.summary());
            try (var files = Files.list(tmp.resolve("img"))) {
                assertTrue(files.anyMatch(f -> f.getFileName().toString().startsWith("pages-")),
                        "criu wrote its page images");
            }
            long tick = v.nextTick();
            assertTrue(v.nextTick() > tick, "stopped for the dump only: the process goes on");
            assertNotEquals('T', v.state(), "resumed, not left stopped");
        }
    }

    @Test
    void dmtcpCheckpointsARankLaunchedUnderIt() throws Exception {
        Capturer dmtcp = Capturers.of("dmtcp");
        requireAvailable(dmtcp);
        Path rankDir = Files.createDirectories(tmp.resolve("rank").resolve("dmtcp")).getParent();
        Process p =
                new ProcessBuilder(dmtcp.launchCommand(List.of(Victim.binary().toString(), "16", "1", "idle"), rankDir))
                .start();
        try {
            assertTrue(new String(p.getInputStream().readNBytes(6)).startsWith("ready"));
            Capturer.Captured c = dmtcp.capture(p.pid(), rankDir, tmp.resolve("img"), Progress.NONE);
            assertTrue(c.imageBytes() > 0, c.summary());
            assertTrue(dmtcp.restartCommand(tmp.resolve("img")).orElseThrow().size() > 4, "a restart names the images");
        } finally {
            p.destroyForcibly();
            dmtcp.stopped();
        }
    }

    /**
     * What CRIU cannot capture (here a process holding {@code /dev/fuse} open, a device CRIU has
     * no driver for) is a plain error naming the file, and leaves no image, not a broken one.
     */
    @Test
    void aDeviceCriuCannotCaptureIsAPlainErrorAndLeavesNoImage() throws Exception {
        Capturer criu = Capturers.of("criu");
        requireAvailable(criu);
        Assumptions.assumeTrue(Files.exists(Path.of("/dev/fuse")),
                "no /dev/fuse on this machine");
        Path rankDir = Files.createDirectories(tmp.resolve("rank"));
        Process p = new ProcessBuilder(criu.launchCommand(List.of("python3", "-c", "import sys, time\n"
                + "f = open('/dev/fuse', 'rb', buffering=0)\nprint('ready', flush=True)\ntime.sleep(600)"), rankDir))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        try {
            assertTrue(new String(p.getInputStream().readNBytes(5)).startsWith("ready"));
            IOException e = assertThrows(IOException.class,
                    () -> criu.capture(criu.target(p.pid()).orElseThrow(), rankDir, tmp.resolve("img"), Progress.NONE));
            assertTrue(e.getMessage().contains("/dev/fuse, a character device (10:229) CRIU cannot checkpoint"),
                    e.getMessage());
            assertTrue(!Files.exists(tmp.resolve("img")), "no image left behind");
            assertTrue(p.isAlive(), "the rank runs on");
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void unknownMethodsAndOneOffDmtcpCapturesAreRefusedPlainly() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Capturers.of("gcore"));
        assertTrue(e.getMessage().contains("[app, proc, criu, dmtcp]"), e.getMessage());
        IllegalArgumentException d = assertThrows(IllegalArgumentException.class,
                () -> Capturers.of("dmtcp").capture(1, null, tmp.resolve("x"), Progress.NONE));
        assertTrue(d.getMessage().contains("ferry run --capture dmtcp"), d.getMessage());
    }
}

package io.ferry.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * durablefs mounts for power-cut tests (src/test/resources/powerloss/durablefs.py): a FUSE file
 * system that keeps, at a cut, exactly what was fsynced, writes that to its backing directory and
 * unmounts. A test makes one per test directory and closes it to unmount whatever is left.
 */
final class DurableFs implements AutoCloseable {
    private static final String PYTHON = "/usr/bin/python3";

    private final Path script;
    private final List<Process> started = new ArrayList<>();
    private final List<Path> mounts = new ArrayList<>();

    private DurableFs(Path script) {
        this.script = script;
    }

    /**
     * Skips the test (an assumption, with its reason) where FUSE or fusepy is missing; else copies the script to
     * {@code dir}.
     */
    static DurableFs in(Path dir) throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "mounting a FUSE file system here needs root");
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "no /dev/fuse: this kernel or container has no FUSE");
        Process p = new ProcessBuilder(PYTHON, "-c", "import fusepy").redirectErrorStream(true).start();
        String why = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assumeTrue(p.waitFor() == 0, PYTHON + " cannot import fusepy (Debian package python3-fusepy): " + why);
        Path script = Files.createDirectories(dir).resolve("durablefs.py");
        try (InputStream in = DurableFs.class.getResourceAsStream("/powerloss/durablefs.py")) {
            Files.copy(in, script);
        }
        return new DurableFs(script);
    }

    /**
     * Starts durablefs on {@code mnt} (its durable state goes to {@code backing} at the cut; it cuts
     * by itself after {@code cutAfter} changes, 0: only at {@link #cut}) and waits until the kernel
     * lists the mount.
     */
    Process mount(Path backing, Path mnt, Path log, int cutAfter) throws Exception {
        Process fs = new ProcessBuilder(PYTHON, script.toString(), backing.toString(), mnt.toString(),
                Integer.toString(cutAfter)).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        started.add(fs);
        mounts.add(mnt);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!mounted(mnt)) {
            assertTrue(fs.isAlive() && System.nanoTime() < deadline,
                    "durablefs did not mount: " + Files.readString(log));
            Thread.sleep(50);
        }
        return fs;
    }

    /** The power goes now (SIGUSR1): durablefs stops every operation, writes its durable state and exits. */
    static void cut(Process fs) throws Exception {
        new ProcessBuilder("kill", "-USR1", Long.toString(fs.pid())).start().waitFor();
        awaitCut(fs);
    }

    /** Waits for durablefs to finish a cut: its durable state written to the backing directory. */
    static void awaitCut(Process fs) throws Exception {
        assertTrue(fs.waitFor(2, TimeUnit.MINUTES), "durablefs did not finish its cut");
    }

    /** Waits for durablefs's own lazy unmount of {@code mnt}, then forces one if it lingers. */
    static void awaitUnmounted(Path mnt) throws Exception {
        for (int tries = 0; mounted(mnt) && tries < 50; tries++) {
            Thread.sleep(100);
        }
        if (mounted(mnt)) {
            new ProcessBuilder("umount", "-l", mnt.toString()).inheritIO().start().waitFor();
        }
        assertTrue(!mounted(mnt), mnt + " is still mounted after the cut");
    }

    static boolean mounted(Path mnt) throws IOException {
        String needle = " " + mnt.toAbsolutePath() + " fuse.durablefs ";
        return Files.readAllLines(Path.of("/proc/mounts")).stream().anyMatch(l -> l.contains(needle));
    }

    @Override
    public void close() throws Exception {
        for (Process p : started) {
            p.destroyForcibly();
        }
        for (Path m : mounts) {
            if (mounted(m)) {
                new ProcessBuilder("umount", "-l", m.toString()).inheritIO().start().waitFor();
            }
        }
    }
}

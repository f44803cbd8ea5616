package io.ferry.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A warm JVM without asking: {@code bin/ferry image push} with no daemon serving this user
 * starts one (and says so), runs its own command in a JVM of its own, and the next command, from
 * a new shell, is served by that daemon. {@code FERRY_DAEMON=off} starts none.
 */
class DaemonAutoStartIT {
    @TempDir
    Path tmp;

    @AfterEach
    void stopDaemons() {
        Path sock = tmp.resolve("run/ferry/daemon.sock");
        ProcessHandle.allProcesses()
                .filter(p -> p.info().arguments().map(a -> List.of(a).contains(sock.toString())).orElse(false))
                .forEach(ProcessHandle::destroy);
    }

    @Test
    void theFirstImageCommandStartsADaemonThatServesTheNext() throws Exception {
        Path img = Files.createDirectories(tmp.resolve("img"));
        Files.writeString(img.resolve("state"), "x".repeat(10_000));
        Path run = tmp.resolve("run");

        Result off = ferry(run, "off", "image", "push", img.toString(), "--store", tmp.resolve("st").toString(),
                "--job", "j", "--generation", "0", "--rank", "0");
        assertEquals(0, off.exit, off.err);
        assertFalse(off.err.contains("started a daemon"), off.err);
        assertFalse(Files.exists(run.resolve("ferry")), "FERRY_DAEMON=off starts nothing");

        Result first = ferry(run, null, "image", "push", img.toString(), "--store", tmp.resolve("st").toString(),
                "--job", "j", "--generation", "1", "--rank", "0");
        assertEquals(0, first.exit, first.err);
        assertTrue(first.err.contains("ferry: started a daemon"), first.err);
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(run.resolve("ferry"))));
        Path log = run.resolve("ferry/daemon.log");
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (!(Files.exists(log) && Files.readString(log).contains("ferry daemon: serving"))) {
            assertTrue(System.nanoTime() < deadline,
                    "the daemon never served: " + (Files.exists(log) ? Files.readString(log) : ""));
            Thread.sleep(100);
        }

        Result second = ferry(run, null, "image", "pull", "--store", tmp.resolve("st").toString(), "--job", "j",
                "--generation", "1", "--rank", "0", tmp.resolve("back").toString());
        assertEquals(0, second.exit, second.err);
        assertFalse(second.err.contains("started a daemon"),
                "a serving daemon is used, not another started: " + second.err);
        assertEquals(Files.readString(img.resolve("state")), Files.readString(tmp.resolve("back/state")));
        stopDaemons();
        // its own time: the start may have used most of the first
        long stopBy = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (!Files.readString(log).contains("stopped after")) {
            assertTrue(System.nanoTime() < stopBy, "the daemon did not stop: " + Files.readString(log));
            Thread.sleep(100);
        }
        assertTrue(Files.readString(log).contains("stopped after 1 commands"), "the daemon served the pull: "
                + Files.readString(log));
    }

    private record Result(int exit, String err) {}

    /** bin/ferry ARGS with XDG_RUNTIME_DIR={@code run}, as from a new shell; {@code daemon}: FERRY_DAEMON, or unset. */
    private static Result ferry(Path run, String daemon, String... args) throws Exception {
        Path root = Path.of("").toAbsolutePath();
        while (!Files.exists(root.resolve("bin/ferry-daemon-client"))) {
            root = root.getParent();
        }
        List<String> cmd = new ArrayList<>(List.of(root.resolve("bin/ferry").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().keySet().removeIf(k -> k.startsWith("FERRY_"));
        pb.environment().put("XDG_RUNTIME_DIR", run.toString());
        if (daemon != null) {
            pb.environment().put("FERRY_DAEMON", daemon);
        }
        Files.createDirectories(run);
        Process p = pb.redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        String err = new String(p.getErrorStream().readAllBytes());
        assertTrue(p.waitFor(3, TimeUnit.MINUTES), "bin/ferry " + String.join(" ", args) + " did not finish");
        return new Result(p.exitValue(), err);
    }
}

package io.ferry.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bin/ferry-rank} trusts nothing another user could have planted: the agent's directory its
 * link leads to, and the spool in it, must be writable by their owner alone, else it refuses to
 * register (and so never sources an answer from there); and it looks for its agent in this user's
 * own runtime directory.
 */
class RankShimTest {
    @TempDir
    Path tmp;

    @Test
    void anAgentDirectoryOthersMayWriteIsRefusedBeforeAnythingIsReadFromIt() throws Exception {
        Path agent = Files.createDirectories(tmp.resolve("ferry-agent-x/spool")).getParent();
        Files.writeString(agent.resolve("agent.pid"), ProcessHandle.current().pid() + "\n");
        Files.setPosixFilePermissions(agent, PosixFilePermissions.fromString("rwxrwxrwx"));
        // An answer waiting there, as a planted one would: it must never be sourced.
        Files.writeString(agent.resolve("spool/j.0.env"), "touch '" + tmp.resolve("sourced") + "'\n");
        Result r = shim(agent);
        assertEquals(1, r.exit, r.err);
        assertTrue(r.err.contains("is not the agent's own") && r.err.contains("mode 777"), r.err);
        assertTrue(Files.notExists(tmp.resolve("sourced")), "nothing was sourced");

        Files.setPosixFilePermissions(agent, PosixFilePermissions.fromString("rwx------"));
        Files.setPosixFilePermissions(agent.resolve("spool"), PosixFilePermissions.fromString("rwxrwxrwx"));
        r = shim(agent);
        assertEquals(1, r.exit, r.err);
        assertTrue(r.err.contains(agent.resolve("spool") + " is not the agent's own"), r.err);
        assertTrue(Files.notExists(tmp.resolve("sourced")), "nothing was sourced");
    }

    /**
     * Without FERRY_AGENT_DIR or FERRY_RUNTIME_DIR the shim looks for its host's agent where
     * `ferry agent` puts the link (OwnerOnly.privateRuntimeDir): the user's session directory where it
     * exists, else /tmp/ferry-UID, never another user's /tmp/ferry-agent-HOST.
     */
    @Test
    void theAgentIsLookedForInThisUsersOwnRuntimeDirectory() throws Exception {
        String host = Files.readString(Path.of("/proc/sys/kernel/hostname")).trim();
        Result r = shim(Map.of("XDG_RUNTIME_DIR", tmp.toString()));
        assertEquals(1, r.exit, r.err);
        assertTrue(r.err.contains("(no " + tmp.resolve("ferry/ferry-agent-" + host + "/spool") + ")"), r.err);

        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        r = shim(Map.of("XDG_RUNTIME_DIR", tmp.resolve("not-on-this-node").toString()));
        assertEquals(1, r.exit, r.err);
        assertTrue(r.err.contains("(no /tmp/ferry-" + uid + "/ferry-agent-" + host + "/spool)"), r.err);
    }

    private record Result(int exit, String err) {}

    private static Result shim(Path agentDir) throws Exception {
        return shim(Map.of("FERRY_AGENT_DIR", agentDir.toString()));
    }

    private static Result shim(Map<String, String> env) throws Exception {
        Path root = Path.of("").toAbsolutePath();
        while (!Files.exists(root.resolve("bin/ferry-rank"))) {
            root = root.getParent();
        }
        ProcessBuilder pb = new ProcessBuilder("sh", root.resolve("bin/ferry-rank").toString(), "--job", "j", "--",
                "true");
        pb.environment().keySet().removeAll(List.of("FERRY_AGENT_DIR", "FERRY_RUNTIME_DIR", "XDG_RUNTIME_DIR"));
        pb.environment().put("OMPI_COMM_WORLD_RANK", "0");
        pb.environment().putAll(env);
        pb.environment().put("FERRY_RANK_PATIENCE", "2");
        Process p = pb.redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        String err = new String(p.getErrorStream().readAllBytes());
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        return new Result(p.exitValue(), err);
    }
}

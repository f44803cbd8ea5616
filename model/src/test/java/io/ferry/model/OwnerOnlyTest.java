package io.ferry.model;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The directory an agent's control socket goes in: this user's own, or refused. */
class OwnerOnlyTest {
    @TempDir
    Path tmp;

    @Test
    void theRuntimeDirectoryIsMadeOwnerOnlyAndFoundAgain() throws IOException {
        Map<String, String> env = Map.of("XDG_RUNTIME_DIR", tmp.toString());
        Path dir = OwnerOnly.privateRuntimeDir(env);
        assertEquals(tmp.resolve("ferry"), dir);
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
        assertEquals(dir, OwnerOnly.privateRuntimeDir(env), "found again as it was left");
    }

    /** sbatch exports the login node's XDG_RUNTIME_DIR; a compute node may have no such directory. */
    @Test
    void aSessionDirectoryThatDoesNotExistHereFallsBackToTmp() throws IOException {
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        Path dir = OwnerOnly.privateRuntimeDir(Map.of("XDG_RUNTIME_DIR", tmp.resolve("run/user/4242").toString()));
        assertEquals(Path.of("/tmp", "ferry-" + uid), dir);
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
    }

    @Test
    void aDirectoryOpenToOthersOrALinkIsRefused() throws IOException {
        Map<String, String> env = Map.of("XDG_RUNTIME_DIR", tmp.toString());
        Path dir = Files.createDirectory(tmp.resolve("ferry"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        IOException open = assertThrows(IOException.class, () -> OwnerOnly.privateRuntimeDir(env));
        assertTrue(open.getMessage().contains("is not this user's own directory")
                && open.getMessage().contains("rwxrwxrwx"),
                open.getMessage());
        Files.delete(dir);
        Files.createSymbolicLink(dir, Files.createDirectory(tmp.resolve("elsewhere")));
        IOException link = assertThrows(IOException.class, () -> OwnerOnly.privateRuntimeDir(env));
        assertTrue(link.getMessage().contains("a link"), link.getMessage());
    }

    @Test
    void aDirectoryOfAnotherUserIsRefused() throws Exception {
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        Assumptions.assumeTrue(uid == 0, "only root can give a directory to another user");
        Path dir = Files.createDirectory(tmp.resolve("ferry"), PosixFilePermissions.asFileAttribute(OwnerOnly.DIR));
        Process chown = new ProcessBuilder("chown", "65534", dir.toString()).inheritIO().start();
        assertEquals(0, chown.waitFor());
        IOException planted = assertThrows(IOException.class,
                () -> OwnerOnly.privateRuntimeDir(Map.of("XDG_RUNTIME_DIR", tmp.toString())));
        assertTrue(planted.getMessage().contains("owner uid 65534"), planted.getMessage());
    }
}

package io.ferry.cli;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What {@link ThinClient} hands to a daemon, and what makes a daemon's answer the same as a JVM of its own. */
class ThinClientTest {
    @Test
    void theEnvironmentDigestCoversWhatFerryAndItsStoresReadAndNothingElse() {
        Map<String, String> env = new HashMap<>(Map.of("PATH", "/usr/bin", "FERRY_STAGING_WORKERS", "2", "TERM",
                "xterm"));
        byte[] base = ThinClient.environmentDigest(env);
        // Variables no command reads, and the launcher's own, do not matter.
        for (Map.Entry<String, String> e : Map.of("TERM", "dumb", "SHLVL", "3", "OLDPWD", "/x", "FERRY_DAEMON", "on",
                "FERRY_DAEMON_SOCKET", "/s", "FERRY_CDS", "off").entrySet()) {
            Map<String, String> other = new HashMap<>(env);
            other.put(e.getKey(), e.getValue());
            assertArrayEquals(base, ThinClient.environmentDigest(other), e.getKey());
        }
        // Ferry's settings, the stores' credentials and configuration, the JVM's options and PATH do.
        for (Map.Entry<String, String> e : Map.of("FERRY_STAGING_WORKERS", "1", "AWS_SECRET_ACCESS_KEY", "k",
                "HADOOP_CONF_DIR", "/etc/h", "KRB5CCNAME", "FILE:/tmp/k", "FERRY_JAVA_OPTS", "-Xmx1g", "PATH", "/bin",
                "HOME", "/root").entrySet()) {
            Map<String, String> other = new HashMap<>(env);
            other.put(e.getKey(), e.getValue());
            assertFalse(Arrays.equals(base, ThinClient.environmentDigest(other)), e.getKey());
        }
        // Two variables and one whose value spells both must not collide: names and values carry their lengths.
        assertFalse(Arrays.equals(ThinClient.environmentDigest(Map.of("FERRY_A", "1", "FERRY_B", "2")),
                ThinClient.environmentDigest(Map.of("FERRY_A", "1\0FERRY_B=2"))));
    }

    @Test
    void onlyImagePushAndPullWithoutTheirOwnLogLevelsOrRelativeConfigurationDirectoriesAreHandedOver() {
        Map<String, String> env = Map.of();
        assertNull(ThinClient.unservable(new String[] {"image", "push", "d", "--store", "s"}, env));
        assertNull(ThinClient.unservable(new String[] {"image", "pull", "--store", "s", "d"}, env));
        assertNotNull(ThinClient.unservable(new String[] {"image"}, env));
        assertNotNull(ThinClient.unservable(new String[] {"store", "verify", "s"}, env));
        assertNotNull(ThinClient.unservable(new String[] {"image", "push", "d", "--log-level", "debug"}, env));
        assertNotNull(ThinClient.unservable(new String[] {"image", "push", "d", "--set", "log.level.io.ferry=debug"},
                env));
        assertNotNull(ThinClient.unservable(new String[] {"image", "push", "d"}, Map.of("FERRY_DAEMON", "off")));
        assertNotNull(ThinClient.unservable(new String[] {"image", "push", "d"}, Map.of("FERRY_CONFIG", "site.conf")));
        assertNull(ThinClient.unservable(new String[] {"image", "push", "d"},
                Map.of("FERRY_CONFIG", "/etc/site.conf")));
        assertNotNull(ThinClient.unservable(new String[] {"image", "push", "d"}, Map.of("HADOOP_CONF_DIR", "conf")));
    }

    @Test
    void theSocketIsTheNamedOneElseInTheUsersRuntimeDirectoryElseAPerUserDirectoryUnderTmp() {
        assertEquals(Path.of("/x/d.sock"),
                ThinClient.socket(Map.of("FERRY_DAEMON_SOCKET", "/x/d.sock", "XDG_RUNTIME_DIR", "/run/user/7")));
        assertEquals(Path.of("/run/user/7/ferry/daemon.sock"),
                ThinClient.socket(Map.of("XDG_RUNTIME_DIR", "/run/user/7")));
        assertEquals(Path.of("/tmp/ferry-" + ThinClient.uid() + "/daemon.sock"), ThinClient.socket(Map.of()));
        assertTrue(ThinClient.uid() >= 0);
    }

    @Test
    void onlyTheSameInstallationChangedSinceMakesADaemonStale() {
        assertTrue(DaemonServer.rebuilt("/opt/ferry/cli.jar@1000", "/opt/ferry/cli.jar@2000"));
        assertFalse(DaemonServer.rebuilt("/opt/ferry/cli.jar@1000", "/opt/ferry/cli.jar@1000"));
        // Another checkout sharing the default socket is declined, but does not stop this daemon.
        assertFalse(DaemonServer.rebuilt("/opt/ferry/cli.jar@1000", "/home/u/ferry/cli.jar@2000"));
        assertFalse(DaemonServer.rebuilt("/opt/ferry/cli.jar@1000", "unknown"));
    }

    @Test
    void aMissingDaemonIsNotServedAndSaysWhyOnlyWhenDebugging() {
        var err = new ByteArrayOutputStream();
        var out = new ByteArrayOutputStream();
        String[] push = {"image", "push", "d", "--store", "s", "--job", "j", "--generation", "0", "--rank", "0"};
        assertEquals(ThinClient.NOT_SERVED, ThinClient.run(push, Map.of("FERRY_DAEMON_SOCKET", "/nonexistent/d.sock"),
                new PrintStream(out), new PrintStream(err)));
        assertEquals("", err.toString());
        assertEquals(ThinClient.NOT_SERVED,
                ThinClient.run(push, Map.of("FERRY_DAEMON_SOCKET", "/nonexistent/d.sock", "FERRY_DEBUG", "1"),
                new PrintStream(out), new PrintStream(err)));
        assertTrue(err.toString().contains("no daemon at /nonexistent/d.sock"), err.toString());
        assertEquals("", out.toString());
    }
}

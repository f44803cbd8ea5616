package io.ferry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ferry run --capture proc}: periodic checkpoints of a program that knows nothing of
 * Ferry (a bash loop whose {@code sleep} children share its process group), staged and
 * established like any other, pulled back as cores gdb opens; restart says it cannot.
 */
class ProcRunIT {
    /**
     * The ranks' program: 60 sleeps of 0.1 s, and more while the store holds fewer than three committed snapshots
     * (at most 1,200), so that a slow machine's job still lives for two generations. It reads the store's
     * directory as any file; it speaks no protocol.
     */
    private static final String SLEEPER = "i=0; while (( i < 60 )) || { (( i < 1200 )) &&"
            + " [ \"$(ls \"$1\"/*/SNAPSHOT 2>/dev/null | wc -l)\" -lt 3 ]; }; do sleep 0.1; (( i++ )); done";
    @TempDir
    Path tmp;

    @Test
    void uncooperativeRanksAreCapturedPeriodicallyAndRestartSaysWhyNot() throws Exception {
        Path home = tmp.resolve("home");
        String store = tmp.resolve("store").toString();
        FerryProcess.Result r = FerryProcess.run("run", "--job", "plain", "--ranks", "2", "--interval", "1s",
                "--capture", "proc", "--home", home.toString(), "--store", store, "--",
                "bash", "-c", SLEEPER, "sleeper", Path.of(store, "ferry", "v1", "jobs", "plain").toString());
        assertEquals(0, r.exit(), r.out() + r.err());

        FerryProcess.Result status = FerryProcess.run("status", "plain", "--json", "--home", home.toString());
        JsonNode json = new ObjectMapper().readTree(status.out());
        long g = json.get("newestEstablished").asLong(-1);
        assertTrue(g >= 1, "at least two generations established: " + status.out());

        Path img = tmp.resolve("pulled");
        FerryProcess.Result pull = FerryProcess.run("image", "pull", "--store", store, "--job", "plain", "--generation",
                Long.toString(g), "--rank", "1", img.toString());
        assertEquals(0, pull.exit(), pull.err());
        List<Path> cores;
        try (var files = Files.list(img)) {
            cores = files.filter(f -> f.getFileName().toString().startsWith("core.")).sorted().toList();
        }
        assertTrue(!cores.isEmpty(), "the rank's image holds its core files");
        String description = Files.readString(img.resolve("proc-capture.json"));
        assertTrue(description.contains("\"wholeGroup\":true"), description);
        Process gdb = new ProcessBuilder("gdb", "-nx", "-batch", "-ex", "info threads", "/usr/bin/bash",
                cores.get(0).toString()).redirectErrorStream(true).start();
        String said = new String(gdb.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(gdb.waitFor(60, TimeUnit.SECONDS));
        assertTrue(said.contains("Program terminated with signal SIGSTOP"), said);
        assertTrue(said.contains("LWP "), said);

        FerryProcess.Result restart = FerryProcess.run("restart", "plain", "--home", home.toString());
        assertEquals(1, restart.exit());
        // a line of its own: the home's embedded broker may log first (a KRaft controller's start-up race, at ERROR)
        String why = "ferry: generation " + g + " of plain holds proc images (ELF core files): Ferry cannot restore"
                + " them, that needs an external restorer";
        assertTrue(restart.err().lines().anyMatch(l -> l.startsWith(why)), restart.err());
    }

    @Test
    void anUnavailableMethodIsRefusedBeforeAnythingStarts() throws Exception {
        Path home = tmp.resolve("home");
        // Without DMTCP on the PATH (CI puts the one it builds there): the method is refused, saying why.
        ProcessBuilder noDmtcp = FerryProcess.builder(List.of(), "run", "--job", "d", "--ranks", "1", "--capture",
                "dmtcp",
                "--home", home.toString(), "--", "true");
        noDmtcp.environment().put("PATH", "/usr/local/bin:/usr/bin:/bin");
        FerryProcess.Result r = FerryProcess.run(noDmtcp);
        assertEquals(1, r.exit());
        assertTrue(r.err().startsWith("ferry: --capture dmtcp is not available here: dmtcp_launch is not installed"),
                r.err());
        assertTrue(!Files.exists(home));
        FerryProcess.Result bad = FerryProcess.run("run", "--job", "d", "--ranks", "1", "--capture", "gcore",
                "--home", home.toString(), "--", "true");
        assertEquals(1, bad.exit());
        assertTrue(bad.err().startsWith("ferry: unknown capture method 'gcore'"), bad.err());
    }
}

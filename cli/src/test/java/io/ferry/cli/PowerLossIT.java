package io.ferry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferry.model.OwnerOnly;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Power loss on the write path (issue 13). The POSIX store sits on durablefs, a FUSE file system
 * that keeps, at a cut, exactly what was fsynced: file data by fsync, names by fsync of their
 * directory (src/test/resources/powerloss/durablefs.py). A bash driver runs the real CLI: for
 * g = 1, 2, ... it pushes a 3 MiB image for ranks 0 and 1, then commits the snapshot. Right after
 * a seeded number of changes to the file system (a write, fsync, rename, mkdir, ...) the power
 * goes: durablefs freezes, writes its durable state to a backing directory and unmounts, and the
 * driver's process group is SIGKILLed. The backing directory is then read as a POSIX store:
 *
 * <ul>
 *   <li>every push and commit the driver saw succeed (exit 0) survived: acknowledged = durable;</li>
 *   <li>every generation with a commit marker pulls byte for byte equal to what was pushed;</li>
 *   <li>{@code store ls} reports established exactly the generations with a marker;</li>
 *   <li>{@code store verify} exits 0: a cut leaves only hidden temporary files, which it skips
 *       and {@code store gc} deletes, never a damaged object.</li>
 * </ul>
 */
class PowerLossIT {
    private static final int ROUNDS = Integer.getInteger("ferry.powerloss.rounds", 8);
    private static final long SEED = Long.getLong("ferry.powerloss.seed", 13);
    /** The cut comes after a seeded number of file-system changes, 1 to this (~3 pack-layout generations). */
    private static final int OPS = Integer.getInteger("ferry.powerloss.ops", 250);
    private static final int GENERATIONS = 40; // more than a driver reaches before its cut
    private static final int MIB = 1 << 20;

    @TempDir
    Path tmp;
    private final ObjectMapper json = new ObjectMapper();
    private final List<Process> started = new ArrayList<>();
    private DurableFs durablefs;

    @BeforeEach
    void needsFuse() throws Exception {
        durablefs = DurableFs.in(tmp.resolve("durablefs"));
    }

    @AfterEach
    void cleanUp() throws Exception {
        for (Process p : started) {
            p.destroyForcibly();
        }
        if (durablefs != null) {
            durablefs.close();
        }
    }

    /** What one round saw. */
    record Round(int round, String layout, int cutAfter, long cutMs, String phase, int pushesAcked, int commitsAcked,
                 int established, int lost, String cut) {}

    @Test
    void aPowerCutNeverLosesAnAcknowledgedImageOrMarkerNorLeavesDamage() throws Exception {
        Path images = tmp.resolve("images");
        for (int g = 1; g <= GENERATIONS; g++) {
            for (int r = 0; r < 2; r++) {
                writeImage(images.resolve(g + "/" + r), g, r);
            }
        }
        Random random = new Random(SEED);
        List<Round> rounds = new ArrayList<>();
        for (int i = 0; i < ROUNDS; i++) {
            // Odd rounds use the older chunk layout: one object per 4 MiB chunk in 256 prefix directories.
            String layout = i % 2 == 0 ? "packs" : "chunks";
            Round r = round(i, layout, 1 + random.nextInt(OPS), images);
            System.out.println("[power-loss] " + r);
            rounds.add(r);
        }
        System.out.println("[power-loss] rounds " + rounds.size()
                + ", cut mid-push " + rounds.stream().filter(r -> r.phase().equals("push")).count()
                + ", cut mid-commit " + rounds.stream().filter(r -> r.phase().equals("commit")).count()
                + ", cuts that lost unsynced data "
                + rounds.stream().filter(r -> !r.cut().contains("; 0 live files")).count()
                + ", generations that survived " + rounds.stream().mapToInt(Round::established).sum()
                + ", acknowledged commits " + rounds.stream().mapToInt(Round::commitsAcked).sum()
                + ", lost " + rounds.stream().mapToInt(Round::lost).sum());
        assertTrue(rounds.stream().anyMatch(r -> r.established() > 0),
                "no round established a generation before its cut");
        assertTrue(rounds.stream().anyMatch(r -> r.phase().equals("push")), "no round was cut in the middle of a push");
    }

    /**
     * A push killed between creating its generation's directory and fsyncing that into its parent
     * leaves a directory that is there but not durable. The next push finds it, writes its manifest
     * into it and is acknowledged; a power cut then must not take the directory, and the image, away.
     */
    @Test
    void aDirectoryAKilledPushLeftUnsyncedIsMadeDurableByTheNextPush() throws Exception {
        Path images = tmp.resolve("images");
        for (int r = 0; r < 2; r++) {
            writeImage(images.resolve("1/" + r), 1, r);
            writeImage(images.resolve("2/" + r), 2, r);
        }
        Path dir = Files.createDirectories(tmp.resolve("unsynced-dir"));
        Path mnt = Files.createDirectories(dir.resolve("mnt"));
        Process fs = mount(dir.resolve("backing"), mnt, dir.resolve("durablefs.log"), 0);
        Path store = mnt.resolve("store");
        String where = "unsynced directory";
        for (int r = 0; r < 2; r++) {
            ferry(0, where, "image", "push", images.resolve("1/" + r).toString(), "--store", store.toString(), "--job",
                    "pl",
                    "--generation", "1", "--rank", Integer.toString(r), "--json");
        }
        ferry(0, where, "snapshot", "commit", "--store", store.toString(), "--job", "pl", "--generation", "1",
                "--ranks", "2",
                "--json");
        // What the killed push of generation 2 left: its directory, live but never fsynced into jobs/pl.
        Files.createDirectory(store.resolve("ferry/v1/jobs/pl/2"));
        for (int r = 0; r < 2; r++) {
            ferry(0, where, "image", "push", images.resolve("2/" + r).toString(), "--store", store.toString(), "--job",
                    "pl",
                    "--generation", "2", "--rank", Integer.toString(r), "--json");
        }
        ferry(0, where, "snapshot", "commit", "--store", store.toString(), "--job", "pl", "--generation", "2",
                "--ranks", "2",
                "--json");
        DurableFs.cut(fs);
        Path survived = dir.resolve("backing/store");
        JsonNode ls = ferry(0, where, "store", "ls", survived.toString(), "--json");
        List<String> states = new ArrayList<>();
        ls.get("generations").forEach(g -> states.add(g.get("generation").asLong() + " " + g.get("state").asText()));
        assertEquals(List.of("1 established", "2 established"), states, "both acknowledged commits survive the cut");
        for (int r = 0; r < 2; r++) {
            Path back = dir.resolve("pulled/2/" + r);
            Files.createDirectories(back.getParent());
            ferry(0, where, "image", "pull", back.toString(), "--store", survived.toString(), "--job", "pl",
                    "--generation", "2",
                    "--rank", Integer.toString(r), "--json");
            assertSameTree(images.resolve("2/" + r), back, "generation 2 rank " + r);
        }
    }

    /**
     * The node cache's directories, the same way: a process killed between its mkdir and the
     * fsync of the parent leaves the cache's job directory live but not durable. The next agent
     * finds it ({@code OwnerOnly.createDirectories}, what the cache and the agent's run
     * directory use), writes an image file below it and fsyncs it and its directory; a power cut then must not
     * take the directory, and the file, away.
     */
    @Test
    void aCacheDirectoryAKilledAgentLeftUnsyncedIsMadeDurableWhenFoundAgain() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("unsynced-cache"));
        Path mnt = Files.createDirectories(dir.resolve("mnt"));
        Process fs = mount(dir.resolve("backing"), mnt, dir.resolve("durablefs.log"), 0);
        Path job = mnt.resolve("cache/job");
        Files.createDirectories(job); // what the killed process left: mkdirs, never fsynced into their parents
        OwnerOnly.createDirectories(job);
        Path image = OwnerOnly.createDirectories(job.resolve("7/0")).resolve("state");
        try (FileChannel c = FileChannel.open(image,
                StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            c.write(ByteBuffer.wrap("acknowledged".getBytes(StandardCharsets.US_ASCII)));
            c.force(true);
        }
        // The file's name, fsynced into its directory, as the cache does with what it writes (LocalCache).
        try (FileChannel d = FileChannel.open(image.getParent(),
                StandardOpenOption.READ)) {
            d.force(true);
        }
        DurableFs.cut(fs);
        Path survived = dir.resolve("backing/cache/job/7/0/state");
        assertTrue(Files.isRegularFile(survived), "the fsynced file and the directories above it survive the cut: "
                + Files.readString(dir.resolve("durablefs.log")));
        assertEquals("acknowledged", Files.readString(survived));
    }

    private Round round(int i, String layout, int cutAfter, Path images) throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("round-" + i));
        Path backing = dir.resolve("backing");
        Path mnt = Files.createDirectories(dir.resolve("mnt"));
        Process fs = mount(backing, mnt, dir.resolve("durablefs.log"), cutAfter);
        Path store = mnt.resolve("store");
        Path log = dir.resolve("driver.log");
        Path script = driver(dir, layout);
        Process driver = new ProcessBuilder("setsid", "bash", script.toString(), store.toString(), images.toString(),
                Integer.toString(GENERATIONS), log.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("driver.out").toFile()).start();
        started.add(driver);
        long t0 = System.nanoTime();
        // The power goes: durablefs cuts itself after its cutAfter-th change (or, should the driver
        // not get that far, at a signal), so nothing after that instant counts; then every process
        // of the driver's group dies where it stands.
        if (!fs.waitFor(90, TimeUnit.SECONDS)) {
            new ProcessBuilder("kill", "-USR1", Long.toString(fs.pid())).start().waitFor();
        }
        DurableFs.awaitCut(fs);
        long cutMs = (System.nanoTime() - t0) / 1_000_000;
        new ProcessBuilder("kill", "-KILL", "--", "-" + driver.pid()).start().waitFor();
        driver.waitFor(30, TimeUnit.SECONDS);
        DurableFs.awaitUnmounted(mnt);
        String cut = Files.readString(dir.resolve("durablefs.log")).trim();

        List<String> said = Files.exists(log) ? Files.readAllLines(log) : List.of();
        String last = said.isEmpty() ? "none" : said.get(said.size() - 1);
        // The command the cut hit: the last one started and not done (it fails once the mount is gone).
        String phase = last.endsWith(" start") || last.endsWith(" failed") ? last.split(" ")[0]
                : last.equals("all done") ? "finished" : "between";
        List<long[]> pushed = said.stream().filter(l -> l.startsWith("push ") && l.endsWith(" done"))
                .map(l -> new long[] {Long.parseLong(l.split(" ")[1]), Long.parseLong(l.split(" ")[2])}).toList();
        TreeSet<Long> committed = said.stream().filter(l -> l.startsWith("commit ") && l.endsWith(" done"))
                .map(l -> Long.parseLong(l.split(" ")[1])).collect(Collectors.toCollection(TreeSet::new));
        assertTrue(said.stream().limit(Math.max(0, said.size() - 1)).noneMatch(l -> l.contains("failed")),
                "a command failed before the cut: " + said + "\n" + Files.readString(dir.resolve("driver.out")));

        Path survived = backing.resolve("store");
        String where = "round " + i + " (" + layout + ", cut after change " + cutAfter + ", at " + cutMs + " ms, "
                + last + ")";
        TreeSet<Long> established = new TreeSet<>();
        TreeSet<Long> markers = new TreeSet<>();
        int lost = 0;
        if (Files.isDirectory(survived)) {
            JsonNode ls = ferry(0, where, "store", "ls", survived.toString(), "--json");
            for (JsonNode g : ls.get("generations")) {
                if (g.get("state").asText().equals("established")) {
                    established.add(g.get("generation").asLong());
                }
            }
            Path jobs = survived.resolve("ferry/v1/jobs/pl");
            if (Files.isDirectory(jobs)) {
                try (Stream<Path> gens = Files.list(jobs)) {
                    gens.filter(g -> Files.isRegularFile(g.resolve("SNAPSHOT")))
                            .forEach(g -> markers.add(Long.parseLong(g.getFileName().toString())));
                }
            }
            assertEquals(markers, established,
                    where + ": store ls reports established exactly the generations with a marker");
            JsonNode verify = ferry(-1, where, "store", "verify", survived.toString(), "--json");
            assertTrue(verify.get("ok").asBoolean(), where + ": store verify found damage: " + verify.get("problems"));
        }
        for (long g : committed) {
            if (!established.contains(g)) {
                lost++;
            }
        }
        assertEquals(0, lost,
                where + ": commits acknowledged " + committed + ", established after the cut " + established);
        // Every generation with a marker, and every push acknowledged, pulls back byte for byte.
        TreeSet<String> toPull = new TreeSet<>();
        established.forEach(g -> List.of(0, 1).forEach(r -> toPull.add(g + "/" + r)));
        pushed.forEach(p -> toPull.add(p[0] + "/" + p[1]));
        for (String image : toPull) {
            String g = image.split("/")[0];
            String r = image.split("/")[1];
            Path back = dir.resolve("pulled/" + image);
            Files.createDirectories(back.getParent());
            JsonNode pull = ferry(0, where, "image", "pull", back.toString(), "--store", survived.toString(), "--job",
                    "pl",
                    "--generation", g, "--rank", r, "--json");
            assertEquals(established.contains(Long.parseLong(g)), pull.get("committed").asBoolean(),
                    where + " " + image);
            assertSameTree(images.resolve(image), back, where + " image " + image);
        }
        return new Round(i, layout, cutAfter, cutMs, phase, pushed.size(), committed.size(), established.size(), lost,
                cut.substring(cut.indexOf("): ") + 3, cut.indexOf("; backing")));
    }

    private Process mount(Path backing, Path mnt, Path log, int cutAfter) throws Exception {
        return durablefs.mount(backing, mnt, log, cutAfter);
    }

    /** The driver: the real CLI, one command after another, each logged before it starts and after it succeeds. */
    private Path driver(Path dir, String layout) throws IOException {
        List<String> java = new ArrayList<>(FerryProcess.builder(List.of("-Xmx256m", "-XX:TieredStopAtLevel=1"))
                .command());
        String ferry = java.stream().map(a -> "'" + a.replace("'", "'\\''") + "'").collect(Collectors.joining(" "));
        Path script = dir.resolve("driver.sh");
        Files.writeString(script, String.join("\n",
                "#!/usr/bin/env bash",
                "store=$1 images=$2 gens=$3 log=$4",
                "ferry() { " + ferry + " \"$@\" --set staging.layout=" + layout + "; }",
                "for ((g = 1; g <= gens; g++)); do",
                "  for r in 0 1; do",
                "    echo \"push $g $r start\" >> \"$log\"",
                "    ferry image push \"$images/$g/$r\" --store \"$store\" --job pl --generation $g --rank $r"
                        + " || { echo \"push $g $r failed\" >> \"$log\"; exit 1; }",
                "    echo \"push $g $r done\" >> \"$log\"",
                "  done",
                "  echo \"commit $g start\" >> \"$log\"",
                "  ferry snapshot commit --store \"$store\" --job pl --generation $g --ranks 2"
                        + " || { echo \"commit $g failed\" >> \"$log\"; exit 1; }",
                "  echo \"commit $g done\" >> \"$log\"",
                "done",
                "echo 'all done' >> \"$log\"", ""));
        return script;
    }

    /**
     * Runs the CLI to its end (in this JVM: {@link InProcessFerry}; the driver's commands, which the cut kills, are
     * processes); {@code exit} -1 accepts 0 and 3 (verify's "damage found", reported in the JSON).
     */
    private JsonNode ferry(int exit, String where, String... args) throws Exception {
        FerryProcess.Result r = FerryProcess.run(args);
        assertTrue(exit < 0 ? r.exit() == 0 || r.exit() == 3 : r.exit() == exit,
                where + ": ferry " + String.join(" ", args) + " exited " + r.exit() + ": " + r.err() + r.out());
        return json.readTree(r.out());
    }

    /**
     * Image {@code g} of rank {@code r}: 1 MiB new random bytes (new blobs each generation), 1 MiB of
     * zeros (stored as nothing) and 1 MiB that repeats every generation (deduplicated), in three files.
     */
    private static void writeImage(Path dir, int g, int r) throws IOException {
        Files.createDirectories(dir);
        byte[] fresh = new byte[MIB];
        new Random(g * 1_000L + r).nextBytes(fresh);
        Files.write(dir.resolve("memory"), fresh);
        Files.write(dir.resolve("zeros"), new byte[MIB]);
        byte[] same = new byte[MIB];
        new Random(-1 - r).nextBytes(same);
        Files.write(dir.resolve("text"), same);
        Files.writeString(dir.resolve("state"), "generation " + g + " rank " + r + "\n");
    }

    private static void assertSameTree(Path expected, Path actual, String what) throws IOException {
        try (Stream<Path> e = Files.list(expected); Stream<Path> a = Files.list(actual)) {
            assertEquals(e.map(p -> p.getFileName().toString()).sorted().toList(),
                    a.map(p -> p.getFileName().toString()).sorted().toList(), what + ": files");
        }
        try (Stream<Path> e = Files.list(expected)) {
            for (Path p : (Iterable<Path>) e::iterator) {
                assertArrayEquals(Files.readAllBytes(p), Files.readAllBytes(actual.resolve(p.getFileName())),
                        what + ": " + p.getFileName());
            }
        }
    }
}

package io.ferry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code ferry plan} through the real command line, in process. */
class PlanCommandTest {
    private record Out(int exit, String out, String err) {}

    private static Out plan(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            String[] all = new String[args.length + 1];
            all[0] = "plan";
            System.arraycopy(args, 0, all, 1, args.length);
            int exit = Main.run(all);
            return new Out(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

    @Test
    void exascaleExampleOfTheIssue() throws Exception {
        Out r = plan("--ram", "10PB", "--storage", "100PB", "--disk-size", "4TB", "--disk-bandwidth", "4GB/s",
                "--json");
        assertEquals(0, r.exit(), r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        assertEquals(0.1, j.get("ratio").asDouble(), 1e-12);
        assertEquals(1000.0, j.get("singleDiskFillSeconds").asDouble(), 1e-9);
        assertEquals(100.0, j.get("idealSeconds").asDouble(), 1e-9);
        assertEquals(10_000_000_000_000_000L, j.get("checkpointSizeBytes").asLong());
        assertEquals(4e9, j.get("diskBandwidthBytesPerSecond").asDouble(), 0);
    }

    @Test
    void binaryAndDecimalUnitsBothWorkAndTheTextSaysWhichIsWhich() {
        Out r = plan("--checkpoint-size", "1TiB", "--storage", "1PiB", "--disk-size", "1TiB", "--disk-bandwidth",
                "1GiB/s");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("ratio               0.0009766"), r.out()); // 2^40 / 2^50
        assertTrue(r.out().contains("single-disk fill    1024 s"), r.out());
        assertTrue(r.out().contains("ideal checkpoint    1.000 s"), r.out());
        assertTrue(r.out().contains("KB/MB/GB/TB/PB/EB decimal"), r.out());
    }

    @Test
    void badOrMissingInputIsOneLine() {
        Out bad = plan("--ram", "1PB", "--storage", "10PB", "--disk-size", "4TB", "--disk-bandwidth", "4GB");
        assertEquals(1, bad.exit());
        assertEquals("ferry: --disk-bandwidth: invalid rate '4GB': use e.g. 4GB/s, 500MB/s or 2GiB/s",
                bad.err().strip());
        Out missing = plan("--ram", "1PB", "--storage", "10PB", "--disk-size", "4TB");
        assertEquals(2, missing.exit());
        assertEquals(1, missing.err().strip().lines().count(), missing.err());
        assertTrue(missing.err().contains("--disk-bandwidth"), missing.err());
        Out tooBig = plan("--ram", "1PB", "--storage", "1TB", "--disk-size", "4TB", "--disk-bandwidth", "4GB/s");
        assertEquals(1, tooBig.exit());
        assertEquals(1, tooBig.err().strip().lines().count(), tooBig.err());
        Out garbage = plan("--ram", "lots", "--storage", "10PB", "--disk-size", "4TB", "--disk-bandwidth", "4GB/s");
        assertTrue(garbage.err().startsWith("ferry: --checkpoint-size: invalid size 'lots'"), garbage.err());
    }

    @Test
    void aSavedCalibrationProjectsPerTierAndBadInputIsOneLine(@TempDir Path tmp)
            throws Exception {
        // A calibration as --save-calibration writes it (measured figures of a small job on a 2-core VM).
        Path cal = tmp.resolve("cal.json");
        Files.writeString(cal, """
                {"v":1,"job":"sim","snapshots":7,"localBytesPerSecond":2.5e8,"stallFixedSeconds":0.02,
                 "stagingBytesPerSecond":2.2e8,"compressionRatio":1.7,"stragglerSpread":1.05,"fixedSeconds":0.25,
                 "rawDiskBytesPerSecond":6.5e8,"store":[{"writers":1,"bytesPerSecond":3.0e8},
                 {"writers":2,"bytesPerSecond":3.7e8},{"writers":4,"bytesPerSecond":4.1e8}]}""");
        Out r = plan("--calibration", cal.toString(), "--nodes", "1000", "--memory-per-node", "128GB", "--storage",
                "10PB",
                "--disk-size", "4TB", "--disk-bandwidth", "4GB/s", "--local-bandwidth", "4GB/s");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("| application stall (node-local SSD) | 32.00 s |"), r.out());
        assertTrue(r.out().contains("| established on the remote store | 12.80 s |"), r.out());
        // what the calibrated projection takes for granted is said beside it: 1000 writers on a curve probed to 4
        assertTrue(r.out().contains("assumes: each of the 1000 nodes stages at 220 MB/s")
                && r.out().contains("on the curve fitted to 1..4 writers probed (extrapolated beyond them), with its"
                + " ceiling at the target's disks") && r.out().contains("the snapshot waits for the slowest node (the"
                + " 1.05x straggler spread measured)"), r.out());
        Out j = plan("--calibration", cal.toString(), "--nodes", "1000", "--checkpoint-size", "128TB", "--json");
        assertEquals(0, j.exit(), j.err());
        JsonNode n = new ObjectMapper().readTree(j.out());
        assertEquals(128e9, n.get("target").get("bytesPerNode").asDouble(), 1);
        assertTrue(n.get("target").get("assumes").asText().startsWith("each of the 1000 nodes stages at"), j.out());
        double stall = n.get("stall").get("calibratedSeconds").asDouble();
        assertEquals(0.02 + 128e9 / 2.5e8 * 1.05, stall, 1e-6, "no target SSD given: the rate measured here");
        assertTrue(n.get("established").get("calibratedSeconds").asDouble() > stall);
        assertTrue(!n.get("established").has("idealSeconds"), "no storage given: no law for the remote tier");

        for (String[] bad : new String[][]{
                {"--calibration", tmp.resolve("none.json").toString()},
                {"--calibration", cal.toString(), "--nodes", "0", "--memory-per-node", "1GB"},
                {"--calibration", cal.toString(), "--nodes", "10"},
                {"--calibration", cal.toString(), "--nodes", "10", "--memory-per-node", "1GB", "--storage", "1PB"},
                {"--calibration", cal.toString(), "--calibrate-from", "sim"},
                {"--calibrate-from", "../x"}}) {
            Out o = plan(bad);
            assertEquals(1, o.exit(), String.join(" ", bad) + ": " + o.out() + o.err());
            assertEquals(1, o.err().strip().lines().count(), o.err());
            assertTrue(o.err().startsWith("ferry: "), o.err());
        }
        Files.writeString(cal, "{\"v\":1}");
        Out broken = plan("--calibration", cal.toString(), "--nodes", "10", "--memory-per-node", "1GB");
        assertTrue(broken.err().contains("calibration file") && broken.err().contains("'job'"), broken.err());
    }
}

package io.ferry.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link ScenarioPrograms#assertSameFile}: what a rank's file that differs is reported with, on real files. */
class ScenarioProgramsTest {
    @TempDir
    Path tmp;

    @Test
    void theSameFilePasses() throws Exception {
        Path out = Files.writeString(tmp.resolve("out.1.txt"), "step 0 a\nstep 1 b\ndone b\n");
        assertDoesNotThrow(() -> ScenarioPrograms.assertSameFile("step 0 a\nstep 1 b\ndone b\n", out, "rank 1's file",
                List.of()));
    }

    @Test
    void aFileWithLinesTwiceIsReportedByItsCountsItsFirstDifferenceDmtcpsBackupAndTheRunsRestores() throws Exception {
        Path out = Files.writeString(tmp.resolve("out.1.txt"), "step 0 a\nstep 1 b\nstep 1 b\nstep 2 c\ndone c\n");
        Files.writeString(tmp.resolve("out.1.txt-2026-11-30-15-00-25.bk"), "step 0 a\nstep 1 b\nstep 2 c\n");
        Files.writeString(tmp.resolve("out.0.txt"), "not this rank's\n");
        AssertionError e = assertThrows(AssertionError.class, () -> ScenarioPrograms.assertSameFile(
                "step 0 a\nstep 1 b\nstep 2 c\ndone c\n", out, "rank 1's file (dmtcp ring)",
                List.of("[ 6.9s] generation 0 established on the remote store", "step 40",
                        "[ 7.2s] rank 1 exited with 137",
                        "[10.5s] recovering: all ranks roll back to generation 0 (rank 1 exited with 137)")));
        String m = e.getMessage();
        assertTrue(m.startsWith("rank 1's file (dmtcp ring) differs from an uninterrupted run's: 4 lines expected, 5"
                + " found; first at line 3\n"), m);
        assertTrue(m.contains("  expected: step 2 c   found: step 1 b\n"), m);
        assertTrue(m.contains("beside it: out.1.txt-2026-11-30-15-00-25.bk 27 bytes"), m);
        assertTrue(!m.contains("out.0.txt") && !m.contains("step 40"), m);
        assertTrue(m.contains("recovering: all ranks roll back to generation 0"), m);
    }
}

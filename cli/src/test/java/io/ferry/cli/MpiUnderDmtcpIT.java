package io.ferry.cli;

import io.ferry.agent.capture.Capturers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Open MPI over TCP under DMTCP, as the user guide says it works: a whole {@code mpirun} of two
 * ranks of a program that knows nothing of Ferry (a ring of {@code MPI_Sendrecv}) is one rank
 * of {@code ferry run --capture dmtcp}, so DMTCP follows mpirun and the ranks it forks, and one
 * checkpoint takes them all with the messages between them. With {@code DMTCP_SIGCKPT=40}
 * (Open MPI uses DMTCP's default signal, SIGUSR2), {@code PMIX_MCA_gds=hash} (PMIx's shared-memory store
 * keeps segments under /tmp that mpirun removes when it aborts: restored, a rank found them gone) and
 * {@code HWLOC_COMPONENTS=no_os,stop}
 * (hwloc opens block device entries DMTCP cannot checkpoint). An MPI rank is SIGKILLed, mpirun
 * aborts, the job rolls back: mpirun and both ranks are restored and end with the results of
 * an uninterrupted run. A rank killed while a checkpoint is under way may leave DMTCP's
 * computation wedged (mpirun stopped at the checkpoint's barrier): the checkpoint then fails at
 * its timeout (20 s here), the computation is given up as lost and the job rolls back all the
 * same. Skipped, saying why, without DMTCP or Open MPI.
 */
class MpiUnderDmtcpIT {
    private static final int STEPS = 300;

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aWholeMpirunUnderDmtcpRollsBackAfterARankIsKilled() throws Exception {
        Optional<String> why = Capturers.of("dmtcp").unavailable();
        assumeTrue(why.isEmpty(),
                () -> "dmtcp unavailable: " + why.orElse("") + "; ../shared/tools/install-checkpointers.sh"
                + " builds it");
        Path program = compile();
        Path reference = Files.createDirectories(tmp.resolve("reference"));
        Process plain = new ProcessBuilder(mpirun(program, reference, "0")).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertEquals(0, plain.waitFor(), "mpirun uninterrupted");

        Path results = Files.createDirectories(tmp.resolve("results"));
        List<String> args = new ArrayList<>(List.of("run", "--job", "mpidmtcp", "--ranks", "1", "--interval", "3s",
                "--capture", "dmtcp", "--capture-timeout", "20s", "--auto-recover", "--http", "off", "--home",
                tmp.resolve("home").toString(), "--store", tmp.resolve("store").toString(), "--"));
        args.addAll(mpirun(program, results, "20"));
        ProcessBuilder pb = FerryProcess.builder(List.of(), args.toArray(String[]::new)).redirectErrorStream(true);
        pb.environment().put("DMTCP_SIGCKPT", "40");
        pb.environment().put("HWLOC_COMPONENTS", "no_os,stop");
        pb.environment().put("PMIX_MCA_gds", "hash");
        Process ferry = pb.start();
        try {
            Lines lines = new Lines(ferry, "mpi");
            lines.await("an established generation", l -> l.contains(" established on the "));
            // Killed: an MPI rank, where one runs. Seen in two rehearsals of three (2026-12-01): DMTCP had aborted the
            // ranks at a checkpoint by itself ("read invalid message, signature mismatch": a warning of its own
            // written into the stderr connection it was draining); that failure is rolled back the same way.
            ferry.descendants().filter(h -> h.info().command().map(c -> c.equals(program.toString())).orElse(false))
                    .reduce((a, b) -> b).ifPresent(ProcessHandle::destroyForcibly);
            String rolled = lines.await("the rollback",
                    l -> l.contains("recovering: all ranks roll back to generation"));
            long g = Lines.generationOf(rolled);
            lines.awaitAfter(lines.lines.indexOf(rolled), "the restore", l -> l.contains("restored generation " + g));
            assertTrue(ferry.waitFor(4, TimeUnit.MINUTES), "ferry run ended");
            assertEquals(0, ferry.exitValue(), String.join("\n", lines.lines));
            for (int r = 0; r < 2; r++) {
                assertEquals(Files.readString(reference.resolve("rank-" + r)),
                        Files.readString(results.resolve("rank-" + r)),
                        "MPI rank " + r + "'s result");
            }
        } finally {
            ferry.descendants().forEach(ProcessHandle::destroyForcibly);
            ferry.destroyForcibly();
        }
    }

    private static List<String> mpirun(Path program, Path results, String millis) {
        List<String> cmd = new ArrayList<>(List.of("mpirun"));
        if ("root".equals(System.getProperty("user.name"))) {
            cmd.add("--allow-run-as-root");
        }
        // mpi_yield_when_idle: a rank waiting in MPI_Sendrecv yields its core instead of spinning on it (two ranks on
        // a 2-core machine do not count as oversubscribed, so Open MPI would spin), as MpiClusterIT's do.
        // The ranks talk over loopback only, as TestBed's do without namespaces: with every interface they also
        // dialled the machine's own external address, where Open MPI warned that a connect stayed in progress; in a
        // rehearsal (2026-11-30) it did so again after the restore, and the restored job hung.
        cmd.addAll(List.of("--oversubscribe", "-np", "2", "--mca", "btl", "tcp,self", "--mca", "plm_rsh_agent", "false",
                "--mca", "btl_tcp_if_include", "127.0.0.0/8", "--mca", "oob_tcp_if_include", "127.0.0.0/8",
                "--mca", "mpi_yield_when_idle", "1", program.toString(), results.toString(), Integer.toString(STEPS),
                millis));
        return cmd;
    }

    private Path compile() throws Exception {
        Path src = tmp.resolve("ring_plain.c");
        try (var in = MpiUnderDmtcpIT.class.getResourceAsStream("/mpi/ring_plain.c")) {
            Files.copy(in, src);
        }
        Path exe = tmp.resolve("ring_plain");
        Process cc;
        try {
            cc = new ProcessBuilder("mpicc", "-O1", "-o", exe.toString(), src.toString()).redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            assumeTrue(false, "no mpicc (Debian: openmpi-bin libopenmpi-dev; .ci/run installs them)");
            throw e;
        }
        String said = new String(cc.getInputStream().readAllBytes());
        assertEquals(0, cc.waitFor(), "mpicc: " + said);
        return exe;
    }
}

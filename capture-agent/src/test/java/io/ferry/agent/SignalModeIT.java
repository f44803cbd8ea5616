package io.ferry.agent;

import io.ferry.agent.protocol.Line;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Signal mode with real processes: Ferry never ends its own rank with the protocol's signal. A
 * rank asked for a checkpoint before it installed its handler is waited for (within the HELLO
 * grace); one that never catches the signal is not signalled, and the capture fails saying so.
 */
class SignalModeIT {
    @TempDir
    Path tmp;
    private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor();
    private Process process;

    @AfterEach
    void stop() {
        poller.shutdownNow();
        if (process != null) {
            process.destroyForcibly();
        }
    }

    private RankProcess start(String script, Duration grace) throws Exception {
        Path ckpt = Files.createDirectories(tmp.resolve("ckpt"));
        ProcessBuilder pb = new ProcessBuilder("bash", "-c", script);
        pb.environment().put("FERRY_CKPT_DIR", ckpt.toString());
        process = pb.start();
        return new RankProcess(0, process, ckpt, "USR2").withHelloGrace(grace);
    }

    @Test
    void aRankThatInstallsItsHandlerLateIsWaitedForNotKilled() throws Exception {
        RankProcess rank =
                start("sleep 1; trap 'g=$(cat \"$FERRY_CKPT_DIR/REQUEST\"); echo x > \"$FERRY_CKPT_DIR/$g/state\";"
                + " : > \"$FERRY_CKPT_DIR/$g/DONE\"' USR2; while :; do sleep 0.05; done", Duration.ofSeconds(10));
        Line answer = rank.request(1, poller).get(30, TimeUnit.SECONDS);
        assertInstanceOf(Line.Done.class, answer, answer.toString());
        assertTrue(process.isAlive(), "the rank lives on");
        assertEquals("x\n", Files.readString(rank.generationDir(1).resolve("state")));
    }

    @Test
    void aRankThatNeverCatchesTheSignalIsNotSignalledAndTheCaptureSaysWhy() throws Exception {
        RankProcess rank = start("while :; do sleep 0.05; done", Duration.ofMillis(500));
        Line answer = rank.request(1, poller).get(30, TimeUnit.SECONDS);
        Line.Fail fail = assertInstanceOf(Line.Fail.class, answer);
        assertTrue(fail.reason().contains("not signalled"), fail.reason());
        assertTrue(fail.reason().contains("catches SIGUSR2"), fail.reason());
        // Had request() signalled it, the signal was sent before it returned (it waits for `kill`): it would be
        // pending now (SIGUSR2, or the SIGKILL the kernel turns a fatal signal into), or the rank gone.
        assertEquals("", signalled(process), "the rank was not signalled");
        assertTrue(process.isAlive(), "the rank lives on");
    }

    /**
     * What says {@code p} was sent SIGUSR2: its state when it is dead or dying, its pending
     * SIGUSR2 (signal 12) or SIGKILL (9) (/proc/PID/status); empty when none of that.
     */
    private static String signalled(Process p) throws IOException {
        List<String> status;
        try {
            status = Files.readAllLines(Path.of("/proc", Long.toString(p.pid()), "status"));
        } catch (NoSuchFileException gone) {
            return "gone";
        }
        StringBuilder said = new StringBuilder();
        for (String l : status) {
            String[] kv = l.split(":\\s*", 2);
            if (kv[0].equals("State") && (kv[1].startsWith("Z") || kv[1].startsWith("X"))) {
                said.append(l).append('\n');
            } else if ((kv[0].equals("SigPnd") || kv[0].equals("ShdPnd"))
                    && (Long.parseUnsignedLong(kv[1].trim(), 16) & (1L << 11 | 1L << 8)) != 0) {
                said.append(l).append('\n');
            }
        }
        return said.toString();
    }
}

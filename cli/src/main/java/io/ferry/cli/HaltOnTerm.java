package io.ferry.cli;

import io.ferry.coordinator.JobView;
import io.ferry.model.DaemonThreads;

import java.time.Duration;
import java.time.Instant;

/**
 * SIGTERM to {@code ferry run} halts the job as {@code ferry halt} does: Slurm sends SIGTERM
 * before the time limit with {@code --signal=TERM@SECONDS} (or {@code scancel --signal=TERM}),
 * and the job gets a final checkpoint instead of losing everything since the last one. The
 * handler asks the coordinator for a halt within the grace time and waits for the job to end
 * (then {@code ferry run} returns as for any end). If the grace runs out first, it exits with
 * 143, as SIGTERM would, and the shutdown hooks stop the ranks. SIGINT (Ctrl-C) still stops at
 * once. Uses {@code sun.misc.Signal} (module jdk.unsupported): Java has no other way to tell
 * SIGTERM from SIGINT.
 */
final class HaltOnTerm {
    private HaltOnTerm() {}

    static void install(JobRunner runner, Duration grace) {
        sun.misc.Signal.handle(new sun.misc.Signal("TERM"), sig -> {
            DaemonThreads.start("ferry-halt-on-term", () -> halt(runner, grace));
        });
    }

    private static void halt(JobRunner runner, Duration grace) {
        Instant deadline = Instant.now().plus(grace);
        System.out.println("ferry: SIGTERM: halting the job: a final checkpoint established before " + deadline
                + " (--halt-grace " + grace.toSeconds() + "s), then the ranks stop");
        try {
            runner.halt(deadline, "SIGTERM");
            System.out.println("ferry: SIGTERM: the halt is in the event log; waiting for the job's final checkpoint");
            while (Instant.now().isBefore(deadline.plusSeconds(2))) {
                if (runner.view().flatMap(JobView::success).isPresent()) {
                    return; // ended: ferry run returns and exits as for any end
                }
                Thread.sleep(200);
            }
            System.out.println("ferry: SIGTERM: the job did not halt within " + grace.toSeconds()
                    + " s; stopping it now");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            System.out.println("ferry: SIGTERM: halting failed (" + e.getMessage() + "); stopping the job now");
        }
        System.exit(143);
    }
}

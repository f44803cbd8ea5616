package io.ferry.cli;

import io.ferry.agent.client.FerryCheckpoint;

import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A socket-mode rank for {@link RestartRejectedIT}: counts to a target, saving its counter on
 * each checkpoint. Rank 0 rejects the first restart data it is ever given (RESTART_FAIL, as
 * a rank whose own checksum of its restart files failed), then waits to be stopped.
 * Args: target stepMillis dir (results go to dir/result.RANK; dir/rejected marks the rejection).
 */
public final class RejectingRank {
    private static long counter;

    public static void main(String[] args) throws Exception {
        long target = Long.parseLong(args[0]);
        long stepMillis = Long.parseLong(args[1]);
        Path dir = Path.of(args[2]);
        FerryCheckpoint ferry = FerryCheckpoint.fromEnvironment();
        Object lock = new Object();
        if (ferry.restartDir().isPresent()) {
            counter = Long.parseLong(Files.readString(ferry.restartDir().get().resolve("counter")).trim());
        }
        ferry.serve((d, generation) -> {
            synchronized (lock) {
                Files.writeString(d.resolve("counter"), Long.toString(counter));
            }
        });
        if (ferry.rank() == 0 && ferry.restartGeneration().isPresent()) {
            try {
                Files.writeString(dir.resolve("rejected"), Long.toString(ferry.restartGeneration().get()),
                        StandardOpenOption.CREATE_NEW);
                ferry.completeRestart(false, "checksum of counter does not match (test)");
                Thread.sleep(Long.MAX_VALUE); // the rollback stops this rank
            } catch (FileAlreadyExistsException once) {
                // rejected one restart already: this one is good
            }
        }
        while (true) {
            synchronized (lock) {
                if (counter >= target) {
                    break;
                }
                counter++;
            }
            Thread.sleep(stepMillis);
        }
        Files.writeString(dir.resolve("result." + ferry.rank()), Long.toString(counter));
    }
}

package io.ferry.agent;

import io.ferry.agent.client.FerryCheckpoint;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A real rank for tests, in socket mode through the client library: counts to a target,
 * saving its counter on each checkpoint and resuming from the restart directory.
 * Args: target stepMillis resultFile [hang]. With "hang" it never answers checkpoints, and writes
 * {@code resultFile.asked.RANK} when asked for one.
 */
public final class CountingRank {
    private static long counter;

    public static void main(String[] args) throws Exception {
        long target = Long.parseLong(args[0]);
        long stepMillis = Long.parseLong(args[1]);
        Path result = Path.of(args[2]);
        boolean hang = args.length > 3 && args[3].equals("hang");
        FerryCheckpoint ferry = FerryCheckpoint.fromEnvironment();
        Object lock = new Object();
        if (ferry.restartDir().isPresent()) {
            counter = Long.parseLong(Files.readString(ferry.restartDir().get().resolve("counter")).trim());
        }
        ferry.serve((dir, generation) -> {
            if (hang) { // says it was asked (a test then knows the rank is mid-checkpoint), and never answers
                Files.writeString(result.resolveSibling(result.getFileName() + ".asked." + ferry.rank()),
                        Long.toString(generation));
                Thread.sleep(Long.MAX_VALUE);
            }
            synchronized (lock) {
                Files.writeString(dir.resolve("counter"), Long.toString(counter));
            }
        });
        while (true) {
            synchronized (lock) {
                if (counter >= target) {
                    break;
                }
                counter++;
            }
            Thread.sleep(stepMillis);
        }
        Files.writeString(result.resolveSibling(result.getFileName() + "." + ferry.rank()), Long.toString(counter));
    }
}

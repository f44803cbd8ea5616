package io.ferry.agent;

import io.ferry.agent.capture.Capturer;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Starts one rank's process: its program, wrapped for a transparent capture method, or that
 * method's restore of the rank's image. Ranks share the agent's standard streams, except under
 * a method that needs streams Ferry owns ({@link Capturer#ownsStreams}): those read
 * {@code /dev/null} and write to pipes whose bytes a thread per stream copies to the agent's
 * own. Stateless.
 */
final class RankStart {
    private RankStart() {
    }

    /**
     * @param pb          the rank's environment; its command and redirects are set here
     * @param restartFrom the rank's verified image to restore, or null for a fresh start
     */
    static Process start(ProcessBuilder pb, List<String> command, Optional<Capturer> method, int rank, Path rankDir,
                         Path restartFrom) throws IOException {
        if (method.isEmpty()) {
            return pb.command(command).inheritIO().start();
        }
        Capturer c = method.get();
        if (c.ownsStreams()) {
            pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.PIPE).redirectError(ProcessBuilder.Redirect.PIPE);
        } else {
            pb.inheritIO();
        }
        Process p = restartFrom != null && c.restores() ? c.restore(restartFrom, rankDir, pb)
                : pb.command(c.launchCommand(command, rankDir)).start();
        if (c.ownsStreams()) {
            StreamPump.start(p.getInputStream(), System.out, "ferry-rank-" + rank + "-stdout");
            StreamPump.start(p.getErrorStream(), System.err, "ferry-rank-" + rank + "-stderr");
        }
        return p;
    }
}

package io.ferry.agent;

import io.ferry.model.Names;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * One node agent's settings for one job.
 *
 * @param command        the program and arguments every rank runs
 * @param captureTimeout how long a checkpoint waits for every rank's answer
 * @param signal         the signal of signal mode (name without SIG, e.g. USR2)
 * @param socketDir      where the control socket goes (Unix socket paths are limited to ~107 bytes)
 */
public record AgentConfig(String job, int ranks, String node, List<String> command, Duration captureTimeout,
                          String signal, Path socketDir) {
    public AgentConfig {
        Names.requireJob(job);
        if (ranks < 1) {
            throw new IllegalArgumentException("ranks must be >= 1, got " + ranks);
        }
        command = List.copyOf(command);
        if (command.isEmpty()) {
            throw new IllegalArgumentException("no program to run: give it after --");
        }
        if (!signal.matches("[A-Z0-9]{2,8}")) {
            throw new IllegalArgumentException("signal must be a name like USR2, got '" + signal + "'");
        }
    }
}

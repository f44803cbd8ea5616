package io.ferry.agent;

import io.ferry.model.Names;

import java.nio.file.Path;
import java.util.List;

/**
 * One node agent's settings for one job.
 *
 * @param command   the program and arguments every rank runs
 * @param quiesce   how a checkpoint stops the ranks (capture method, timeout, signal)
 * @param socketDir where the control socket goes (Unix socket paths are limited to ~107 bytes)
 */
public record AgentConfig(String job, int ranks, String node, List<String> command, Quiesce quiesce, Path socketDir) {
    public AgentConfig {
        Names.requireJob(job);
        if (ranks < 1) {
            throw new IllegalArgumentException("ranks must be >= 1, got " + ranks);
        }
        command = List.copyOf(command);
        if (command.isEmpty()) {
            throw new IllegalArgumentException("no program to run: give it after --");
        }
    }
}

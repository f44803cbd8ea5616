package io.ferry.agent;

import io.ferry.model.Names;
import io.ferry.model.Placement;
import io.ferry.model.RankSet;

import java.nio.file.Path;
import java.util.List;

/**
 * One node agent's settings for one job.
 *
 * @param ranks     the ranks of the job this node runs
 * @param nranks    the job's size ({@code FERRY_NRANKS})
 * @param command   the program and arguments every rank runs
 * @param quiesce   how a checkpoint stops the ranks (capture method, timeout, signal)
 * @param socketDir where the control socket goes (Unix socket paths are limited to ~107 bytes)
 */
public record AgentConfig(String job, RankSet ranks, int nranks, String node, List<String> command, Quiesce quiesce,
                          Path socketDir) {
    public AgentConfig {
        Names.requireJob(job);
        Placement.requireNode(node);
        if (ranks.isEmpty() || nranks < 1 || ranks.stream().anyMatch(r -> r >= nranks)) {
            throw new IllegalArgumentException("node " + node + " needs ranks within 0.." + (nranks - 1) + ", got '"
                    + ranks + "'");
        }
        command = List.copyOf(command);
        if (command.isEmpty()) {
            throw new IllegalArgumentException("no program to run: give it after --");
        }
    }

    /** Every rank of an {@code nranks}-rank job on this one node. */
    public AgentConfig(String job, int nranks, String node, List<String> command, Quiesce quiesce, Path socketDir) {
        this(job, RankSet.range(0, nranks), nranks, node, command, quiesce, socketDir);
    }
}

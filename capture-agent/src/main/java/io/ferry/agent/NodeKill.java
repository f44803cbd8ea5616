package io.ferry.agent;

import io.ferry.staging.internal.FileTrees;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Collection;

/**
 * {@code ferry chaos kill-node}: this node is lost as a power cut would lose it. Every rank of
 * every job is SIGKILLed, the cache directory removed, and the process ends at once (exit 137,
 * no shutdown hooks, no last words to the log). {@link AgentService} runs it only where chaos
 * was allowed.
 */
final class NodeKill {
    /** The agent's logger: these lines are the agent's, as they were before they moved here. */
    private static final Logger LOG = LoggerFactory.getLogger(AgentService.class);

    private NodeKill() {
    }

    /** Kills the ranks of {@code jobs}, removes {@code home}'s cache and halts; never returns. */
    static void now(String node, Path home, Collection<JobOnNode> jobs) {
        LOG.info("ferry agent " + node + ": chaos: killing this node (its ranks, its cache, this agent)");
        for (JobOnNode j : jobs) {
            j.agent().ifPresent(a -> {
                try {
                    a.stopRanks();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        for (int attempt = 1; ; attempt++) { // staging may still be writing into it: try again
            try {
                FileTrees.delete(home.resolve("cache"));
                break;
            } catch (IOException e) {
                if (attempt == 5) {
                    LOG.warn("ferry agent " + node + ": chaos: removing the cache failed: " + e.getMessage());
                    break;
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException stop) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        Runtime.getRuntime().halt(137);
    }
}

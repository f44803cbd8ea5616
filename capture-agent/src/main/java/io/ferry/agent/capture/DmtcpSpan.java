package io.ferry.agent.capture;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * One DMTCP computation for every rank of a job across its nodes, as DMTCP's papers run it: the
 * agent of rank 0's node (the lead) starts the one {@code dmtcp_coordinator} of each start of
 * the job on its own routable address and asks every generation's one blocking checkpoint; the
 * other nodes' ranks join that coordinator, and their agents learn where it listens and how each
 * checkpoint ended by asking the lead's agent ({@link DmtcpBoard}, over the peer port). Each node
 * still collects and stages its own ranks' files.
 *
 * @param job      the job
 * @param leads    whether this node is the lead
 * @param leadHost the lead's address, where its coordinator is reached ({@code --coord-host})
 * @param launchId the start of the job this launch belongs to: a node joins that start's coordinator only
 * @param nranks   the job's size: every rank joins the one coordinator
 * @param board    this agent's board, where a lead posts what the others ask
 * @param lead     asks the lead's agent a question of {@link DmtcpBoard}
 */
public record DmtcpSpan(String job, boolean leads, String leadHost, long launchId, int nranks, DmtcpBoard board,
                        Asker lead) {
    private static final Logger LOG = LoggerFactory.getLogger(DmtcpSpan.class);
    /** Ferry's patch for ranks joined by TCP across hosts, as {@code tools/build-dmtcp.sh} lists it. */
    static final String CROSS_HOST_PATCH = "0001-cross-host-sockets.patch";

    /** Asks the lead's agent: the text after its OK, empty for "not yet", an exception for an error. */
    @FunctionalInterface
    public interface Asker {
        Optional<String> ask(String op, long number) throws IOException;
    }

    /**
     * Whether the DMTCP on {@code PATH} was built with Ferry's patch for ranks joined by TCP across
     * hosts ({@code tools/build-dmtcp.sh}, which lists its patches in
     * {@code <prefix>/share/ferry/dmtcp-patches}). Upstream DMTCP hangs at every checkpoint of such
     * ranks and cannot restore them on different hosts; ranks that do not talk across hosts need
     * no patch.
     */
    public static boolean crossHostSockets() {
        Optional<Path> launch = ExternalTool.onPath("dmtcp_launch");
        if (launch.isEmpty()) {
            return false;
        }
        Path list = launch.get().toAbsolutePath().getParent().resolveSibling("share").resolve("ferry")
                .resolve("dmtcp-patches");
        try {
            return Files.readAllLines(list).contains(CROSS_HOST_PATCH);
        } catch (IOException none) {
            return false;
        }
    }

    /** Whether a newer start of the job was received while this one is still being put together. */
    boolean superseded() {
        return board.superseded(job, launchId);
    }

    /**
     * The coordinator of this start: on the lead, started now in {@code dir}, on the lead's address,
     * and posted on the board for the other nodes; on another node, the one the lead's agent names
     * for this launch, asked until it has started it.
     */
    DmtcpCoordinator coordinator(Path dir) throws IOException {
        if (leads) {
            if (!crossHostSockets()) {
                LOG.warn("job {}: the DMTCP on PATH lacks Ferry's patch for sockets"
                        + " across hosts (tools/build-dmtcp.sh): ranks that talk"
                        + " over TCP across nodes hang at every checkpoint", job);
            }
            DmtcpCoordinator c = DmtcpCoordinator.start(dir, leadHost);
            board.leading(job, launchId, c.port());
            return c;
        }
        long until = System.nanoTime() + DmtcpCoordinator.PATIENCE.toNanos();
        while (true) {
            Optional<String> port = lead.ask("COORD", launchId);
            if (port.isPresent()) {
                if (!port.get().matches("[0-9]{1,5}")) {
                    throw new IOException("the lead node answered '" + port.get()
                            + "' for its DMTCP coordinator's port");
                }
                return DmtcpCoordinator.remote(leadHost, port.get());
            }
            if (superseded()) {
                throw new SupersededLaunchException("a newer start of the job came before the lead node started this"
                        + " one's DMTCP coordinator", null);
            }
            if (System.nanoTime() > until) {
                throw new IOException("the lead node's agent started no DMTCP coordinator for this start of the job"
                        + " within " + DmtcpCoordinator.PATIENCE.toSeconds() + " s");
            }
            DmtcpCoordinator.pause(100);
        }
    }

    /**
     * On a node that does not lead: waits until the lead's agent says how generation {@code g}'s one
     * checkpoint ended; returns its stall (every rank, this node's too, was stopped for it), or
     * fails with the lead's reason, or after {@code timeout}.
     */
    Duration awaitCheckpoint(long g, Duration timeout) throws IOException {
        long until = System.nanoTime() + timeout.toNanos();
        Optional<String> said;
        try {
            while ((said = lead.ask("CKPT", g)).isEmpty()) {
                if (System.nanoTime() > until) {
                    throw new IOException("the lead node did not say within " + timeout.toSeconds()
                            + " s that its DMTCP" + " checkpoint of generation " + g + " ended");
                }
                DmtcpCoordinator.pause(50);
            }
        } catch (IOException e) {
            throw new IOException("generation " + g + ": the job's DMTCP checkpoint failed on the lead node: "
                    + e.getMessage(), e);
        }
        try {
            return Duration.ofMillis(Long.parseLong(said.get().trim()));
        } catch (NumberFormatException e) {
            throw new IOException("the lead node answered '" + said.get() + "' for generation " + g + "'s checkpoint");
        }
    }
}

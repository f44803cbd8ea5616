package io.ferry.agent.capture;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What this agent tells the other agents of a job about the DMTCP computation it leads for them
 * (rank 0's node, see {@link DmtcpSpan}): where that start's coordinator listens ({@code COORD}
 * with the launch id: {@code OK PORT}, {@code NO} until it is started for that very launch) and
 * how each generation's one checkpoint of every rank ended ({@code CKPT} with the generation:
 * {@code OK STALL_MILLIS}, {@code ERR WHY}, {@code NO} while it runs or before it is asked). One
 * per agent, answered on its peer port; thread-safe.
 */
public final class DmtcpBoard {
    /** Outcomes kept per job: a node asks about the generation in flight, never about old ones. */
    private static final int KEPT = 16;

    private static final class Led {
        final long launchId;
        final String port;
        final TreeMap<Long, String> outcomes = new TreeMap<>();

        Led(long launchId, String port) {
            this.launchId = launchId;
            this.port = port;
        }
    }

    private final Map<String, Led> jobs = new ConcurrentHashMap<>();
    /** The newest launch id received for each job, as soon as its command is read (before it is carried out). */
    private final Map<String, Long> received = new ConcurrentHashMap<>();

    /** A launch of {@code job} with {@code launchId} was received: any start with a lower id is superseded. */
    public void launched(String job, long launchId) {
        received.merge(job, launchId, Math::max);
    }

    /**
     * Whether a launch newer than {@code launchId} of {@code job} came: a start still waiting for its
     * ranks gives up at once, as they will not come (every node restarts for the newer one).
     */
    boolean superseded(String job, long launchId) {
        return received.getOrDefault(job, 0L) > launchId;
    }

    /** This agent leads {@code job}'s computation of launch {@code launchId}, its coordinator on {@code port}. */
    void leading(String job, long launchId, String port) {
        jobs.put(job, new Led(launchId, port));
    }

    /** How the checkpoint of {@code generation} ended: "OK STALL_MILLIS" or "ERR WHY". */
    void checkpointed(String job, long generation, String outcome) {
        Led led = jobs.get(job);
        if (led != null) {
            synchronized (led) {
                led.outcomes.put(generation, outcome.replace('\n', ' '));
                while (led.outcomes.size() > KEPT) {
                    led.outcomes.pollFirstEntry();
                }
            }
        }
    }

    /** The job's computation ended here (its ranks stopped, or the job left the node). */
    void forget(String job) {
        jobs.remove(job);
    }

    /** The job left this node: nothing is kept of it. */
    public void release(String job) {
        jobs.remove(job);
        received.remove(job);
    }

    /** The answer line to a peer's question ({@code COORD} or {@code CKPT}). */
    public String answer(String op, String job, long number) {
        Led led = jobs.get(job);
        if (led == null) {
            return "NO";
        }
        if (op.equals("COORD")) {
            return led.launchId == number ? "OK " + led.port : "NO";
        }
        synchronized (led) {
            return led.outcomes.getOrDefault(number, "NO");
        }
    }
}

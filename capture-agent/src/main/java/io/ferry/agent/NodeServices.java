package io.ferry.agent;

import io.ferry.eventlog.KafkaLog;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * What every job on a node shares with the node's {@link AgentService}.
 *
 * @param log       the event log the node's reports go to
 * @param node      the node's name
 * @param home      the agent's home (the node cache is {@code home/cache})
 * @param heartbeat how often a job's heartbeat is sent
 * @param secrets   this host's store credentials, by key
 * @param spool     where ranks started by the site's launcher wait, or null where none are taken
 * @param meters    the node's meters (fed with the agents' reports), or null where none are kept
 * @param stopping  true once the agent is closing: a report still waiting for the log gives up
 */
record NodeServices(KafkaLog log, String node, Path home, Duration heartbeat, Map<String, String> secrets,
                    RankSpool spool, AgentMeters meters, BooleanSupplier stopping) {
}

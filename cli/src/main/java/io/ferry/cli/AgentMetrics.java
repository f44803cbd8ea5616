package io.ferry.cli;

import io.ferry.agent.AgentMeters;
import io.ferry.agent.AgentService;
import io.ferry.agent.MetricsEndpoint;
import io.ferry.eventlog.HostPort;

import java.io.IOException;
import java.io.PrintStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Optional;

/**
 * A node agent's Prometheus endpoint as {@code ferry agent} and {@code ferry run} start it: the
 * process key {@code agent.metrics} ({@link MetricsEndpoint#KEY}: {@code HOST:PORT} or
 * {@code off}, in the configuration file or as {@code FERRY_AGENT_METRICS}; default
 * {@value MetricsEndpoint#DEFAULT}) says where; a taken port falls back to a free one, said in
 * the one line that gives the address, as the coordinator's {@code --http} does.
 */
final class AgentMetrics {
    private AgentMetrics() {}

    /** {@code HOST:PORT} (port 0: any), or empty for {@code off}; anything else is a one-line error naming the key. */
    static Optional<InetSocketAddress> address(String value) {
        if (value.equals("off")) {
            return Optional.empty();
        }
        HostPort hp;
        try {
            hp = HostPort.parse(value, MetricsEndpoint.KEY);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(MetricsEndpoint.KEY + " must be HOST:PORT (e.g. "
                    + MetricsEndpoint.DEFAULT + ") or off, got '" + value + "'");
        }
        return Optional.of(new InetSocketAddress(hp.host(), hp.port()));
    }

    /** Where this host's configuration puts the agent's endpoint; a bad value fails before anything starts. */
    static Optional<InetSocketAddress> configured(Map<String, String> env) throws IOException {
        return address(Configuration.processSetting(MetricsEndpoint.KEY, env).orElse(MetricsEndpoint.DEFAULT));
    }

    /**
     * Meters {@code agent} on the process's registry (before it starts) and serves that registry
     * at {@code address}, if any, saying where on {@code out}; null when off.
     */
    static MetricsEndpoint start(AgentService agent, Optional<InetSocketAddress> address, PrintStream out)
            throws IOException {
        var registry = ProcessMetrics.registry();
        agent.metered(new AgentMeters(registry));
        if (address.isEmpty()) {
            return null;
        }
        MetricsEndpoint m;
        try {
            m = MetricsEndpoint.start(address.get(), registry::scrape);
        } catch (BindException e) {
            m = MetricsEndpoint.start(new InetSocketAddress(address.get().getAddress(), 0), registry::scrape);
            out.println("ferry: port " + address.get().getPort()
                    + " is taken; the agent's metrics listen on another port");
        }
        out.println("ferry: agent " + agent.node() + " metrics " + m.uri() + " (Prometheus; " + MetricsEndpoint.KEY
                + ")");
        return m;
    }
}

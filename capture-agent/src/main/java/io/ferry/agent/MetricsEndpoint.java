package io.ferry.agent;

import io.ferry.model.DaemonThreads;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * A node agent's HTTP face for Prometheus: {@code GET /metrics} answers the text a
 * {@code Supplier} gives (the process's registry, scraped), anything else 404, any method but
 * GET and HEAD 405. Read-only and without a token, as node exporters are: it tells job names,
 * byte counts and timings, never data or credentials; bind it to the address the site's
 * Prometheus scrapes from. One daemon thread. Thread-safe.
 */
public final class MetricsEndpoint implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(MetricsEndpoint.class);
    /** The configuration key of where it listens: {@code HOST:PORT} or {@code off}. */
    public static final String KEY = "agent.metrics";
    /** Beside the coordinator's 7460; loopback, so nothing is exposed that a site did not ask for. */
    public static final String DEFAULT = "127.0.0.1:7461";
    private static final String TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8";

    private final HttpServer server;
    private final Supplier<String> text;
    private final ExecutorService thread = Executors.newSingleThreadExecutor(
            DaemonThreads.named("ferry-agent-metrics"));

    private MetricsEndpoint(HttpServer server, Supplier<String> text) {
        this.server = server;
        this.text = text;
    }

    /**
     * Serves {@code text} at {@code address} (port 0: any free port); a taken port is a {@link java.net.BindException}.
     */
    public static MetricsEndpoint start(InetSocketAddress address, Supplier<String> text) throws IOException {
        MetricsEndpoint m = new MetricsEndpoint(HttpServer.create(address, 8), text);
        m.server.createContext("/", m::handle);
        m.server.setExecutor(m.thread);
        m.server.start();
        return m;
    }

    /** Where Prometheus scrapes it, e.g. {@code http://127.0.0.1:7461/metrics}. */
    public URI uri() {
        InetSocketAddress a = server.getAddress();
        String host = a.getAddress().isAnyLocalAddress() ? "127.0.0.1" : a.getAddress().getHostAddress();
        return URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort() + "/metrics");
    }

    private void handle(HttpExchange x) throws IOException {
        try (x) {
            String method = x.getRequestMethod();
            if (!"GET".equals(method) && !"HEAD".equals(method)) {
                x.getResponseHeaders().set("Allow", "GET, HEAD");
                send(x, 405, "only GET is served\n");
            } else if (!x.getRequestURI().getPath().equals("/metrics")) {
                send(x, 404, "no such resource: " + x.getRequestURI().getPath() + " (try /metrics)\n");
            } else {
                String body;
                try {
                    body = text.get();
                } catch (RuntimeException e) { // a meter that throws must not take the endpoint down
                    LOG.warn("ferry agent: metrics scrape failed: " + e);
                    send(x, 500, "internal error (the agent's stderr says which)\n");
                    return;
                }
                send(x, 200, body);
            }
        }
    }

    private static void send(HttpExchange x, int code, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        x.getResponseHeaders().set("Content-Type", code == 200 ? TEXT_FORMAT : "text/plain; charset=utf-8");
        x.getResponseHeaders().set("Cache-Control", "no-store");
        boolean head = "HEAD".equals(x.getRequestMethod());
        x.sendResponseHeaders(code, head ? -1 : bytes.length);
        if (!head) {
            try (OutputStream out = x.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        thread.shutdownNow();
    }
}

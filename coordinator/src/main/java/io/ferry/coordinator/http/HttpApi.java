package io.ferry.coordinator.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.ferry.coordinator.Coordinator;
import io.ferry.coordinator.JobView;
import io.ferry.model.DaemonThreads;
import io.ferry.model.Durations;
import io.ferry.model.Names;

import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * The coordinator's HTTP face, read-only: {@code GET /api/jobs} (every job as {@code ferry status
 * --json} prints it), {@code GET /api/jobs/JOB} (the same plus every generation and its forecast),
 * {@code GET /metrics} (Prometheus) and {@code GET /} (the dashboard). {@code ?mtbf=24h} sets
 * the MTBF for the Young/Daly interval. With a bearer token ({@code --http-token-file}), every
 * request must carry {@code Authorization: Bearer TOKEN} (compared in constant time) or gets 401;
 * without one it is open: bind it to loopback (the default of {@code ferry run}) or to a
 * network only operators reach. A 500 says nothing of the failure; the coordinator's stderr does.
 */
public final class HttpApi implements Closeable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final Coordinator coordinator;
    private final HttpServer server;
    /** SHA-256 of the bearer token, or null when requests need none. */
    private final byte[] tokenDigest;
    /** This process's Micrometer meters in the text format, appended to the job-state families of /metrics. */
    private final Supplier<String> processMetrics;
    private final ExecutorService threads = Executors.newFixedThreadPool(2, DaemonThreads.named("ferry-http"));

    private HttpApi(Coordinator coordinator, HttpServer server, byte[] tokenDigest,
                    Supplier<String> processMetrics) {
        this.coordinator = coordinator;
        this.processMetrics = processMetrics;
        this.server = server;
        this.tokenDigest = tokenDigest;
    }

    /** Serves {@code coordinator} on {@code address} (port 0: any free port), to anyone who reaches it. */
    public static HttpApi start(Coordinator coordinator, InetSocketAddress address) throws IOException {
        return start(coordinator, address, Optional.empty());
    }

    /** As {@link #start(Coordinator, InetSocketAddress)}, requiring {@code token} as a bearer token when given. */
    public static HttpApi start(Coordinator coordinator, InetSocketAddress address, Optional<String> token)
            throws IOException {
        return start(coordinator, address, token, () -> "");
    }

    /**
     * As {@link #start(Coordinator, InetSocketAddress, Optional)}, {@code GET /metrics} serving
     * {@code processMetrics} (this process's registry, e.g. Micrometer's Prometheus scrape: JVM,
     * histograms) after the job-state families; their names must differ from those.
     */
    public static HttpApi start(Coordinator coordinator, InetSocketAddress address, Optional<String> token,
                                Supplier<String> processMetrics) throws IOException {
        byte[] digest = token.map(t -> {
            if (t.isBlank()) {
                throw new IllegalArgumentException("the HTTP bearer token is empty");
            }
            return sha256(t);
        }).orElse(null);
        HttpApi api = new HttpApi(coordinator, HttpServer.create(address, 16), digest, processMetrics);
        api.server.createContext("/", api::handle);
        api.server.setExecutor(api.threads);
        api.server.start();
        return api;
    }

    /** Where it listens, e.g. {@code http://127.0.0.1:7460/}. */
    public URI uri() {
        InetSocketAddress a = server.getAddress();
        String host = a.getAddress().isAnyLocalAddress() ? "127.0.0.1" : a.getAddress().getHostAddress();
        return URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort() + "/");
    }

    private void handle(HttpExchange x) throws IOException {
        try (x) {
            route(x);
        }
    }

    private void route(HttpExchange x) throws IOException {
        try {
            if (!authorized(x.getRequestHeaders().getFirst("Authorization"))) {
                x.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"ferry\"");
                error(x, 401, "this coordinator requires a bearer token: Authorization: Bearer TOKEN");
                return;
            }
            if (!"GET".equals(x.getRequestMethod()) && !"HEAD".equals(x.getRequestMethod())) {
                x.getResponseHeaders().set("Allow", "GET, HEAD");
                error(x, 405, "only GET is served: the API is read-only");
                return;
            }
            String path = x.getRequestURI().getPath();
            double mtbf = mtbf(x.getRequestURI().getRawQuery());
            long now = System.currentTimeMillis();
            if (path.equals("/")) {
                send(x, 200, "text/html; charset=utf-8", coordinator.query(j -> Dashboard.render(j, now)));
            } else if (path.equals("/metrics")) {
                long malformed = coordinator.malformedEvents();
                send(x, 200, "text/plain; version=0.0.4; charset=utf-8", 
                        coordinator.query(j -> Metrics.render(j, malformed, now)) + processMetrics.get());
            } else if (path.equals("/api/jobs") || path.equals("/api/jobs/")) {
                ArrayNode a = coordinator.query(j -> {
                    ArrayNode arr = JSON.createArrayNode();
                    j.all().forEach(v -> arr.add(JobJson.summary(v, mtbf, now)));
                    return arr;
                });
                json(x, 200, a);
            } else if (path.startsWith("/api/jobs/")) {
                String job = path.substring("/api/jobs/".length());
                Names.requireJob(job);
                Optional<ObjectNode> n = coordinator.query(j -> j.get(job).map(v -> detail(v, mtbf, now)));
                if (n.isPresent()) {
                    json(x, 200, n.get());
                } else {
                    error(x, 404, "no job " + job + " in the log");
                }
            } else {
                error(x, 404, "no such resource: " + path + " (try /, /api/jobs, /api/jobs/JOB, /metrics)");
            }
        } catch (IllegalArgumentException e) {
            error(x, 400, e.getMessage());
        } catch (RuntimeException e) {
            System.err.println("ferry coordinator: HTTP " + x.getRequestURI().getPath() + " failed: " + e);
            error(x, 500, "internal error (the coordinator's log says which)");
        }
    }

    /** Whether a request with this Authorization header may be served; constant time in the token's bytes. */
    private boolean authorized(String header) {
        if (tokenDigest == null) {
            return true;
        }
        String prefix = "Bearer ";
        if (header == null || !header.regionMatches(true, 0, prefix, 0, prefix.length())) {
            return false;
        }
        // Both sides hashed first: equal lengths, so the comparison's time says nothing of the token.
        return MessageDigest.isEqual(tokenDigest, sha256(header.substring(prefix.length()).trim()));
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ObjectNode detail(JobView v, double mtbf, long now) {
        ObjectNode n = JobJson.summary(v, mtbf, now);
        n.set("generations", JobJson.generations(v));
        return n;
    }

    /** The {@code mtbf} query parameter in seconds, NaN when absent. */
    private static double mtbf(String rawQuery) {
        if (rawQuery == null) {
            return Double.NaN;
        }
        for (String kv : rawQuery.split("&")) {
            int eq = kv.indexOf('=');
            String k = URLDecoder.decode(eq < 0 ? kv : kv.substring(0, eq), StandardCharsets.UTF_8);
            if (k.equals("mtbf")) {
                String v = eq < 0 ? "" : URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8);
                double s = Durations.parse(v).toMillis() / 1000.0;
                if (!(s > 0)) {
                    throw new IllegalArgumentException("mtbf must be above zero, got '" + v + "'");
                }
                return s;
            }
        }
        return Double.NaN;
    }

    private static void json(HttpExchange x, int code, Object body) throws IOException {
        send(x, code, "application/json", JSON.writerWithDefaultPrettyPrinter().writeValueAsString(body));
    }

    private static void error(HttpExchange x, int code, String message) throws IOException {
        json(x, code, JSON.createObjectNode().put("error", message == null ? "unknown" : message));
    }

    private static void send(HttpExchange x, int code, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        x.getResponseHeaders().set("Content-Type", type);
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
        threads.shutdownNow();
    }
}

package io.ferry.agent;

import org.junit.jupiter.api.Test;

import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MetricsEndpointTest {
    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void servesTheTextAtMetricsOnly() throws Exception {
        try (MetricsEndpoint m = MetricsEndpoint.start(new InetSocketAddress("127.0.0.1", 0), () -> "up 1\n")) {
            assertTrue(m.uri().toString().matches("http://127\\.0\\.0\\.1:\\d+/metrics"), m.uri().toString());
            HttpResponse<String> ok = send(HttpRequest.newBuilder(m.uri()));
            assertEquals(200, ok.statusCode());
            assertEquals("up 1\n", ok.body());
            assertTrue(ok.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
            assertEquals(404, send(HttpRequest.newBuilder(m.uri().resolve("/api"))).statusCode());
            assertEquals(405,
                    send(HttpRequest.newBuilder(m.uri()).POST(HttpRequest.BodyPublishers.noBody())).statusCode());
        }
    }

    @Test
    void aFailingScrapeIsA500AndTheEndpointStaysUp() throws Exception {
        int[] calls = {0};
        try (MetricsEndpoint m = MetricsEndpoint.start(new InetSocketAddress("127.0.0.1", 0), () -> {
            if (calls[0]++ == 0) {
                throw new IllegalStateException("a meter broke");
            }
            return "up 1\n";
        })) {
            assertEquals(500, send(HttpRequest.newBuilder(m.uri())).statusCode());
            assertEquals(200, send(HttpRequest.newBuilder(m.uri())).statusCode());
        }
    }

    @Test
    void aTakenPortIsABindException() throws Exception {
        try (MetricsEndpoint first = MetricsEndpoint.start(new InetSocketAddress("127.0.0.1", 0), () -> "")) {
            URI u = first.uri();
            assertThrows(BindException.class,
                    () -> MetricsEndpoint.start(new InetSocketAddress("127.0.0.1", u.getPort()), () -> ""));
        }
    }
}

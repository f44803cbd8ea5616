package io.ferry.stores.s3;

import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * A real S3 server for tests and benchmarks: s3proxy on loopback over a filesystem blob store.
 * It can be stopped and started again on the same port (an outage), keeping its data.
 */
public final class S3ProxyServer implements AutoCloseable {
    public static final String ACCESS_KEY = "ferry-access";
    public static final String SECRET_KEY = "ferry-secret-key";

    private final Path dir;
    private final int port;
    private final boolean ignoreUnknownHeaders;
    private S3Proxy proxy;

    public S3ProxyServer(Path dir) throws Exception {
        this(dir, false);
    }

    /**
     * @param ignoreUnknownHeaders accept x-amz-* headers s3proxy does not implement (the transfer
     *                             manager's async client sends one); Ferry's own client needs none
     */
    public S3ProxyServer(Path dir, boolean ignoreUnknownHeaders) throws Exception {
        this.dir = dir;
        this.ignoreUnknownHeaders = ignoreUnknownHeaders;
        try (ServerSocket s = new ServerSocket(0)) {
            this.port = s.getLocalPort();
        }
        start();
    }

    /** Creates a bucket (a directory of the blob store). */
    public S3ProxyServer bucket(String name) throws IOException {
        Files.createDirectories(dir.resolve(name));
        return this;
    }

    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + port);
    }

    /** Store options that reach this server. */
    public Map<String, String> options() {
        return Map.of("s3.endpoint", endpoint().toString(), "s3.access-key-id", ACCESS_KEY,
                "s3.secret-access-key", SECRET_KEY);
    }

    public synchronized void start() throws Exception {
        if (proxy != null) {
            return;
        }
        Files.createDirectories(dir);
        S3Proxy p = S3Proxy.builder()
                .blobStore(new FilesystemNio2BlobStore(dir.toString()))
                .endpoint(endpoint())
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
                .ignoreUnknownHeaders(ignoreUnknownHeaders)
                .build();
        p.start();
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!"STARTED".equals(p.getState())) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("s3proxy did not start: " + p.getState());
            }
            Thread.sleep(10);
        }
        proxy = p;
    }

    public synchronized void stop() throws Exception {
        if (proxy != null) {
            proxy.stop();
            proxy = null;
        }
    }

    @Override
    public void close() throws Exception {
        stop();
    }
}

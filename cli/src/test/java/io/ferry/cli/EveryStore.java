package io.ferry.cli;

import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import io.ferry.stores.hdfs.MiniHdfs;
import io.ferry.stores.s3.S3ProxyServer;

import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The three kinds of store a repository-level test runs on, each real: a directory ({@code file:}),
 * a MiniDFSCluster ({@code hdfs:}) and s3proxy on loopback ({@code s3:}), started once for a test
 * class. Each {@link #open} is a fresh, empty store of the kind.
 */
final class EveryStore implements AutoCloseable {
    final Path dir;
    final MiniHdfs hdfs;
    final S3ProxyServer s3;
    private final AtomicInteger opened = new AtomicInteger();

    EveryStore(Path dir) throws Exception {
        this.dir = dir;
        this.hdfs = new MiniHdfs(dir.resolve("hdfs"));
        S3ProxyServer started;
        try {
            started = new S3ProxyServer(dir.resolve("s3")).bucket("ferry");
        } catch (Exception e) {
            hdfs.close();
            throw e;
        }
        this.s3 = started;
    }

    /** A new, empty store of {@code kind} ({@code file}, {@code hdfs} or {@code s3}). */
    Store open(String kind) throws Exception {
        int n = opened.incrementAndGet();
        return switch (kind) {
            case "file" -> Stores.open(dir.resolve("posix" + n).toUri(), Map.of());
            case "hdfs" -> Stores.open(hdfs.uri("/repo" + n), Map.of());
            case "s3" -> Stores.open(URI.create("s3://ferry/repo" + n), s3.options());
            default -> throw new IllegalArgumentException(kind);
        };
    }

    @Override
    public void close() throws Exception {
        try {
            s3.close();
        } finally {
            hdfs.close();
        }
    }
}

package io.ferry.cli;

import io.ferry.eventlog.HostPort;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import java.util.Set;

/**
 * The coordinator's HTTP face as {@code ferry run} and {@code ferry coordinator} take it: where
 * it listens and, optionally, the bearer token every request must carry. The token is read from
 * a file (never a command-line argument: every user sees those in {@code ps}); like ssh with a
 * private key, a file that others may read is refused.
 */
final class HttpOptions {
    static final String DEFAULT = "127.0.0.1:7460";

    @Option(names = "--http", defaultValue = DEFAULT, paramLabel = "HOST:PORT",
            description = {"Where the dashboard, JSON API and Prometheus metrics listen, or off. Without",
                    "--http-token-file anyone who reaches it reads it: keep it on loopback or an operators' network.",
                    "Default ${DEFAULT-VALUE}; a taken port falls back to a free one."})
    String address = DEFAULT;
    @Option(names = "--http-token-file", paramLabel = "FILE",
            description = {"Require `Authorization: Bearer TOKEN` on every HTTP request (401 without it); TOKEN is",
                    "the file's content, trimmed. The file must not be readable by group or others (chmod 600)."})
    Path tokenFile;

    static HttpOptions at(String address) {
        HttpOptions o = new HttpOptions();
        o.address = address;
        return o;
    }

    /** {@code HOST:PORT} (port 0: any), or empty for {@code off}; anything else is a one-line error. */
    Optional<InetSocketAddress> listen() {
        if (address == null || address.equals("off")) {
            return Optional.empty();
        }
        HostPort hp;
        try {
            hp = HostPort.parse(address, "--http");
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--http must be HOST:PORT (e.g. " + DEFAULT + ") or off, got '" + address
                    + "'");
        }
        InetSocketAddress a = new InetSocketAddress(hp.host(), hp.port());
        if (a.isUnresolved()) {
            throw new IllegalArgumentException("--http: cannot resolve host '" + hp.host() + "'");
        }
        return Optional.of(a);
    }

    /** The bearer token, if one is asked for: refused when the file is missing, empty or readable by others. */
    Optional<String> token() throws IOException {
        if (tokenFile == null) {
            return Optional.empty();
        }
        if (!Files.isRegularFile(tokenFile)) {
            throw new IllegalArgumentException("--http-token-file " + tokenFile + ": no such file");
        }
        Set<PosixFilePermission> mode = Files.getPosixFilePermissions(tokenFile);
        if (mode.stream().anyMatch(p -> p.name().startsWith("GROUP_") || p.name().startsWith("OTHERS_"))) {
            throw new IllegalArgumentException("--http-token-file " + tokenFile + " is open to others ("
                    + PosixFilePermissions.toString(mode) + "): chmod 600 " + tokenFile);
        }
        if (Files.size(tokenFile) > 4096) {
            throw new IllegalArgumentException("--http-token-file " + tokenFile
                    + " is over 4 KiB: it should hold one token");
        }
        String token = Files.readString(tokenFile, StandardCharsets.UTF_8).trim();
        if (token.isEmpty() || token.chars().anyMatch(c -> c <= ' ' || c > '~')) {
            throw new IllegalArgumentException("--http-token-file " + tokenFile
                    + " must hold one token of printable ASCII characters, no spaces");
        }
        return Optional.of(token);
    }

    /** Refuses a bad address or token file before anything starts. */
    void check() throws IOException {
        listen();
        token();
    }
}

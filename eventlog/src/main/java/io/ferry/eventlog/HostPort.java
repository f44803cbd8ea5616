package io.ferry.eventlog;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * A listen or connect address, {@code HOST:PORT} ({@code [v6]:PORT} for IPv6). Parsing is
 * strict and its errors name the option the text came from.
 */
public record HostPort(String host, int port) {
    public HostPort {
        if (host == null || host.isBlank() || port < 0 || port > 65535) {
            throw new IllegalArgumentException("bad address " + host + ":" + port);
        }
    }

    /** Parses {@code HOST:PORT}; {@code option} names where it came from in the error. */
    public static HostPort parse(String text, String option) {
        String why = option + " must be HOST:PORT (e.g. 127.0.0.1:9092), got '" + text + "'";
        if (text == null) {
            throw new IllegalArgumentException(why);
        }
        int colon = text.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException(why);
        }
        String host = text.substring(0, colon).replaceAll("^\\[|]$", "");
        try {
            int port = Integer.parseInt(text.substring(colon + 1));
            if (host.isBlank() || port < 0 || port > 65535) {
                throw new IllegalArgumentException(why);
            }
            return new HostPort(host, port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(why);
        }
    }

    /** Whether the host is a wildcard (listen on every interface). */
    public boolean wildcard() {
        return host.equals("0.0.0.0") || host.equals("::");
    }

    /**
     * Whether only this machine can connect: the host is a loopback address or a name of one
     * ({@code localhost}). A wildcard, any other address and a name that does not resolve are not.
     */
    public boolean loopbackOnly() {
        if (wildcard()) {
            return false;
        }
        try {
            for (InetAddress a : InetAddress.getAllByName(host)) {
                if (!a.isLoopbackAddress()) {
                    return false;
                }
            }
            return true;
        } catch (UnknownHostException e) {
            return false;
        }
    }

    String bracketedHost() {
        return bracket(host);
    }

    static String bracket(String host) {
        return host.contains(":") ? "[" + host + "]" : host;
    }

    @Override
    public String toString() {
        return bracket(host) + ":" + port;
    }
}

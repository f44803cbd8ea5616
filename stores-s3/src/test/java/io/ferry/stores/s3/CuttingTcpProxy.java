package io.ferry.stores.s3;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP relay on loopback in front of a server that goes away for good once {@code limit} bytes
 * have gone from clients to the server: every connection is closed and new ones are refused.
 * A network failure at a chosen point of an upload, with real sockets, where stopping the server
 * from another thread would race the upload.
 */
final class CuttingTcpProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final URI target;
    private final long limit;
    private final AtomicLong sent = new AtomicLong();
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private volatile boolean cut;

    CuttingTcpProxy(URI target, long limit) throws IOException {
        this.target = target;
        this.limit = limit;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::accept, "cutting-proxy");
        t.setDaemon(true);
        t.start();
    }

    URI endpoint() {
        return URI.create("http://127.0.0.1:" + listener.getLocalPort());
    }

    /** Whether the limit was reached and the relay went away. */
    boolean isCut() {
        return cut;
    }

    private void accept() {
        while (!cut) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(target.getHost(), target.getPort());
                open.add(client);
                open.add(server);
                pump(client, server, true);
                pump(server, client, false);
            } catch (IOException closed) {
                return;
            }
        }
    }

    private void pump(Socket from, Socket to, boolean upstream) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[64 << 10];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buf)) >= 0; ) {
                    if (upstream && sent.addAndGet(n) > limit) {
                        cutAll();
                        return;
                    }
                    out.write(buf, 0, n);
                }
            } catch (IOException ignored) {
                // closed by the other side, or by the cut
            }
        }, "cutting-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private void cutAll() {
        cut = true;
        close();
    }

    @Override
    public void close() {
        try {
            listener.close();
        } catch (IOException ignored) {
            // already closed
        }
        for (Socket s : open) {
            try {
                s.close();
            } catch (IOException ignored) {
                // already closed
            }
        }
    }
}

package io.ferry.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** {@link ClientLine} over a real Unix-domain socket pair. */
class ClientLineTest {
    @TempDir
    Path tmp;

    @Test
    void aPrinterInterruptedWhilePrintingLeavesTheLineOpenAndTheExitCodeArrives() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(tmp.resolve("s.sock")));
            try (SocketChannel client = SocketChannel.open(
                    server.getLocalAddress()); SocketChannel daemon = server.accept()) {
                ClientLine line = new ClientLine(daemon);
                OutputStream err = line.stream(ThinClient.ERR);
                AtomicReference<Throwable> failed = new AtomicReference<>();
                // A staging worker that pipeline shutdown interrupted, logging as it goes: writing to the channel
                // itself, its write would close the channel (ClosedByInterruptException) for every other printer.
                Thread worker = new Thread(() -> {
                    Thread.currentThread().interrupt();
                    try {
                        err.write("WARN store: try 1 of 5 failed\n".getBytes(StandardCharsets.UTF_8));
                    } catch (IOException e) {
                        failed.set(e);
                    }
                });
                worker.start();
                worker.join();
                assertNull(failed.get());
                line.stream(ThinClient.OUT).write("done\n".getBytes(StandardCharsets.UTF_8));
                line.exit(3);

                DataInputStream in = new DataInputStream(Channels.newInputStream(client));
                assertEquals(ThinClient.ERR, in.readByte());
                byte[] text = new byte[in.readInt()];
                in.readFully(text);
                assertEquals("WARN store: try 1 of 5 failed\n", new String(text, StandardCharsets.UTF_8));
                assertEquals(ThinClient.OUT, in.readByte());
                in.readFully(new byte[in.readInt()]);
                assertEquals(ThinClient.EXIT, in.readByte());
                assertEquals(3, in.readInt());
                // Nothing follows the exit frame: a stray printer after it is refused, not sent.
                assertThrows(IOException.class, () -> err.write('x'));
            }
        }
    }

    @Test
    void aClientGoneMidCommandFailsLaterPrintsInsteadOfBlockingThem() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(tmp.resolve("s.sock")));
            SocketChannel client = SocketChannel.open(server.getLocalAddress());
            try (SocketChannel daemon = server.accept()) {
                ClientLine line = new ClientLine(daemon);
                client.close(); // Ctrl-C
                OutputStream out = line.stream(ThinClient.OUT);
                byte[] page = new byte[ClientLine.FRAME];
                // Far more than the socket's buffers and the line's queue hold: the writer drops them once the peer is
                // gone.
                IOException gone = assertThrows(IOException.class, () -> {
                    for (int i = 0; i < 10 * ClientLine.PENDING; i++) {
                        out.write(page);
                    }
                });
                assertEquals(true, gone.getMessage().contains("gone"), gone.getMessage());
                assertThrows(IOException.class, () -> line.exit(0));
            }
        }
    }
}

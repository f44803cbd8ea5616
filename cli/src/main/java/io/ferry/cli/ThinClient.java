package io.ferry.cli;

import io.ferry.model.OwnerOnly;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The client side of {@code ferry daemon}: hands an {@code image push} or {@code pull} to this
 * user's daemon on this node, which runs it in a JVM whose code is compiled already, and relays
 * its output and exit code. Uses the JDK alone, so that it starts in a fifth of a second where a
 * command in its own JVM spends one to two seconds starting and compiling.
 *
 * <p>Exit code {@value #NOT_SERVED} means "not served, nothing was done": no daemon, one of
 * another user, a different build or environment, or a command the daemon does not run. The
 * launcher ({@code bin/ferry}) then runs the command in its own JVM, so a command gives the same
 * result, output and exit code either way. The wire format is {@code docs/formats/daemon.md}.
 */
public final class ThinClient {
    /** Exit code: the daemon did not run the command; run it in a JVM of its own. */
    public static final int NOT_SERVED = 75;
    static final int MAGIC = 0x46525944; // "FRYD"
    static final int VERSION = 1;
    static final int MAX_FRAME = 1 << 20;
    /** Response frame types: output, error output, exit code, declined. */
    static final byte OUT = 'O';
    static final byte ERR = 'E';
    static final byte EXIT = 'X';
    static final byte DECLINED = 'D';

    /**
     * The environment a served command must share with the daemon: the variables Ferry, the AWS
     * SDK, Hadoop, Kerberos and the JVM read. Any difference, and the command runs on its own.
     */
    private static final List<String> PREFIXES = List.of("FERRY_", "AWS_", "HADOOP_", "HDFS_", "KRB5", "JAVA_", "JDK_");
    private static final List<String> NAMES = List.of("PATH", "HOME", "USER", "TMPDIR", "TZ", "LD_LIBRARY_PATH");
    /** Read by the launcher alone: a client and its daemon may differ in them. */
    private static final List<String> LAUNCHER_ONLY = List.of("FERRY_DAEMON", "FERRY_DAEMON_SOCKET", "FERRY_CDS");

    private ThinClient() {}

    public static void main(String[] args) {
        System.exit(run(args, System.getenv(), System.out, System.err));
    }

    static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        boolean debug = env.containsKey("FERRY_DEBUG");
        String unserved = unservable(args, env);
        if (unserved != null) {
            return notServed(debug, err, unserved);
        }
        Path socket;
        byte[] request;
        SocketChannel ch;
        try {
            socket = socket(env);
            request = request(args, env);
            ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        } catch (IOException | RuntimeException e) { // nothing was asked: the command runs in a JVM of its own
            return notServed(debug, err, "cannot ask a daemon: " + e);
        }
        try (ch) {
            try {
                ch.connect(UnixDomainSocketAddress.of(socket));
                UserPrincipal peer = ch.getOption(jdk.net.ExtendedSocketOptions.SO_PEERCRED)
                        .user();
                if (!peer.equals(self())) {
                    // It would learn our arguments and directory: never use another user's daemon.
                    err.println("ferry: warning: " + socket + " is served by user " + peer.getName()
                            + ", not by you; not used");
                    return NOT_SERVED;
                }
                writeFully(ch, request);
            } catch (IOException e) { // no daemon, or one that went before it had the whole request: nothing ran
                return notServed(debug, err, "no daemon at " + socket + " (" + e.getMessage() + ")");
            }
            return relay(new DataInputStream(new BufferedInputStream(new ChannelInput(ch))), out, err, debug);
        } catch (IOException e) {
            err.println("ferry: lost the daemon at " + socket + " before the command ended: " + e.getMessage()
                    + " (it may have run in part; see its log)");
            return 1;
        }
    }

    /** Why {@code args} under {@code env} are not for the daemon, or null when they are. */
    static String unservable(String[] args, Map<String, String> env) {
        if ("off".equals(env.get("FERRY_DAEMON"))) {
            return "FERRY_DAEMON=off";
        }
        if (args.length < 2 || !args[0].equals("image") || !(args[1].equals("push") || args[1].equals("pull"))) {
            return "the daemon runs image push and image pull only";
        }
        for (String a : args) {
            if (a.startsWith("--log-level") || a.contains("log.level.")) {
                return "log levels are the daemon's own; " + a + " needs a JVM of its own";
            }
        }
        for (String v : List.of("FERRY_CONFIG", "HADOOP_CONF_DIR")) {
            String value = env.get(v);
            if (value != null && !value.isEmpty() && !Path.of(value).isAbsolute()) {
                return v + " is a relative path";
            }
        }
        return null;
    }

    private static int notServed(boolean debug, PrintStream err, String why) {
        if (debug) {
            err.println("ferry: not served by a daemon: " + why);
        }
        return NOT_SERVED;
    }

    /**
     * {@code $FERRY_DAEMON_SOCKET}, else {@code $XDG_RUNTIME_DIR/ferry/daemon.sock}, else
     * {@code /tmp/ferry-UID/daemon.sock}.
     */
    static Path socket(Map<String, String> env) {
        String named = env.get("FERRY_DAEMON_SOCKET");
        if (named != null && !named.isEmpty()) {
            return Path.of(named).toAbsolutePath();
        }
        String runtime = env.get("XDG_RUNTIME_DIR");
        if (runtime != null && !runtime.isEmpty()) {
            return Path.of(runtime, "ferry", "daemon.sock");
        }
        return Path.of("/tmp", "ferry-" + uid(), "daemon.sock");
    }

    /** This process's user id (the owner of {@code /proc/self}). */
    static int uid() {
        return OwnerOnly.uid();
    }

    /** This process's user, as {@code SO_PEERCRED} names a peer (principals compare by uid). */
    static UserPrincipal self() throws IOException {
        return Files.getOwner(Path.of("/proc/self"));
    }

    /**
     * SHA-256 of the variables a served command must share with its daemon: each name and value as a 4-byte length and
     * UTF-8, sorted by name.
     */
    static byte[] environmentDigest(Map<String, String> env) {
        TreeMap<String, String> relevant = new TreeMap<>();
        env.forEach((k, v) -> {
            if (!LAUNCHER_ONLY.contains(k) && (NAMES.contains(k) || PREFIXES.stream().anyMatch(k::startsWith))) {
                relevant.put(k, v);
            }
        });
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            relevant.forEach((k, v) -> {
                for (String s : new String[] {k, v}) {
                    byte[] b = s.getBytes(StandardCharsets.UTF_8);
                    md.update(ByteBuffer.allocate(4).putInt(b.length).array());
                    md.update(b);
                }
            });
            return md.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    /** Which Ferry build this is: where its classes are and when they last changed. */
    static String build() {
        try {
            Path where = Path.of(ThinClient.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return where + "@" + Files.getLastModifiedTime(where).toMillis();
        } catch (Exception e) { // no code source (a custom class loader): a build no daemon will match
            return "unknown@" + System.nanoTime();
        }
    }

    private static byte[] request(String[] args, Map<String, String> env) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream d = new DataOutputStream(bytes);
        d.writeInt(MAGIC);
        d.writeByte(VERSION);
        d.writeUTF(build());
        d.write(environmentDigest(env));
        d.writeUTF(Path.of("").toAbsolutePath().toString());
        d.writeBoolean(System.console() != null);
        d.writeInt(args.length);
        for (String a : args) {
            d.writeUTF(a);
        }
        return bytes.toByteArray();
    }

    private static int relay(DataInputStream in, PrintStream out, PrintStream err, boolean debug) throws IOException {
        byte[] buf = new byte[MAX_FRAME];
        while (true) {
            int type = in.read();
            switch (type) {
                case OUT, ERR -> {
                    int n = in.readInt();
                    if (n < 0 || n > MAX_FRAME) {
                        throw new IOException("bad frame length " + n);
                    }
                    in.readFully(buf, 0, n);
                    PrintStream to = type == OUT ? out : err;
                    to.write(buf, 0, n);
                    to.flush();
                }
                case EXIT -> {
                    out.flush();
                    err.flush();
                    return in.readInt();
                }
                case DECLINED -> {
                    return notServed(debug, err, in.readUTF());
                }
                case -1 -> throw new IOException("the connection closed");
                default -> throw new IOException("unknown frame type " + type);
            }
        }
    }

    static void writeFully(SocketChannel ch, byte[] bytes) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    /**
     * Reads a channel directly. Not {@code Channels.newInputStream}: its reads hold the channel's
     * blocking lock, which would block the daemon's writes to the same channel meanwhile.
     */
    static final class ChannelInput extends InputStream {
        private final SocketChannel ch;

        ChannelInput(SocketChannel ch) {
            this.ch = ch;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return len == 0 ? 0 : ch.read(ByteBuffer.wrap(b, off, len));
        }
    }
}

package io.ferry.cli;

import io.ferry.staging.internal.FileTrees;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

/**
 * A multi-host test bed on one machine: N test hosts, each a network namespace with its own
 * address and host name, bridged to the test JVM; or plain loopback where that cannot be set up
 * (not root, no {@code ip}, a failed step, {@code -Dferry.testbed=loopback}). See docs/testbed.md.
 *
 * <p>The bridge sits in a private "switch" namespace, so the host's firewall (e.g. Docker's
 * {@code FORWARD DROP}) and {@code ip_forward} never see host-to-host traffic; the JVM reaches
 * it through one veth holding {@link #serviceAddress()}. Every name made carries a random tag
 * ({@code fe-<tag>-sw}, {@code fe-<tag>-h<i>}, {@code fe-<tag>-up}); a marker file
 * {@code /run/ferry-testbed/<tag>} names the creating JVM, so a later {@link #create} removes
 * what a killed JVM left. Commands run "on" a host get a UTS namespace named {@link #hostName}.
 */
public final class TestBed implements AutoCloseable {
    private static final Path MARKERS = Path.of("/run/ferry-testbed");
    private static final String NET_PREFIX = "10.250.";
    private static final String LOOPBACK = "127.0.0.1";
    /** A {@code sh -c} script: name this UTS namespace "$0", then exec the command "$@". */
    /** Per-namespace files {@code ip netns exec} mounts over /etc (iproute2's convention). */
    private static final Path NETNS_ETC = Path.of("/etc/netns");
    private static final String SET_HOSTNAME = "echo \"$0\" > /proc/sys/kernel/hostname && exec \"$@\"";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final int hosts;
    private final String tag = String.format("%06x", RANDOM.nextInt(1 << 24));
    private final String ip = which("ip");
    private final String unshare = which("unshare");
    private String net = "";            // "10.250.B" once a subnet is picked
    private String fallbackReason = "";
    private Thread hook;
    private boolean cleaned;
    private Path runtime;

    private TestBed(int hosts) {
        this.hosts = hosts;
    }

    /** Makes a bed of {@code hosts} hosts (1..200): namespaces when possible, else loopback; never fails for that. */
    public static TestBed create(int hosts) {
        if (hosts < 1 || hosts > 200) {
            throw new IllegalArgumentException("hosts must be 1..200: " + hosts);
        }
        TestBed bed = new TestBed(hosts);
        bed.fallbackReason = bed.tryNamespaces();
        return bed;
    }

    /** True when the hosts are network namespaces, false on the loopback fallback. */
    public boolean namespaces() {
        return fallbackReason.isEmpty();
    }

    /** Why namespaces are not used (the failed check, or the failed command and its output); empty when they are. */
    public String fallbackReason() {
        return fallbackReason;
    }

    public int hostCount() {
        return hosts;
    }

    /** The address the JVM's side listens on, reachable from every host: 10.250.B.1, or 127.0.0.1. */
    public String serviceAddress() {
        return namespaces() ? net + ".1" : LOOPBACK;
    }

    /** Host {@code i}'s own address: 10.250.B.(10+i), or 127.0.0.1. */
    public String hostAddress(int i) {
        return namespaces() ? net + "." + (10 + index(i)) : LOOPBACK;
    }

    /** Host {@code i}'s name, {@code fe-h<i>}: its host name inside the bed (not resolvable by DNS). */
    public String hostName(int i) {
        return "fe-h" + index(i);
    }

    /**
     * A builder running {@code command} on host {@code i}: in its namespace, or plainly on loopback; with this
     * bed's {@link #runtimeDir()}.
     */
    public ProcessBuilder onHost(int i, List<String> command) {
        List<String> full = new ArrayList<>();
        if (namespaces()) {
            full.addAll(List.of(ip, "netns", "exec", namespace("h" + index(i)), unshare, "--uts",
                    "sh", "-c", SET_HOSTNAME, hostName(i)));
        }
        full.addAll(command);
        ProcessBuilder pb = new ProcessBuilder(full);
        pb.environment().put("FERRY_RUNTIME_DIR", runtimeDir().toString());
        return pb;
    }

    /**
     * This bed's {@code FERRY_RUNTIME_DIR} (a private temporary directory), set by {@link #onHost} for what runs on
     * its hosts: an agent leaves its link for launched ranks there, named by its host's name, and every bed's hosts
     * are named alike (fe-h0...). In the user's one runtime directory, a bed's agents replaced another bed's links
     * while both ran, and a rank of the other's job found a dead agent behind its host's link. A {@code ferry run
     * --launch} of a bed's job takes it too ({@code pb.environment()}), for the ranks its launcher starts.
     */
    public synchronized Path runtimeDir() {
        if (runtime == null) {
            try {
                runtime = Files.createTempDirectory("ferry-bed-" + tag + "-"); // rwx------, as the shim requires
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return runtime;
    }

    /**
     * Writes {@code dir/rsh-agent.sh}, an mpirun {@code plm_rsh_agent}: runs "$2..." on host address "$1", as ssh
     * would.
     */
    public Path mpiRshAgent(Path dir) throws IOException {
        StringBuilder cases = new StringBuilder();
        for (int i = 0; namespaces() && i < hosts; i++) {
            cases.append("  %s) ns=%s name=%s ;;\n".formatted(hostAddress(i), namespace("h" + i), hostName(i)));
        }
        String body = !namespaces() ? "shift\nexec sh -c \"$*\"\n" : """
                case "$1" in
                %s  *) echo "TestBed rsh agent: unknown host $1" >&2; exit 255 ;;
                esac
                shift
                exec %s netns exec "$ns" %s --uts sh -c '%s' "$name" sh -c "$*"
                """.formatted(cases, ip, unshare, SET_HOSTNAME);
        Path agent = dir.resolve("rsh-agent.sh");
        Files.writeString(agent, "#!/bin/sh\n# mpirun rsh agent written by io.ferry.cli.TestBed\n"
                + "export FERRY_RUNTIME_DIR='" + runtimeDir() + "'\n" + body);
        Files.setPosixFilePermissions(agent, PosixFilePermissions.fromString("rwxr-xr-x"));
        return agent;
    }

    /** Writes {@code dir/hostfile}: an {@code ADDRESS slots=K} line per host, or one {@code localhost} line. */
    public Path hostfile(Path dir, int slotsPerHost) throws IOException {
        StringBuilder s = new StringBuilder(namespaces() ? "" : "localhost slots=" + hosts * slotsPerHost + "\n");
        for (int i = 0; namespaces() && i < hosts; i++) {
            s.append(hostAddress(i)).append(" slots=").append(slotsPerHost).append('\n');
        }
        return Files.writeString(dir.resolve("hostfile"), s);
    }

    /**
     * The {@code mpirun ...} prefix (up to the program) for {@code ranks} ranks; writes the agent and hostfile into
     * dir.
     */
    public List<String> mpirunArgs(Path dir, int ranks, int slotsPerHost) throws IOException {
        String nets = namespaces() ? net + ".0/24" : LOOPBACK + "/8";
        List<String> a = new ArrayList<>(List.of("mpirun", "--allow-run-as-root", "-np", Integer.toString(ranks),
                "--mca", "btl", "tcp,self", "--mca", "pml", "ob1",
                "--mca", "oob_tcp_if_include", nets, "--mca", "btl_tcp_if_include", nets));
        if (namespaces()) {
            a.addAll(List.of("--hostfile", hostfile(dir, slotsPerHost).toString(), "--mca", "plm_rsh_agent",
                    mpiRshAgent(dir).toString(), "--mca", "plm_rsh_no_tree_spawn", "1"));
        } else {
            a.add("--oversubscribe");
        }
        return a;
    }

    /** A TCP port free on this machine now (for a service the hosts reach on {@link #serviceAddress()}). */
    public static int freePort() throws IOException {
        return freePorts(1);
    }

    /**
     * A port P such that P .. P + n - 1 were free a moment ago on every address, picked below the kernel's ephemeral
     * range. A port from that range (what binding port 0 gives) can be taken, between this pick and the service's
     * bind, by any socket bound to port 0 meanwhile: an agent's metrics, a client's connection.
     */
    public static int freePorts(int n) throws IOException {
        int ephemeralLow = 32768;
        try {
            ephemeralLow = Integer.parseInt(
                    Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException unknown) {
            // the kernel's default range
        }
        int low = 20_000;
        int high = Math.max(low + 1_000, ephemeralLow) - n;
        Random rnd = new Random();
        for (int i = 0; i < 100; i++) {
            int base = low + rnd.nextInt(high - low);
            List<ServerSocket> held = new ArrayList<>();
            try {
                for (int k = 0; k < n; k++) {
                    held.add(new ServerSocket(base + k));
                }
                return base;
            } catch (BindException taken) {
                // the next one
            } finally {
                for (ServerSocket s : held) {
                    s.close();
                }
            }
        }
        throw new IOException("no " + n + " free consecutive ports in " + low + ".." + high);
    }

    /** Deletes the namespaces, veths and bridge; kills nothing; idempotent. */
    @Override
    public void close() {
        cleanUp();
        try {
            if (hook != null) {
                Runtime.getRuntime().removeShutdownHook(hook);
            }
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway, and cleanUp is idempotent
        }
    }

    /** Sets up the namespaces; returns "" or why it could not (having removed what it made). */
    private String tryNamespaces() {
        if ("loopback".equals(System.getProperty("ferry.testbed"))) {
            return "forced by -Dferry.testbed=loopback";
        }
        try {
            Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            if (!Integer.valueOf(0).equals(uid)) {
                return "not root (uid " + uid + ")";
            }
            if (ip == null || unshare == null) {
                return "no `" + (ip == null ? "ip` (iproute2)" : "unshare` (util-linux)")
                        + " on PATH, /usr/sbin or /sbin";
            }
            hook = new Thread(this::cleanUp, "TestBed cleanup " + tag);
            Runtime.getRuntime().addShutdownHook(hook);
            build();
            checkConnectivity();
            return "";
        } catch (IOException | UncheckedIOException | UnsupportedOperationException e) {
            cleanUp();
            return e.getMessage();
        }
    }

    /** Under a lock all test JVMs share: removes stale beds, picks a free /24, writes the marker, makes the links. */
    private void build() throws IOException {
        Files.createDirectories(MARKERS);
        try (FileChannel lock = FileChannel.open(MARKERS.resolve(".lock"), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE)) {
            lock.lock();
            removeStaleBeds();
            net = NET_PREFIX + freeThirdOctet();
            ProcessHandle me = ProcessHandle.current();
            Files.writeString(MARKERS.resolve(tag), me.pid() + " " + startMillis(me) + "\n");
            String sw = namespace("sw");
            ip("netns", "add", sw);
            ip("-n", sw, "link", "add", "br0", "type", "bridge");
            ip("-n", sw, "link", "set", "br0", "up");
            ip("link", "add", namespace("up"), "type", "veth", "peer", "name", "up0", "netns", sw);
            ip("-n", sw, "link", "set", "up0", "master", "br0", "up");
            ip("addr", "add", serviceAddress() + "/24", "dev", namespace("up"));
            ip("link", "set", namespace("up"), "up");
            for (int i = 0; i < hosts; i++) {
                String h = namespace("h" + i);
                ip("netns", "add", h);
                ip("-n", sw, "link", "add", "v" + i, "type", "veth", "peer", "name", "eth0", "netns", h);
                ip("-n", sw, "link", "set", "v" + i, "master", "br0", "up");
                ip("-n", h, "addr", "add", hostAddress(i) + "/24", "dev", "eth0");
                ip("-n", h, "link", "set", "eth0", "up");
                ip("-n", h, "link", "set", "lo", "up");
                ip("-n", h, "route", "add", "default", "via", serviceAddress());
            }
            writeHostsFiles();
        }
    }

    /**
     * Name service for the hosts, as a site's DNS gives it: {@code ip netns exec} mounts
     * {@code /etc/netns/<ns>/hosts} and {@code resolv.conf} over {@code /etc}. Each host resolves the
     * service address and every host, both ways, from its hosts file, and has no name server: the
     * machine's own is out of reach from a namespace and each lookup would wait for it (a SASL
     * client looks its broker's address up, 10 s a time without this).
     */
    private void writeHostsFiles() throws IOException {
        StringBuilder hostsFile = new StringBuilder("127.0.0.1 localhost\n::1 localhost\n")
                .append(serviceAddress()).append(' ').append(namespace("service")).append('\n');
        for (int i = 0; i < hosts; i++) {
            hostsFile.append(hostAddress(i)).append(' ').append(hostName(i)).append('\n');
        }
        for (int i = 0; i < hosts; i++) {
            Path etc = Files.createDirectories(NETNS_ETC.resolve(namespace("h" + i)));
            Files.writeString(etc.resolve("hosts"), hostsFile);
            Files.writeString(etc.resolve("resolv.conf"),
                    "# TestBed: no name server in the test hosts\noptions timeout:1 attempts:1\n");
        }
    }

    /** From inside every host, a TCP connect (5 s at most) to a socket the JVM listens on at the service address. */
    private void checkConnectivity() throws IOException {
        try (ServerSocket server = new ServerSocket(0, hosts + 1, InetAddress.getByName(serviceAddress()))) {
            String target = serviceAddress() + "/" + server.getLocalPort();
            for (int i = 0; i < hosts; i++) {
                List<String> connect = List.of("timeout", "5", "bash", "-c", "exec 3<>/dev/tcp/" + target);
                run(onHost(i, connect).command(),
                        "TCP connect from " + hostName(i) + " to " + target + " (124: timed out)");
            }
        }
    }

    /** Removes the beds whose marker names a JVM that is gone (pid dead, or reused by a later process). */
    private void removeStaleBeds() throws IOException {
        try (Stream<Path> markers = Files.list(MARKERS)) {
            for (Path m : markers.filter(p -> !p.getFileName().toString().startsWith(".")).toList()) {
                String[] f = Files.readString(m).trim().split(" ");
                boolean live = f.length == 2 && ProcessHandle.of(Long.parseLong(f[0]))
                        .map(h -> startMillis(h).equals(f[1]) || startMillis(h).equals("?")).orElse(false);
                if (!live) {
                    deleteTagged(m.getFileName().toString());
                    Files.deleteIfExists(m);
                }
            }
        }
    }

    private synchronized void cleanUp() {
        if (runtime != null) {
            try {
                FileTrees.delete(runtime);
            } catch (IOException e) {
                System.err.println("TestBed cleanup: " + e);
            }
            runtime = null;
        }
        if (!cleaned && !net.isEmpty()) {
            cleaned = true;
            deleteTagged(tag);
            try {
                Files.deleteIfExists(MARKERS.resolve(tag));
            } catch (IOException e) {
                System.err.println("TestBed cleanup: " + e);
            }
        }
    }

    /**
     * Deletes bed {@code t}'s uplink veth (at once) and namespaces (their links go with them); skips what is absent.
     */
    private void deleteTagged(String t) {
        try {
            if (run(List.of(ip, "-br", "link"), "list links").contains("fe-" + t + "-up@")) {
                run(List.of(ip, "link", "del", "fe-" + t + "-up"), "cleanup");
            }
            for (String line : run(List.of(ip, "netns", "list"), "list namespaces").split("\n")) {
                String name = line.split(" ")[0];
                if (name.startsWith("fe-" + t + "-")) {
                    run(List.of(ip, "netns", "del", name), "cleanup");
                }
            }
            if (Files.isDirectory(NETNS_ETC)) {
                try (Stream<Path> etc = Files.list(NETNS_ETC)) {
                    for (Path d : etc.filter(d -> d.getFileName().toString().startsWith("fe-" + t + "-")).toList()) {
                        try (Stream<Path> files = Files.list(d)) {
                            for (Path f : files.toList()) {
                                Files.deleteIfExists(f);
                            }
                        }
                        Files.deleteIfExists(d);
                    }
                }
            }
        } catch (IOException e) {
            System.err.println("TestBed cleanup: " + e.getMessage());
        }
    }

    private int freeThirdOctet() throws IOException {
        String routes = run(List.of(ip, "-4", "route", "show", "table", "all"), "list routes");
        int start = RANDOM.nextInt(256);
        for (int k = 0; k < 256; k++) {
            if (!routes.contains(NET_PREFIX + (start + k) % 256 + ".")) {
                return (start + k) % 256;
            }
        }
        throw new IOException("no free /24 left in " + NET_PREFIX + "0.0/16");
    }

    private void ip(String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(ip));
        cmd.addAll(List.of(args));
        run(cmd, null);
    }

    /** Runs cmd and returns its output; throws naming the command, its exit code and its output. */
    private static String run(List<String> cmd, String what) throws IOException {
        String shown = (what == null ? "" : what + ": ") + "`" + String.join(" ", cmd) + "`";
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        try {
            if (p.waitFor() != 0) {
                throw new IOException(shown + " exited " + p.exitValue() + (out.isEmpty() ? "" : ": " + out));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(shown + " interrupted", e);
        }
        return out;
    }

    private static String startMillis(ProcessHandle h) {
        return h.info().startInstant().map(s -> Long.toString(s.toEpochMilli())).orElse("?");
    }

    /**
     * The first executable {@code name} on PATH or in the sbin/bin directories (tests may run without sbin on PATH).
     */
    private static String which(String name) {
        String path = System.getenv().getOrDefault("PATH", "") + ":/usr/sbin:/sbin:/usr/bin:/bin";
        return Stream.of(path.split(":")).filter(d -> !d.isEmpty()).map(d -> Path.of(d, name))
                .filter(Files::isExecutable).map(Path::toString).findFirst().orElse(null);
    }

    private String namespace(String suffix) {
        return "fe-" + tag + "-" + suffix;
    }

    private int index(int i) {
        if (i < 0 || i >= hosts) {
            throw new IndexOutOfBoundsException("host " + i + " of " + hosts);
        }
        return i;
    }
}

package io.ferry.agent;

import io.ferry.model.Names;
import io.ferry.model.OwnerOnly;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where ranks started by the site's launcher ({@code mpirun}, {@code srun}) register with
 * their node's agent: {@code bin/ferry-rank}, a POSIX shell shim, so that a rank costs no JVM
 * (docs/protocol.md, "Ranks started by a launcher"). The agent's run directory
 * {@code <home>/run} holds {@code agent.pid} and {@code spool/}; the link
 * {@code <runtime dir>/ferry-agent-<host name>} points to it, so a rank finds the agent of the
 * host it landed on. The runtime directory is {@code $FERRY_RUNTIME_DIR}, else this user's own
 * ({@link io.ferry.model.OwnerOnly#privateRuntimeDir}: {@code $XDG_RUNTIME_DIR/ferry} or
 * {@code /tmp/ferry-<uid>}, 0700), so that the agents of other users on the host neither take
 * the link nor can plant one. An agent never takes the link from another live agent of the same
 * user on the host (several agents on one host, as on a test bed): it says so, and the ranks meant
 * for it are pointed at it with {@code FERRY_AGENT_DIR}. Files, each written whole by a rename:
 * <ul>
 * <li>the shim writes {@code spool/<job>.<rank>.hello}: {@code <generation> <pid>};</li>
 * <li>the agent answers {@code spool/<job>.<rank>.env} ({@code export K='V'} lines the shim
 * sources before it execs the program under the same pid) or {@code spool/<job>.<rank>.fail}
 * (one line: why).</li>
 * </ul>
 * Thread-safe.
 */
public final class RankSpool implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(RankSpool.class);
    private static final Pattern HELLO = Pattern.compile("(.+)\\.(\\d{1,8})\\.hello");
    private static final Pattern BODY = Pattern.compile("(-1|\\d{1,18}) (\\d{1,10})\\s*");

    /** A rank waiting for its agent's answer. */
    public record Hello(String job, int rank, long generation, long pid) {}

    private final Path run;
    private final Path spool;
    private final Path link;
    private final Map<String, Hello> waiting = new ConcurrentHashMap<>();

    /**
     * @param home     the agent's home: the spool is {@code home/run/spool}
     * @param hostName the name ranks on this host see ({@link #hostName()}): the link's name
     */
    public RankSpool(Path home, String hostName) throws IOException {
        this(home, hostName, runtimeDir());
    }

    /** {@link #RankSpool(Path, String)} with its link in {@code runtimeDir}. */
    RankSpool(Path home, String hostName, Path runtimeDir) throws IOException {
        this.run = home.toAbsolutePath().resolve("run");
        this.spool = run.resolve("spool");
        OwnerOnly.createDirectories(spool);
        OwnerOnly.restrict(Files.writeString(run.resolve("agent.pid"),
                ProcessHandle.current().pid() + "\n"));
        this.link = runtimeDir.resolve("ferry-agent-" + hostName);
        OwnerOnly.createDirectories(link.getParent());
        Path other = liveAgentAt(link);
        if (other != null && !other.equals(run.toRealPath())) {
            LOG.warn("ferry agent: the ranks a launcher starts on {} find the live agent of {} ({}); ranks meant"
                    + " for this one need FERRY_AGENT_DIR={}", hostName, other, link, run);
            return;
        }
        Path tmp = link.resolveSibling(".ferry-agent-" + hostName + "." + ProcessHandle.current().pid());
        Files.deleteIfExists(tmp);
        Files.createSymbolicLink(tmp, run);
        Files.move(tmp, link, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** The run directory {@code link} leads to when a live agent holds it ({@link HomeLock#held}), else null. */
    private static Path liveAgentAt(Path link) {
        try {
            Path target = link.toRealPath();
            return HomeLock.held(target) ? target : null;
        } catch (IOException noneThere) {
            return null;
        }
    }

    /** {@code $FERRY_RUNTIME_DIR}, else this user's own runtime directory: where the shim looks for its agent. */
    static Path runtimeDir() throws IOException {
        String dir = System.getenv("FERRY_RUNTIME_DIR");
        return dir == null || dir.isBlank() ? OwnerOnly.privateRuntimeDir(System.getenv())
                : Path.of(dir);
    }

    /** The host name as processes on this host see it (the kernel's, not a DNS lookup). */
    public static String hostName() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/hostname")).trim();
        } catch (IOException e) {
            try {
                return InetAddress.getLocalHost().getHostName();
            } catch (IOException unknown) {
                return "localhost";
            }
        }
    }

    public Path link() {
        return link;
    }

    /** Ranks that registered since the last call; each is kept until {@link #take}n. Bad files are refused. */
    public List<Hello> arrivals() throws IOException {
        List<Hello> out = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(spool, "*.hello")) {
            for (Path f : files) {
                String name = f.getFileName().toString();
                Matcher m = HELLO.matcher(name);
                String body;
                try {
                    body = Files.readString(f, StandardCharsets.US_ASCII);
                } catch (IOException gone) {
                    continue;
                }
                Files.deleteIfExists(f);
                Matcher b = BODY.matcher(body);
                if (!m.matches() || !b.matches()) {
                    LOG.warn("ferry agent: ignoring a bad registration " + name + ": '" + body.trim() + "'");
                    if (m.matches()) {
                        refuse(m.group(1), Integer.parseInt(m.group(2)), "bad registration '" + body.trim()
                                + "' (expected: GENERATION PID)");
                    }
                    continue;
                }
                String job = m.group(1);
                int rank = Integer.parseInt(m.group(2));
                try {
                    Names.requireJob(job);
                } catch (IllegalArgumentException unsafe) {
                    continue; // never answered: a file named after an unsafe job id is not written
                }
                Hello h = new Hello(job, rank, Long.parseLong(b.group(1)), Long.parseLong(b.group(2)));
                waiting.put(job + "." + rank, h);
                out.add(h);
            }
        }
        return out;
    }

    /** The waiting registration of {@code rank} of {@code job}, taken out of the spool. */
    public Optional<Hello> take(String job, int rank) {
        return Optional.ofNullable(waiting.remove(job + "." + rank));
    }

    /** Lets the rank go on: its program starts with {@code env} added. */
    public void answer(Hello h, Map<String, String> env) throws IOException {
        StringBuilder b = new StringBuilder();
        env.forEach((k, v) -> b.append("export ").append(k).append("='").append(v.replace("'", "'\\''")).append("'\n"));
        write(h.job(), h.rank(), ".env", b.toString());
    }

    /** The rank ends with {@code reason} on its standard error, exit 1. */
    public void refuse(String job, int rank, String reason) {
        try {
            write(job, rank, ".fail", reason.replace('\n', ' ') + "\n");
        } catch (IOException e) {
            LOG.warn("ferry agent: cannot tell rank " + rank + " of " + job + " why it is refused: " + e);
        }
    }

    private void write(String job, int rank, String suffix, String text) throws IOException {
        Path tmp = spool.resolve("." + job + "." + rank + suffix + ".tmp");
        OwnerOnly.restrict(Files.writeString(tmp, text, StandardCharsets.UTF_8));
        Files.move(tmp, spool.resolve(job + "." + rank + suffix), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
    }

    @Override
    public void close() throws IOException {
        if (Files.isSymbolicLink(link) && Files.readSymbolicLink(link).equals(run)) {
            Files.deleteIfExists(link);
        }
        Files.deleteIfExists(run.resolve("agent.pid"));
    }
}

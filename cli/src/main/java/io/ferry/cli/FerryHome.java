package io.ferry.cli;

import io.ferry.model.OwnerOnly;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;

/**
 * Where Ferry keeps a machine's state: {@code --home}, else {@code $FERRY_HOME}, else
 * {@code ~/.ferry}. Holds the node-local cache ({@code cache/}), the default store
 * ({@code store/}), the embedded Kafka log ({@code kafka/}) and, while a job runs,
 * {@code run.properties} telling other commands where its broker listens.
 */
record FerryHome(Path dir) {
    static FerryHome resolve(Path option) {
        if (option != null) {
            return new FerryHome(option.toAbsolutePath().normalize());
        }
        String env = System.getenv("FERRY_HOME");
        if (env != null && !env.isBlank()) {
            return new FerryHome(Path.of(env).toAbsolutePath().normalize());
        }
        return new FerryHome(Path.of(System.getProperty("user.home"), ".ferry"));
    }

    Path cache() {
        return dir.resolve("cache");
    }

    Path store() {
        return dir.resolve("store");
    }

    Path kafka() {
        return dir.resolve("kafka");
    }

    private Path runFile() {
        return dir.resolve("run.properties");
    }

    /** Says that {@code job} serves this home's log at {@code bootstrap}, whose clients log in when {@code secured}. */
    void writeRun(String job, String bootstrap, boolean secured) throws IOException {
        OwnerOnly.createDirectories(dir);
        Path tmp = dir.resolve(".run.properties.tmp");
        Files.writeString(tmp, "job=" + job + "\nbootstrap=" + bootstrap + "\nsecured=" + secured + "\npid="
                + ProcessHandle.current().pid() + "\n", StandardCharsets.UTF_8);
        OwnerOnly.restrict(tmp);
        Files.move(tmp, runFile(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * The name of this home's coordinator in its Kafka group, made once and kept in the home:
     * a coordinator started again over the same home (after a crash, by systemd) takes its old
     * place in the group at once. Two live coordinators over copies of one home fence each other.
     */
    String coordinatorInstance() throws IOException {
        Path idFile = dir.resolve("coordinator.id");
        if (Files.exists(idFile)) {
            String id = Files.readString(idFile, StandardCharsets.UTF_8).strip();
            if (id.matches("coordinator-[0-9a-f-]{36}")) {
                return id;
            }
            System.err.println("ferry: " + idFile + " does not hold a coordinator id; making a new one");
        }
        OwnerOnly.createDirectories(dir);
        String id = "coordinator-" + UUID.randomUUID();
        Path tmp = dir.resolve(".coordinator.id.tmp");
        Files.writeString(tmp, id + "\n", StandardCharsets.UTF_8);
        OwnerOnly.restrict(tmp);
        Files.move(tmp, idFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        return id;
    }

    /**
     * Makes this process the one agent of this home, for as long as it lives: an exclusive lock on
     * {@code <home>/agent.lock} (released by the kernel when the process ends, however it ends).
     * Two agents over one cache would capture, stage and delete each other's images; a second
     * one is refused, naming the first's pid. Closing the result lets go (a one-node run that ends).
     */
    Closeable lockAgent() throws IOException {
        OwnerOnly.createDirectories(dir);
        Path lock = dir.resolve("agent.lock");
        FileChannel ch = FileChannel.open(lock,
                StandardOpenOption.CREATE,
                StandardOpenOption.READ, StandardOpenOption.WRITE);
        FileLock held;
        try {
            held = ch.tryLock();
        } catch (OverlappingFileLockException thisProcess) {
            held = null;
        }
        if (held == null) {
            String pid = new String(Files.readAllBytes(lock), StandardCharsets.US_ASCII).trim();
            ch.close();
            throw new IllegalStateException("another ferry agent (pid " + (pid.isEmpty() ? "unknown" : pid) + ") uses "
                    + dir + ": every agent needs a home of its own (--home), one per node");
        }
        ch.truncate(0);
        ch.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)));
        return ch::close; // closing the channel releases its lock
    }

    void clearRun() throws IOException {
        Files.deleteIfExists(runFile());
    }

    /** The broker of the job running from this home, if its process is alive. */
    Optional<Properties> activeRun() throws IOException {
        if (!Files.exists(runFile())) {
            return Optional.empty();
        }
        Properties p = new Properties();
        try (var in = Files.newInputStream(runFile())) {
            p.load(in);
        }
        long pid = Long.parseLong(p.getProperty("pid", "-1"));
        return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).isPresent() ? Optional.of(p) : Optional.empty();
    }
}

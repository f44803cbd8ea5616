package io.ferry.model;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Owner-only modes for what Ferry writes on a node: checkpoint images hold whole process
 * memories (keys, tokens, data), so the node-local cache, the agent's run directory and socket,
 * the coordinator's home and its Kafka log are readable by their owner only. Directories Ferry
 * creates are 0700 and its own files 0600, set explicitly after creation, so whatever the
 * umask. Directories that existed already are left as they are (a site's {@code /scratch}).
 * Stateless and thread-safe.
 */
public final class OwnerOnly {
    public static final Set<PosixFilePermission> DIR = EnumSet.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);
    public static final Set<PosixFilePermission> FILE = EnumSet.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE);

    private OwnerOnly() {}

    /**
     * {@link Files#createDirectories}, each directory it creates 0700 and made durable in its
     * parent (the parent fsynced), so a crash after files were written and synced below it cannot
     * lose the directory that holds them. A directory found there already is made durable in its
     * parent too, once per process (it may be what a process killed between its mkdir and that
     * fsync left, live but not durable); for one Ferry did not create (a site's {@code /scratch})
     * that fsync is harmless, and a file system that refuses it is let be. Returns {@code dir}.
     */
    public static Path createDirectories(Path dir) throws IOException {
        Path abs = dir.toAbsolutePath().normalize();
        if (Files.isDirectory(abs)) {
            if (!DURABLE.contains(abs)) {
                Path parent = abs.getParent();
                if (parent != null) {
                    createDirectories(parent);
                    try {
                        fsync(parent);
                    } catch (IOException refused) {
                        // a file system that cannot fsync a directory: nothing more can be done from here
                    }
                }
                remember(abs);
            }
            return dir;
        }
        Path parent = abs.getParent();
        if (parent != null) {
            createDirectories(parent);
        }
        try {
            Files.createDirectory(abs);
            Files.setPosixFilePermissions(abs, DIR);
            if (parent != null) {
                fsync(parent);
            }
            remember(abs);
        } catch (FileAlreadyExistsException raced) {
            if (!Files.isDirectory(abs)) {
                throw raced;
            }
            return createDirectories(dir); // another thread's: made durable as one found
        }
        return dir;
    }

    /** Directories this process made durable in their parents (bounded: forgotten, and fsynced again, past a limit). */
    private static final Set<Path> DURABLE = ConcurrentHashMap.newKeySet();
    private static final int DURABLE_LIMIT = 65_536;

    private static void remember(Path dir) {
        if (DURABLE.size() >= DURABLE_LIMIT) {
            DURABLE.clear();
        }
        DURABLE.add(dir);
    }

    private static void fsync(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir,
                StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    /**
     * This user's directory for sockets and links (an agent's control socket, the link ranks find
     * their agent by): {@code $XDG_RUNTIME_DIR/ferry} where the session has one and it exists (a
     * batch job may carry its login node's {@code XDG_RUNTIME_DIR} to a compute node that has no
     * such directory), else {@code /tmp/ferry-<uid>}; short, since a Unix socket's path
     * holds at most 107 bytes. Created 0700 when missing. Refused, with the reason, when it is a
     * link, belongs to another user, or is open to group or others: {@code /tmp} is everyone's,
     * and a directory someone else made there first could hand this user's ranks to a socket of
     * theirs.
     */
    public static Path privateRuntimeDir(Map<String, String> env) throws IOException {
        String xdg = env.get("XDG_RUNTIME_DIR");
        int uid = uid();
        Path dir = xdg != null && !xdg.isBlank() && Files.isDirectory(Path.of(xdg)) ? Path.of(xdg, "ferry")
                : Path.of("/tmp", "ferry-" + uid);
        try {
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(DIR));
        } catch (FileAlreadyExistsException exists) {
            // checked below, whoever made it
        }
        PosixFileAttributes a = Files.readAttributes(dir,
                PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        int owner = (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        if (!a.isDirectory() || owner != uid
                || a.permissions().stream().anyMatch(p -> !p.name().startsWith("OWNER_"))) {
            throw new IOException(dir + " is not this user's own directory (" + (a.isSymbolicLink() ? "a link"
                    : a.isDirectory() ? "owner uid " + owner + ", mode "
                    + PosixFilePermissions.toString(a.permissions()) : "not a directory")
                    + "; uid " + uid
                    + " and rwx------ expected): someone else may have made it first; remove it, or set "
                    + "XDG_RUNTIME_DIR to a directory of your own");
        }
        return dir;
    }

    /** This process's user id (the owner of {@code /proc/self}). */
    public static int uid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | UnsupportedOperationException e) {
            throw new IllegalStateException("cannot tell this process's user id from /proc/self", e);
        }
    }

    /**
     * Replaces {@code file} with {@code text} (US-ASCII), its owner's only (0600), atomically: a
     * reader sees the old text or the new, never a part, and never a moment open to others.
     */
    public static Path writePrivate(Path file, String text) throws IOException {
        Path tmp = Files.createTempFile(file.getParent(), "." + file.getFileName(), ".tmp"); // a temp file is 0600
        try {
            Files.writeString(restrict(tmp), text, StandardCharsets.US_ASCII);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING,
                    StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
        return file;
    }

    /** Makes a file Ferry wrote readable and writable by its owner only. Returns {@code file}. */
    public static Path restrict(Path file) throws IOException {
        Files.setPosixFilePermissions(file, Files.isDirectory(file) ? DIR : FILE);
        return file;
    }

    /**
     * Refuses a file that holds secrets (a token, passwords) when it is missing, not a regular
     * file, or readable or writable by group or others, as ssh refuses an open private key: a
     * secret others can read is no secret. {@code what} names the setting in the message.
     */
    public static Path requirePrivate(Path file, String what) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException(what + " " + file + ": no such file");
        }
        Set<PosixFilePermission> mode = Files.getPosixFilePermissions(file);
        if (mode.stream().anyMatch(p -> p.name().startsWith("GROUP_") || p.name().startsWith("OTHERS_"))) {
            throw new IllegalArgumentException(what + " " + file + " is open to others ("
                    + PosixFilePermissions.toString(mode) + "): chmod 600 " + file);
        }
        return file;
    }
}

package io.ferry.agent.peer;

import io.ferry.staging.internal.FileTrees;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * One image directory as a byte stream between agents: a sequence of entries, parents
 * before children, each a type byte ({@code D} directory, {@code F} file, {@code L} symbolic
 * link, {@code E} end), its relative path, and for a file its mode bits, modification time,
 * size and bytes; for a link its target. The reader refuses any path that would leave the
 * target directory, and fsyncs what it writes when asked (a partner copy). What arrives is not trusted: the restart
 * verifies it against the committed manifest like any other tier.
 */
public final class ImageStream {
    /** Larger than any path an image holds; a longer one is a broken or hostile stream. */
    private static final int MAX_PATH = 4096;

    private ImageStream() {}

    /** The bytes of the regular files under {@code dir}: what {@link #write} sends of it, less the framing. */
    public static long bytes(Path dir) throws IOException {
        try (var files = Files.walk(dir)) {
            long sum = 0;
            for (Path f : (Iterable<Path>) files::iterator) {
                if (Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)) {
                    sum += Files.size(f);
                }
            }
            return sum;
        }
    }

    /** Writes {@code dir}'s tree; returns the file bytes written. */
    public static long write(Path dir, OutputStream sink) throws IOException {
        DataOutputStream out = new DataOutputStream(sink);
        List<Path> paths;
        try (Stream<Path> s = Files.walk(dir)) {
            paths = new ArrayList<>(s.filter(p -> !p.equals(dir)).sorted().toList());
        }
        long bytes = 0;
        byte[] buf = new byte[1 << 20];
        for (Path p : paths) {
            String rel = dir.relativize(p).toString();
            if (Files.isSymbolicLink(p)) {
                out.writeByte('L');
                out.writeUTF(rel);
                out.writeUTF(Files.readSymbolicLink(p).toString());
            } else if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                out.writeByte('D');
                out.writeUTF(rel);
            } else if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                long size = Files.size(p);
                out.writeByte('F');
                out.writeUTF(rel);
                out.writeInt(mode(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS)));
                out.writeLong(Files.getLastModifiedTime(p, LinkOption.NOFOLLOW_LINKS).toMillis());
                out.writeLong(size);
                try (InputStream in = Files.newInputStream(p)) {
                    long left = size;
                    while (left > 0) {
                        int n = in.read(buf, 0, (int) Math.min(buf.length, left));
                        if (n < 0) {
                            throw new IOException(p + " shrank while it was sent");
                        }
                        out.write(buf, 0, n);
                        left -= n;
                    }
                }
                bytes += size;
            }
        }
        out.writeByte('E');
        out.flush();
        return bytes;
    }

    /**
     * Reads a tree into {@code target} (created; must not exist); {@code durable}: every file
     * fsynced, then the directories (a partner copy; a restart's scratch copy need not be).
     * Returns the file bytes read. A malformed stream or an unsafe path is an
     * {@link IOException} naming it.
     */
    public static long read(InputStream source, Path target, boolean durable) throws IOException {
        DataInputStream in = new DataInputStream(source);
        Files.createDirectory(target);
        List<Path> dirs = new ArrayList<>(List.of(target));
        long bytes = 0;
        byte[] buf = new byte[1 << 20];
        while (true) {
            int type = in.readUnsignedByte();
            if (type == 'E') {
                break;
            }
            Path p = inside(target, in.readUTF());
            switch (type) {
                case 'D' -> {
                    Files.createDirectories(p);
                    dirs.add(p);
                }
                case 'L' -> {
                    Files.createDirectories(p.getParent());
                    Files.createSymbolicLink(p, Path.of(in.readUTF()));
                }
                case 'F' -> {
                    int mode = in.readInt();
                    long mtime = in.readLong();
                    long size = in.readLong();
                    if (size < 0) {
                        throw new IOException("negative size for " + target.relativize(p));
                    }
                    Files.createDirectories(p.getParent());
                    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.CREATE_NEW,
                            StandardOpenOption.WRITE)) {
                        long left = size;
                        while (left > 0) {
                            int n = in.read(buf, 0, (int) Math.min(buf.length, left));
                            if (n < 0) {
                                throw new IOException("stream ended inside " + target.relativize(p));
                            }
                            ByteBuffer b = ByteBuffer.wrap(buf, 0, n);
                            while (b.hasRemaining()) {
                                ch.write(b);
                            }
                            left -= n;
                        }
                        if (durable) {
                            ch.force(true);
                        }
                    }
                    Files.setPosixFilePermissions(p, FileTrees.permissions(mode));
                    Files.setLastModifiedTime(p, FileTime.fromMillis(mtime));
                    bytes += size;
                }
                default -> throw new IOException("unknown entry type " + type + " in an image stream");
            }
        }
        for (Path d : durable ? dirs : List.<Path>of()) {
            try (FileChannel ch = FileChannel.open(d, StandardOpenOption.READ)) {
                ch.force(true);
            }
        }
        return bytes;
    }

    /** {@code rel} resolved under {@code root}, or an error when it is absolute, empty or climbs out. */
    static Path inside(Path root, String rel) throws IOException {
        if (rel.isEmpty() || rel.length() > MAX_PATH || rel.startsWith("/") || rel.indexOf('\0') >= 0) {
            throw new IOException("unsafe path '" + rel + "' in an image stream");
        }
        Path p = root.resolve(rel).normalize();
        if (!p.startsWith(root) || p.equals(root)) {
            throw new IOException("unsafe path '" + rel + "' in an image stream");
        }
        for (Path q = p.getParent(); q != null && !q.equals(root); q = q.getParent()) {
            if (Files.isSymbolicLink(q)) { // a link sent earlier must not redirect later entries
                throw new IOException("path '" + rel + "' in an image stream goes through a symbolic link");
            }
        }
        return p;
    }

    static int mode(Set<PosixFilePermission> perms) {
        int m = 0;
        for (PosixFilePermission p : perms) {
            m |= 1 << (8 - p.ordinal());
        }
        return m;
    }
}

package io.ferry.stores.posix;

import io.ferry.stores.ConcurrentTreeVisitor;
import io.ferry.stores.FileIo;
import io.ferry.stores.Keys;
import io.ferry.stores.ObjectNotFoundException;
import io.ferry.stores.PermanentStoreException;
import io.ferry.stores.Store;
import io.ferry.stores.StoreException;
import io.ferry.stores.StoreProvider;
import io.ferry.stores.TransientStoreException;

import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

/**
 * A store in a directory of a POSIX file system: local disk, NFS or Lustre, with plain POSIX
 * calls only.
 *
 * <p>A put writes a hidden temporary file beside the target ({@code .<name>.tmp-<random>}),
 * fsyncs it, renames it over the key (atomic on POSIX) and fsyncs the directory, so an
 * object is visible only whole and only once durable. Directories created on the way are
 * fsynced into their parents too, and so, once per process, is a directory of the store found
 * already there (it may be the unsynced leftover of a killed put). A crash can leave
 * temporary files; they never show in {@link #list} and are safe to delete. Thread-safe: concurrent puts of one key
 * each write their own temporary file and the last rename wins (chunk keys are content-addressed, so
 * both carry the same bytes).
 */
public final class PosixStore implements Store {
    /** Option: Lustre stripe count for the store root ({@code lfs setstripe -c}); unset = leave as is. */
    public static final String STRIPE_COUNT = "posix.lustre.stripe-count";
    /** Option: Lustre stripe size, e.g. {@code 4M} ({@code lfs setstripe -S}); unset = leave as is. */
    public static final String STRIPE_SIZE = "posix.lustre.stripe-size";
    /**
     * Option: {@code on} (default) writes objects of 1 MiB and more (packs, v1 chunks) with
     * O_DIRECT where the file system takes it, {@code off} through the page cache ({@link ObjectWriter}).
     */
    public static final String DIRECT_IO = "posix.direct-io";

    private final Path root;
    private final URI uri;
    private final Set<Path> knownDirs = ConcurrentHashMap.newKeySet();
    private final ObjectWriter writer;

    /** Objects are 0600 and the directories the store creates 0700 (pre-existing ones are left alone). */
    static final Set<PosixFilePermission> OWNER_FILE =
            PosixFilePermissions.fromString("rw-------");
    static final Set<PosixFilePermission> OWNER_DIR =
            PosixFilePermissions.fromString("rwx------");

    private PosixStore(Path root, boolean directIo) {
        this.root = root;
        this.uri = root.toUri();
        this.writer = new ObjectWriter(directIo);
    }

    /** Objects are 0600 whatever the umask: images hold process memory. */
    static void ownerOnly(Path file) throws IOException {
        Files.setPosixFilePermissions(file, OWNER_FILE);
    }

    /** Whether large objects are still written with O_DIRECT (see {@link ObjectWriter}). */
    public boolean directIo() {
        return writer.direct();
    }

    @Override
    public boolean putsDirectMemory() {
        return writer.direct(); // a file system whose blocks are larger than 4 KiB gets its copy still (ObjectWriter)
    }

    /** How many objects this store wrote with O_DIRECT (tests). */
    long directWrites() {
        return writer.directWrites();
    }

    public static StoreProvider provider() {
        return new StoreProvider() {
            @Override
            public String scheme() {
                return "file";
            }

            @Override
            public Set<String> optionKeys() {
                return Set.of(STRIPE_COUNT, STRIPE_SIZE, DIRECT_IO);
            }

            @Override
            public Store open(URI uri, Map<String, String> options) throws StoreException {
                return PosixStore.open(Path.of(uri), options);
            }
        };
    }

    public static PosixStore open(Path root, Map<String, String> options) throws StoreException {
        Path abs = root.toAbsolutePath().normalize();
        String direct = options.getOrDefault(DIRECT_IO, "on");
        if (!direct.equals("on") && !direct.equals("off")) {
            throw new IllegalArgumentException(DIRECT_IO + " must be on or off, got '" + direct + "'");
        }
        PosixStore s = new PosixStore(abs, direct.equals("on"));
        try {
            s.ensureDir(abs);
        } catch (IOException e) {
            throw classify("cannot create store root " + abs, e);
        }
        LustreStriping.apply(abs, options.get(STRIPE_COUNT), options.get(STRIPE_SIZE));
        return s;
    }

    @Override
    public URI uri() {
        return uri;
    }

    @Override
    public void put(String key, ByteBuffer data) throws StoreException {
        Path target = path(key);
        Path dir = target.getParent();
        Path tmp = dir.resolve("." + target.getFileName() + ".tmp-"
                + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        try {
            ensureDir(dir);
            writer.write(tmp, data);
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            fsyncDir(dir);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw classify("cannot write " + key + " in " + uri, e);
        }
    }

    @Override
    public byte[] get(String key) throws StoreException {
        try {
            return Files.readAllBytes(path(key));
        } catch (NoSuchFileException e) {
            throw new ObjectNotFoundException(key, uri.toString());
        } catch (IOException e) {
            throw classify("cannot read " + key + " in " + uri, e);
        }
    }

    @Override
    public int read(String key, byte[] dst) throws StoreException {
        try (FileChannel ch = FileChannel.open(path(key), StandardOpenOption.READ)) {
            long size = ch.size(); // of the file we opened, not of whatever the name points to later
            int n = FileIo.read(ch, dst, 0, dst.length); // through this thread's small direct buffer: see FileIo
            return n < dst.length ? n : (int) Math.min(Integer.MAX_VALUE, Math.max(size, n));
        } catch (NoSuchFileException e) {
            throw new ObjectNotFoundException(key, uri.toString());
        } catch (IOException e) {
            throw classify("cannot read " + key + " in " + uri, e);
        }
    }

    @Override
    public void readRange(String key, long offset, byte[] dst, int dstOff, int len) throws StoreException {
        try (FileChannel ch = FileChannel.open(path(key), StandardOpenOption.READ)) {
            try {
                FileIo.readFully(ch, offset, dst, dstOff, len); // through this thread's small direct buffer: see FileIo
            } catch (EOFException e) {
                throw new PermanentStoreException(key + " in " + uri + ": " + e.getMessage(), e);
            }
        } catch (StoreException e) {
            throw e;
        } catch (NoSuchFileException e) {
            throw new ObjectNotFoundException(key, uri.toString());
        } catch (IOException e) {
            throw classify("cannot read " + key + " in " + uri, e);
        }
    }

    @Override
    public long size(String key) throws StoreException {
        try {
            return Files.size(path(key));
        } catch (NoSuchFileException e) {
            throw new ObjectNotFoundException(key, uri.toString());
        } catch (IOException e) {
            throw classify("cannot look up " + key + " in " + uri, e);
        }
    }

    @Override
    public boolean exists(String key) {
        return Files.isRegularFile(path(key));
    }

    /**
     * {@inheritDoc} Here: the temporary files {@code .<name>.tmp-<random>} of puts that never renamed them. A put
     * running beside the sweep renames its own file away, and a gc may remove a directory, between their listing
     * and their look-up: what is gone by then is skipped, not an error (a sweep failed so, beside a push); a root
     * that is not there holds nothing to sweep, as it lists nothing.
     */
    @Override
    public int deleteAbandoned(Duration olderThan, boolean dryRun) throws StoreException {
        long before = System.currentTimeMillis() - olderThan.toMillis();
        int[] n = {0};
        try {
            Files.walkFileTree(root, new ConcurrentTreeVisitor() {
                @Override
                public FileVisitResult visitFile(Path p, BasicFileAttributes a) throws IOException {
                    String name = p.getFileName().toString();
                    // the attributes were read as the walk met the file, without following a link
                    if (name.startsWith(".") && name.contains(".tmp-") && a.isRegularFile()
                            && a.lastModifiedTime().toMillis() < before) {
                        if (!dryRun) {
                            Files.deleteIfExists(p);
                        }
                        n[0]++;
                    }
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw classify("cannot sweep abandoned temporary files in " + uri, e);
        }
        return n[0];
    }

    @Override
    public List<String> list(String prefix) throws StoreException {
        int cut = prefix.lastIndexOf('/');
        Path start = cut < 0 ? root : root.resolve(prefix.substring(0, cut));
        if (!Files.isDirectory(start)) {
            return List.of();
        }
        List<String> keys = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(start)) {
            walk.filter(Files::isRegularFile)
                    .filter(p -> !p.getFileName().toString().startsWith("."))
                    .map(p -> root.relativize(p).toString().replace('\\', '/'))
                    .filter(k -> k.startsWith(prefix))
                    .forEach(keys::add);
        } catch (IOException | UncheckedIOException e) {
            throw classify("cannot list " + prefix + " in " + uri, e instanceof IOException io ? io
                    : ((UncheckedIOException) e).getCause());
        }
        keys.sort(null);
        return keys;
    }

    @Override
    public void delete(String key) throws StoreException {
        Path p = path(key);
        try {
            if (Files.deleteIfExists(p)) {
                fsyncDir(p.getParent());
            }
        } catch (IOException e) {
            throw classify("cannot delete " + key + " in " + uri, e);
        }
    }

    @Override
    public void close() {
        knownDirs.clear();
    }

    @Override
    public String toString() {
        return uri.toString();
    }

    private Path path(String key) {
        return root.resolve(Keys.require(key));
    }

    /**
     * Creates {@code dir} and missing parents, fsyncing each new entry into its parent. A directory
     * inside the store that was already there is fsynced into its parent too, once per process: a
     * put killed between creating it and that fsync (or a concurrent put that has not reached it
     * yet) leaves a name that is visible but not durable, and a power cut would take it away with
     * every object later synced below it (PowerLossIT). The store root, when it existed, is the
     * site's and is left alone.
     */
    private void ensureDir(Path dir) throws IOException {
        if (knownDirs.contains(dir)) {
            return;
        }
        Path parent = dir.getParent();
        boolean inStore = dir.startsWith(root) && !dir.equals(root);
        boolean exists = Files.isDirectory(dir);
        if (parent != null && (inStore || !exists)) {
            ensureDir(parent);
        }
        boolean created = false;
        if (!exists) {
            try {
                Files.createDirectory(dir);
                Files.setPosixFilePermissions(dir, OWNER_DIR);
                created = true;
            } catch (FileAlreadyExistsException raced) {
                if (!Files.isDirectory(dir)) {
                    throw raced;
                }
            }
        }
        if (parent != null && (created || inStore)) {
            fsyncDir(parent);
        }
        knownDirs.add(dir);
    }

    static void fsyncDir(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    private static StoreException classify(String what, IOException e) {
        if (e instanceof AccessDeniedException || e instanceof FileAlreadyExistsException) {
            return new PermanentStoreException(what + ": " + e, e);
        }
        // Full disks, I/O errors and unreachable mounts may pass; the caller retries with backoff.
        return new TransientStoreException(what + ": " + e, e);
    }
}

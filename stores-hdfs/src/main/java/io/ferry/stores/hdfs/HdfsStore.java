package io.ferry.stores.hdfs;

import io.ferry.stores.Keys;
import io.ferry.stores.ObjectNotFoundException;
import io.ferry.stores.PermanentStoreException;
import io.ferry.stores.Store;
import io.ferry.stores.StoreException;
import io.ferry.stores.TransientStoreException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.ParentNotDirectoryException;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.security.AccessControlException;

import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A store in a directory of HDFS, through the Hadoop {@link FileSystem} API (the shaded
 * client jars).
 *
 * <p>A put writes a hidden temporary file beside the target ({@code .<name>.tmp-<random>}),
 * {@code hsync}s it (the DataNodes have it on disk, not only in memory), closes it, then
 * renames it over the key: the NameNode's rename is atomic and logged durably before it
 * answers, so an object is visible only whole and only once durable. Temporary files left by
 * a crash never show in {@link #list}. Each object is a file: a pack in the default layout, a chunk
 * in the chunk layout; docs/operators.md ("HDFS and S3") gives the chunk size to use on HDFS.
 *
 * <p>Options: {@code hdfs.replication} (replicas per file; default: the cluster's),
 * {@code hdfs.config-dir} (a directory holding {@code core-site.xml} and {@code hdfs-site.xml};
 * default {@code $HADOOP_CONF_DIR}), and {@code hdfs.conf.<key>} for any Hadoop client key
 * (for example {@code hdfs.conf.dfs.client.socket-timeout}).
 */
public final class HdfsStore implements Store {
    static final String REPLICATION = "hdfs.replication";
    static final String CONFIG_DIR = "hdfs.config-dir";
    static final String CONF_PREFIX = "hdfs.conf.";
    static final Set<String> OPTIONS = Set.of(REPLICATION, CONFIG_DIR);

    private final FileSystem fs;
    private final FileContext fc;
    private final URI uri;
    private final Path root;
    private final short replication;

    private HdfsStore(FileSystem fs, FileContext fc, URI uri, Path root, short replication) {
        this.fs = fs;
        this.fc = fc;
        this.uri = uri;
        this.root = root;
        this.replication = replication;
    }

    public static HdfsStore open(URI uri, Map<String, String> options, String hadoopConfDir) throws StoreException {
        if (uri.getAuthority() == null || uri.getPath() == null || uri.getPath().isEmpty()) {
            throw new IllegalArgumentException("HDFS store URI must be hdfs://namenode[:port]/path, got '" + uri + "'");
        }
        Configuration conf = new Configuration();
        String confDir = options.getOrDefault(CONFIG_DIR, hadoopConfDir);
        if (confDir != null && !confDir.isBlank()) {
            for (String site : new String[]{"core-site.xml", "hdfs-site.xml"}) {
                java.nio.file.Path f = java.nio.file.Path.of(confDir, site);
                if (Files.isRegularFile(f)) {
                    conf.addResource(new Path(f.toUri()));
                }
            }
        }
        options.forEach((k, v) -> {
            if (k.startsWith(CONF_PREFIX)) {
                conf.set(k.substring(CONF_PREFIX.length()), v);
            }
        });
        tuneForManyFiles(conf);
        short replication = 0;
        if (options.containsKey(REPLICATION)) {
            try {
                int r = Integer.parseInt(options.get(REPLICATION).trim());
                if (r < 1 || r > 512) {
                    throw new NumberFormatException();
                }
                replication = (short) r;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(REPLICATION + " must be a whole number within 1..512, got '"
                        + options.get(REPLICATION) + "'");
            }
        }
        Path root = new Path(uri);
        try {
            FileSystem fs = FileSystem.newInstance(uri, conf); // not the shared cache: close() is ours
            try {
                fs.mkdirs(root);
                return new HdfsStore(fs, FileContext.getFileContext(fs.getUri(), conf), uri, root,
                        replication == 0 ? fs.getDefaultReplication(root) : replication);
            } catch (IOException | RuntimeException e) {
                fs.close();
                throw e;
            }
        } catch (IOException e) {
            throw classify("cannot open HDFS store " + uri, e);
        }
    }

    /** Hadoop's client wait before it first asks whether a closed file's last block is complete. */
    public static final String CLOSE_POLL_DELAY = "dfs.client.block.write.locateFollowingBlock.initial.delay.ms";

    /**
     * Closing an HDFS file waits until the NameNode has the DataNodes' report of its last block;
     * the client first asks after 400 ms by default, which alone made a 4 MiB chunk cost about
     * 270 ms to write (measured on the MiniDFSCluster: 42 ms with 10 ms). Ferry writes many
     * such files, so it asks after 10 ms unless the site's configuration or an
     * {@code hdfs.conf.} option sets the key.
     */
    public static void tuneForManyFiles(Configuration conf) {
        String[] sources = conf.getPropertySources(CLOSE_POLL_DELAY);
        boolean setBySite = sources != null
                && Arrays.stream(sources).anyMatch(x -> !x.endsWith("-default.xml"));
        if (!setBySite) {
            conf.setInt(CLOSE_POLL_DELAY, 10);
        }
    }

    @Override
    public URI uri() {
        return uri;
    }

    @Override
    public void put(String key, ByteBuffer data) throws StoreException {
        Path target = path(key);
        Path tmp = new Path(target.getParent(),
                "." + target.getName() + ".tmp-" + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        try {
            // Not try-with-resources: a failed DFSOutputStream rethrows the same exception from
            // close(), and suppressing an exception in itself is an IllegalArgumentException.
            FSDataOutputStream out = fs.create(tmp, false, 1 << 16, replication, fs.getDefaultBlockSize(tmp));
            try {
                write(out, data.duplicate());
                out.hsync(); // on the DataNodes' disks before we call it written
            } catch (IOException | RuntimeException e) {
                closeAfterFailure(out, e);
                throw e;
            }
            out.close();
            fc.rename(tmp, target, Options.Rename.OVERWRITE);
        } catch (IOException e) {
            try {
                fs.delete(tmp, false);
            } catch (IOException | RuntimeException suppressed) {
                addSuppressed(e, suppressed); // invisible to list(); safe to remove later
            }
            throw classify("cannot write " + key + " in " + uri, e);
        }
    }

    private static void write(FSDataOutputStream out, ByteBuffer b) throws IOException {
        if (b.hasArray()) {
            out.write(b.array(), b.arrayOffset() + b.position(), b.remaining());
            return;
        }
        byte[] piece = new byte[Math.min(b.remaining(), 1 << 20)];
        while (b.hasRemaining()) {
            int n = Math.min(piece.length, b.remaining());
            b.get(piece, 0, n);
            out.write(piece, 0, n);
        }
    }

    private static void closeAfterFailure(FSDataOutputStream out, Exception failure) {
        try {
            out.close();
        } catch (IOException | RuntimeException e) {
            addSuppressed(failure, e);
        }
    }

    private static void addSuppressed(Exception to, Exception e) {
        if (to != e) {
            to.addSuppressed(e);
        }
    }

    @Override
    public byte[] get(String key) throws StoreException {
        try (FSDataInputStream in = fs.open(path(key))) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw classifyRead(key, e);
        }
    }

    @Override
    public int read(String key, byte[] dst) throws StoreException {
        Path p = path(key);
        try (FSDataInputStream in = fs.open(p)) {
            int n = in.readNBytes(dst, 0, dst.length);
            if (n < dst.length || in.read() < 0) {
                return n;
            }
            return (int) Math.min(Integer.MAX_VALUE, fs.getFileStatus(p).getLen());
        } catch (IOException e) {
            throw classifyRead(key, e);
        }
    }

    @Override
    public void readRange(String key, long offset, byte[] dst, int dstOff, int len) throws StoreException {
        try (FSDataInputStream in = fs.open(path(key))) {
            in.readFully(offset, dst, dstOff, len); // positional: no seek state
        } catch (EOFException e) {
            throw new PermanentStoreException(key + " in " + uri + " ends before " + (offset + len) + " bytes", e);
        } catch (IOException e) {
            throw classifyRead(key, e);
        }
    }

    @Override
    public long size(String key) throws StoreException {
        try {
            return fs.getFileStatus(path(key)).getLen();
        } catch (IOException e) {
            throw classifyRead(key, e);
        }
    }

    @Override
    public boolean exists(String key) throws StoreException {
        try {
            return fs.getFileStatus(path(key)).isFile();
        } catch (FileNotFoundException e) {
            return false;
        } catch (IOException e) {
            throw classify("cannot look up " + key + " in " + uri, e);
        }
    }

    @Override
    public int deleteAbandoned(Duration olderThan, boolean dryRun) throws StoreException {
        long before = System.currentTimeMillis() - olderThan.toMillis();
        int n = 0;
        try {
            RemoteIterator<LocatedFileStatus> it = fs.listFiles(root, true);
            while (it.hasNext()) {
                LocatedFileStatus f = it.next();
                String name = f.getPath().getName();
                if (name.startsWith(".") && name.contains(".tmp-") && f.getModificationTime() < before) {
                    if (!dryRun) {
                        fs.delete(f.getPath(), false);
                    }
                    n++;
                }
            }
        } catch (FileNotFoundException e) {
            return 0;
        } catch (IOException e) {
            throw classify("cannot sweep abandoned temporary files in " + uri, e);
        }
        return n;
    }

    @Override
    public List<String> list(String prefix) throws StoreException {
        int cut = prefix.lastIndexOf('/');
        Path start = cut < 0 ? root : new Path(root, prefix.substring(0, cut));
        String rootPath = fs.makeQualified(root).toUri().getPath();
        List<String> keys = new ArrayList<>();
        try {
            RemoteIterator<LocatedFileStatus> it = fs.listFiles(start, true);
            while (it.hasNext()) {
                Path p = it.next().getPath();
                if (p.getName().startsWith(".")) {
                    continue; // a temporary file of a put in progress or of a crash
                }
                String k = p.toUri().getPath().substring(rootPath.length() + 1);
                if (k.startsWith(prefix)) {
                    keys.add(k);
                }
            }
        } catch (FileNotFoundException e) {
            return List.of();
        } catch (IOException e) {
            throw classify("cannot list " + prefix + " in " + uri, e);
        }
        keys.sort(null);
        return keys;
    }

    @Override
    public void delete(String key) throws StoreException {
        try {
            fs.delete(path(key), false);
        } catch (IOException e) {
            throw classify("cannot delete " + key + " in " + uri, e);
        }
    }

    @Override
    public void close() throws IOException {
        fs.close();
    }

    @Override
    public String toString() {
        return uri.toString();
    }

    private Path path(String key) {
        return new Path(root, Keys.require(key));
    }

    private StoreException classifyRead(String key, IOException e) {
        if (unwrap(e) instanceof FileNotFoundException) {
            return new ObjectNotFoundException(key, uri.toString());
        }
        return classify("cannot read " + key + " in " + uri, e);
    }

    /**
     * Denied access and a file where a directory should be will not pass; everything else (an
     * unreachable NameNode, no live DataNode, safe mode, timeouts) may, and is retried.
     */
    static StoreException classify(String what, IOException e) {
        IOException cause = unwrap(e);
        if (cause instanceof AccessControlException || cause instanceof FileAlreadyExistsException
                || cause instanceof ParentNotDirectoryException) {
            return new PermanentStoreException(what + ": " + firstLine(cause), e);
        }
        return new TransientStoreException(what + ": " + firstLine(cause), e);
    }

    private static IOException unwrap(IOException e) {
        if (e instanceof RemoteException re) {
            return re.unwrapRemoteException(FileNotFoundException.class, AccessControlException.class,
                    FileAlreadyExistsException.class, ParentNotDirectoryException.class);
        }
        return e;
    }

    private static String firstLine(Throwable t) {
        String m = String.valueOf(t.getMessage());
        int nl = m.indexOf('\n');
        return t.getClass().getSimpleName() + ": " + (nl < 0 ? m : m.substring(0, nl));
    }
}

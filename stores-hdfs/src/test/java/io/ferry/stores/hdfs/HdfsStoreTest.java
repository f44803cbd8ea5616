package io.ferry.stores.hdfs;

import io.ferry.stores.ResilientStore;
import io.ferry.stores.Store;
import io.ferry.stores.StoreContractTest;
import io.ferry.stores.Stores;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The store conformance suite, and HDFS's own cases, against a MiniDFSCluster. */
class HdfsStoreTest extends StoreContractTest {
    @TempDir
    static java.nio.file.Path dir;
    static MiniHdfs hdfs;
    private static final AtomicInteger DIRS = new AtomicInteger();

    @BeforeAll
    static void startCluster() throws Exception {
        hdfs = new MiniHdfs(dir);
    }

    @AfterAll
    static void stopCluster() {
        hdfs.close();
    }

    @Override
    protected Store openStore() throws Exception {
        return Stores.open(hdfs.uri("/ferry/t" + DIRS.incrementAndGet()), Map.of());
    }

    @Test
    void remoteStoresComeWithTheResilienceLayer() {
        assertInstanceOf(ResilientStore.class, store);
    }

    @Test
    void leftoverTemporaryFilesOfACrashAreInvisible() throws Exception {
        store.put("a/k", ByteBuffer.wrap(new byte[]{1}));
        URI root = store.uri();
        try (FileSystem fs = FileSystem.newInstance(root, new Configuration());
             FSDataOutputStream out = fs.create(new Path(root.toString() + "/a/.k2.tmp-99"))) {
            out.write(new byte[10]);
        }
        assertEquals(List.of("a/k"), store.list(""));
    }

    @Test
    void temporaryFilesOfInterruptedPutsAreSweptOnceOlderThanTheGrace() throws Exception {
        store.put("a/k", ByteBuffer.wrap(new byte[]{1}));
        URI root = store.uri();
        Path stale = new Path(root.toString() + "/a/.k2.tmp-99");
        Path fresh = new Path(root.toString() + "/a/.k3.tmp-98");
        try (FileSystem fs = FileSystem.newInstance(root, new Configuration())) {
            for (Path p : List.of(stale, fresh)) {
                try (FSDataOutputStream out = fs.create(p)) {
                    out.write(new byte[10]);
                }
            }
            fs.setTimes(stale, System.currentTimeMillis() - 7 * 3600_000L, -1);
            Duration grace = Duration.ofHours(6);
            assertEquals(1, store.deleteAbandoned(grace, true));
            assertTrue(fs.exists(stale), "a dry run deletes nothing");
            assertEquals(1, store.deleteAbandoned(grace, false));
            assertTrue(!fs.exists(stale) && fs.exists(fresh));
        }
        assertEquals(List.of("a/k"), store.list(""));
    }

    @Test
    void hadoopKeysPassThroughAndUnknownOptionsAreRefused() throws Exception {
        // dfs.blocksize and hdfs.replication each show on the file a put writes (defaults: 128 MiB and 3).
        try (Store s = Stores.open(hdfs.uri("/ferry/opts"), Map.of("hdfs.conf.dfs.client.socket-timeout", "7000",
                "hdfs.conf.dfs.blocksize", "1048576", "hdfs.replication", "1"));
             FileSystem fs = FileSystem.newInstance(hdfs.uri("/"), new Configuration())) {
            s.put("k", ByteBuffer.wrap(new byte[]{5}));
            assertArrayEquals(new byte[]{5}, s.get("k"));
            FileStatus st = fs.getFileStatus(new Path(hdfs.uri("/ferry/opts/k")));
            assertEquals(1L << 20, st.getBlockSize(), "hdfs.conf.dfs.blocksize reached the Hadoop client");
            assertEquals(1, st.getReplication(), "hdfs.replication");
        }
        try (Store s = Stores.open(hdfs.uri("/ferry/opts-default"), Map.of());
             FileSystem fs = FileSystem.newInstance(hdfs.uri("/"), new Configuration())) {
            s.put("k", ByteBuffer.wrap(new byte[]{5}));
            FileStatus st = fs.getFileStatus(new Path(hdfs.uri("/ferry/opts-default/k")));
            assertTrue(st.getBlockSize() != 1L << 20 && st.getReplication() != 1,
                    "without the options the file differs, so the checks above see the options: " + st);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Stores.open(hdfs.uri("/ferry/x"), Map.of("hdfs.replicas", "2")));
        assertTrue(e.getMessage().contains("hdfs.replicas") && e.getMessage().contains("hdfs.conf.<hadoop key>"),
                e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> Stores.open(hdfs.uri("/ferry/x"), Map.of("hdfs.replication", "zero")));
    }

    @Test
    void closePollDelayIsLoweredUnlessTheSiteSetsIt() {
        Configuration conf = new Configuration();
        HdfsStore.tuneForManyFiles(conf);
        assertEquals(10, conf.getInt(HdfsStore.CLOSE_POLL_DELAY, -1));
        Configuration site = new Configuration();
        site.setInt(HdfsStore.CLOSE_POLL_DELAY, 250);
        HdfsStore.tuneForManyFiles(site);
        assertEquals(250, site.getInt(HdfsStore.CLOSE_POLL_DELAY, -1));
    }
}

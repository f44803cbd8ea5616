package io.ferry.stores.hdfs;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;

import java.net.URI;
import java.nio.file.Path;

/**
 * A real HDFS for tests and benchmarks: an in-process MiniDFSCluster (one NameNode, one
 * DataNode) under a directory. Its DataNode can be stopped and restarted on the same ports.
 */
public final class MiniHdfs implements AutoCloseable {
    private final MiniDFSCluster cluster;
    private MiniDFSCluster.DataNodeProperties stopped;

    public MiniHdfs(Path dir) throws Exception {
        Configuration conf = new Configuration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, dir.toAbsolutePath().toString());
        conf.setInt("dfs.replication", 1);
        // Fail fast when the only DataNode is gone, so the store's retries (not the client's) act.
        conf.setInt("dfs.client.block.write.retries", 1);
        conf.setInt("dfs.client.socket-timeout", 5000);
        conf.setInt("ipc.client.connect.max.retries", 1);
        cluster = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
        cluster.waitActive();
    }

    /** {@code hdfs://localhost:port/path}. */
    public URI uri(String path) {
        return URI.create(cluster.getURI().toString() + (path.startsWith("/") ? path : "/" + path));
    }

    public synchronized void stopDataNode() {
        stopped = cluster.stopDataNode(0);
    }

    public synchronized void restartDataNode() throws Exception {
        if (stopped != null) {
            cluster.restartDataNode(stopped, true);
            cluster.waitActive();
            stopped = null;
        }
    }

    @Override
    public void close() {
        cluster.shutdown(true);
    }
}

package io.ferry.agent;

import io.ferry.model.ImageRef;
import io.ferry.model.Sizes;
import io.ferry.staging.LocalCache;
import io.ferry.staging.PushImage;
import io.ferry.staging.StagingPipeline;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The estimate at capture of what staging a generation's images will write (issue: forecasts that
 * hold when the data changes): {@link #SHARE} of each image's bytes, read after the ranks have
 * resumed (nothing is added to their stall) and before anything is written, looked up where the
 * push will look ({@link StagingPipeline#estimateWritten}). The coordinator's forecast at capture
 * then starts from the snapshot's own new bytes, not the last snapshot's share.
 */
final class CaptureSample {
    private static final Logger LOG = LoggerFactory.getLogger(CaptureSample.class);
    /** The share of an image's bytes sampled: 1%, at least a few windows of the largest blob. */
    static final double SHARE = 0.01;

    private CaptureSample() {}

    /** Per rank, the bytes staging should write; empty (unknown) where the sample cannot be taken. */
    static Map<Integer, Long> expectedWritten(StagingPipeline pipeline, LocalCache cache, AgentConfig config, long g,
                                              Collection<Integer> ranks) {
        List<Integer> order = new ArrayList<>(new TreeSet<>(ranks));
        List<PushImage> images = new ArrayList<>();
        for (int r : order) {
            ImageRef ref = new ImageRef(config.job(), g, r);
            images.add(new PushImage(cache.imageDir(ref), ref));
        }
        long t0 = System.nanoTime();
        try {
            long[] est = pipeline.estimateWritten(images, SHARE);
            Map<Integer, Long> out = new HashMap<>();
            for (int i = 0; i < order.size(); i++) {
                out.put(order.get(i), est[i]);
            }
            LOG.debug("ferry agent {}: generation {} of {}: staging should write {} (sampled in {} ms)",
                    config.node(), g, config.job(),
                    Sizes.format(out.values().stream().mapToLong(Long::longValue).filter(x -> x > 0)
                            .sum()), (System.nanoTime() - t0) / 1_000_000);
            return out;
        } catch (IOException | RuntimeException e) {
            LOG.warn("ferry agent " + config.node() + ": cannot sample generation " + g + " of " + config.job()
                    + " to estimate what it writes (" + e.getMessage() + "); the forecast uses the job's history");
            return Map.of();
        }
    }
}

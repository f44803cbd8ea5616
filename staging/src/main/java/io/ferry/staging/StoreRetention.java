package io.ferry.staging;

import io.ferry.model.ImageRef;
import io.ferry.model.Names;
import io.ferry.stores.StoreException;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Retention of a job's generations on the store ({@code ferry store prune}, the job setting
 * {@code store.keep-generations}): keeps the newest {@code keepLast} established generations,
 * and with {@code keepEvery > 0} each established generation that is a multiple of it (a
 * coarser history, as SCR's checkpoint intervals kept for longer); never the newest established
 * one (what a restart uses). Open generations newer than the oldest kept one may still be
 * in flight and are kept; older ones were abandoned and go. A generation goes marker first,
 * so a half-pruned one is never taken for established. Chunks are {@link StoreGc}'s to
 * collect. Safe to run beside pushes: it only touches generations older than every kept one.
 */
public final class StoreRetention {
    private StoreRetention() {}

    /** What a prune kept and dropped (generations, ascending). */
    public record Pruned(String job, List<Long> kept, List<Long> dropped) {}

    public static Pruned prune(Repository repo, String job, int keepLast, int keepEvery, boolean dryRun)
            throws StoreException {
        Names.requireJob(job);
        if (keepLast < 1) {
            throw new IllegalArgumentException("--keep-last must be >= 1 (the newest established"
                    + " generation is always kept), got "
                    + keepLast);
        }
        if (keepEvery < 0) {
            throw new IllegalArgumentException("--keep-every must be >= 0, got " + keepEvery);
        }
        List<Repository.GenerationListing> gens = repo.listGenerations(job);
        List<Long> established = gens.stream().filter(Repository.GenerationListing::committed)
                .map(Repository.GenerationListing::generation).sorted(Comparator.reverseOrder()).toList();
        Set<Long> keep = new TreeSet<>(established.subList(0, Math.min(keepLast, established.size())));
        if (keepEvery > 0) {
            established.stream().filter(g -> g % keepEvery == 0).forEach(keep::add);
        }
        long oldestKept = keep.isEmpty() ? Long.MIN_VALUE : ((TreeSet<Long>) keep).first();
        List<Long> kept = new ArrayList<>();
        List<Long> dropped = new ArrayList<>();
        for (Repository.GenerationListing g : gens) {
            boolean goes = g.committed() ? !keep.contains(g.generation()) : g.generation() < oldestKept;
            (goes ? dropped : kept).add(g.generation());
            if (goes && !dryRun) {
                if (g.committed()) {
                    repo.store().delete(Repository.markerKey(job, g.generation()));
                }
                for (String shard : g.markerShards()) { // after the head: a marker never names a missing shard
                    repo.store().delete(shard);
                }
                for (int r : g.ranks()) {
                    repo.store().delete(Repository.manifestKey(new ImageRef(job, g.generation(), r)));
                }
            }
        }
        return new Pruned(job, kept, dropped);
    }
}

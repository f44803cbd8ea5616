package io.ferry.benchmarks;

import java.util.List;

/** What {@link ClusterScaleBenchmark} measured: a row per generation, and the run's summary as it prints it. */
final class ScaleResult {
    private ScaleResult() {}

    record GenRow(long generation, long events, double appendSeconds, double appendRate, double foldSeconds,
                  double foldRate, double delaySeconds, double requestToEstablished, long heartbeats,
                  double foldLagSeconds, double cpuMicrosPerEvent, boolean warmUp) {}

    record Result(int perNode, int nodes, int ranks, List<GenRow> rows, long heapBytes, long stateBytes,
                  double replaySeconds, long replayEvents, long replayHeapBytes, int cores, String load, long maxHeap) {
        void print() {
            System.out.printf("%nFerry coordinator scale: %d nodes x %d ranks = %,d ranks, %d generations, %d cores, "
                    + "load %s, max heap %d MiB%n", nodes, perNode, ranks, rows.size(), cores, load, maxHeap >> 20);
            System.out.printf("%4s %10s %10s %12s %10s %12s %10s %10s %12s %12s%n", "gen", "events", "append s",
                    "append ev/s", "fold s", "fold ev/s", "cpu us/ev", "lag s", "delay s", "req->est s");
            for (GenRow g : rows) {
                System.out.printf("%4d %,10d %10.2f %,12.0f %10.2f %,12.0f %10.1f %10.3f %12.3f %12.2f%s%n",
                        g.generation, g.events, g.appendSeconds, g.appendRate, g.foldSeconds, g.foldRate,
                        g.cpuMicrosPerEvent, g.foldLagSeconds, g.delaySeconds, g.requestToEstablished,
                        g.warmUp ? "  (warm-up, not counted)" : "");
            }
            List<GenRow> counted = rows.stream().filter(g -> !g.warmUp).toList();
            double[] delays = counted.stream().mapToDouble(GenRow::delaySeconds).sorted().toArray();
            double[] folds = counted.stream().mapToDouble(GenRow::foldRate).sorted().toArray();
            long events = counted.stream().mapToLong(GenRow::events).sum();
            double foldSeconds = counted.stream().mapToDouble(GenRow::foldSeconds).sum();
            double cpu = counted.stream().mapToDouble(g -> g.cpuMicrosPerEvent * g.events).sum() / events;
            System.out.printf("%ndelay = last ImageStaged appended -> SnapshotEstablished appended (log times);"
                    + " lag = its part until the coordinator had folded the last ImageStaged;"
                    + " cpu = coordinator thread CPU per event%n");
            System.out.printf("%nlive fold rate       : median %,.0f events/s per generation, overall %,.0f events/s"
                    + " (%,d events in %.1f s of folding)%n", percentile(folds, 50), events / foldSeconds, events,
                    foldSeconds);
            System.out.printf("coordinator CPU      : %.1f us per event on its own thread"
                    + " = %,.0f events per CPU-second%n", cpu, 1e6 / cpu);
            System.out.printf("replay fold rate     : %,.0f events/s"
                    + " (%,d events, whole log, fresh coordinator, %.1f s to live)%n",
                    replayEvents / replaySeconds, replayEvents, replaySeconds);
            System.out.printf("last staged -> established: median %.3f s, p99 %.3f s (nearest rank),"
                    + " max %.3f s (%d generations)%n",
                    percentile(delays, 50), percentile(delays, 99), delays[delays.length - 1], delays.length);
            System.out.printf("folded state         : %,d bytes = %.1f bytes per rank"
                    + " (the Jobs fold of the whole log, measured alone)%n", stateBytes, (double) stateBytes / ranks);
            System.out.printf("coordinator heap     : %,d bytes after the run = %.1f bytes per rank;"
                    + " after a replay %,d bytes = %.1f bytes per rank%n", heapBytes, (double) heapBytes / ranks,
                    replayHeapBytes, (double) replayHeapBytes / ranks);
            System.out.printf("goals (2 cores)      : >= 100,000 events/s, p99 < 1 s at 32,768 ranks,"
                    + " < 1,024 bytes/rank%n");
            System.out.printf("RESULT ranks=%d events_per_s=%.0f cpu_us_per_event=%.1f replay_events_per_s=%.0f"
                            + " delay_median_s=%.3f delay_p99_s=%.3f state_per_rank=%.1f heap_per_rank=%.1f"
                            + " replay_heap_per_rank=%.1f%n", ranks, events / foldSeconds, cpu,
                    replayEvents / replaySeconds, percentile(delays, 50), percentile(delays, 99),
                    (double) stateBytes / ranks, (double) heapBytes / ranks, (double) replayHeapBytes / ranks);
        }
    }

    /** Nearest-rank percentile of sorted values. */
    static double percentile(double[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int i = (int) Math.ceil(p / 100 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }
}

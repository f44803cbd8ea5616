package io.ferry.coordinator;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The compacted state topic's value for a job: how many generations it had and how they ended,
 * its newest established one, and the states and counts of its newest {@link #WINDOW}
 * generations. Bounded: a job that checkpoints every ten minutes for a month has thousands of
 * generations, and one Kafka record must not grow with them (the broker refuses records over
 * 1 MB by default); the whole history is the events topic's.
 */
final class StateJson {
    /** Generations listed one by one, the newest. */
    static final int WINDOW = 32;

    private StateJson() {}

    static byte[] of(JobView j) {
        int established = 0;
        int failed = 0;
        for (GenerationView g : j.generations.values()) {
            established += g.state == GenerationView.State.ESTABLISHED ? 1 : 0;
            failed += g.state == GenerationView.State.FAILED ? 1 : 0;
        }
        StringBuilder b = new StringBuilder("{\"job\":\"").append(j.job)
                .append("\",\"generationCount\":").append(j.generations.size())
                .append(",\"establishedCount\":").append(established)
                .append(",\"failedCount\":").append(failed)
                .append(",\"newestEstablished\":")
                .append(j.newestEstablished().map(GenerationView::generation).orElse(-1L))
                .append(",\"generations\":[");
        List<GenerationView> all = List.copyOf(j.generations.values());
        String sep = "";
        for (GenerationView g : all.subList(Math.max(0, all.size() - WINDOW), all.size())) {
            b.append(sep).append("{\"generation\":").append(g.generation).append(",\"state\":\"").append(g.state)
                    .append("\",\"captured\":").append(g.capturedRanks()).append(",\"staged\":").append(g.stagedRanks())
                    .append('}');
            sep = ",";
        }
        return b.append("],\"recoveries\":").append(j.recoveries).append('}').toString()
                .getBytes(StandardCharsets.UTF_8);
    }
}

package io.ferry.coordinator;

import java.nio.charset.StandardCharsets;

/** The compacted state topic's value for a job: its generations' states and counts. */
final class StateJson {
    private StateJson() {}

    static byte[] of(JobView j) {
        StringBuilder b = new StringBuilder("{\"job\":\"").append(j.job).append("\",\"generations\":[");
        String sep = "";
        for (GenerationView g : j.generations.values()) {
            b.append(sep).append("{\"generation\":").append(g.generation).append(",\"state\":\"").append(g.state)
                    .append("\",\"captured\":").append(g.capturedRanks()).append(",\"staged\":").append(g.stagedRanks())
                    .append('}');
            sep = ",";
        }
        return b.append("],\"recoveries\":").append(j.recoveries).append('}').toString().getBytes(StandardCharsets.UTF_8);
    }
}

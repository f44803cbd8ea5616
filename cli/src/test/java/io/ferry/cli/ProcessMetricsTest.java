package io.ferry.cli;

import io.ferry.agent.AgentMeters;
import io.ferry.coordinator.CoordinatorMeters;
import io.ferry.model.Event;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProcessMetricsTest {
    /**
     * The registry as {@code ferry run} fills it: JVM and process binders, the coordinator's and the agent's meters.
     */
    private static synchronized String scrape() {
        var r = ProcessMetrics.registry();
        if (r.find("ferry.agent.capture").timer() == null) {
            // once, as in a process: a second set would find the first's
            new CoordinatorMeters(r);
            new AgentMeters(r);
        }
        return r.scrape();
    }

    @Test
    void oneRegistryPerProcessWithTheJvmAndProcessBinders() {
        assertSame(ProcessMetrics.registry(), ProcessMetrics.registry());
        String text = scrape();
        for (String family : new String[]{"jvm_memory_used_bytes", "jvm_gc_live_data_size_bytes",
                "jvm_threads_live_threads",
                "jvm_classes_loaded_classes", "jvm_info", "process_cpu_usage", "process_cpu_seconds_total",
                "system_cpus",
                "process_uptime_seconds", "process_files_open_files", "process_files_max_files",
                "system_load_average_1m",
                "ferry_stall_seconds", "ferry_agent_capture_seconds"}) {
            assertTrue(text.contains("# TYPE " + family + " "), family + " missing: " + text);
        }
        Set<String> seen = new HashSet<>();
        text.lines().filter(l -> l.startsWith("# TYPE ")).forEach(l -> assertTrue(seen.add(l.split(" ")[2]), l));
    }

    @Test
    void promtoolFindsNothingToSay() throws Exception {
        Assumptions.assumeTrue(promtool(), "promtool is not installed (Debian: apt-get install prometheus)");
        Process p = new ProcessBuilder("promtool", "check", "metrics").redirectErrorStream(true).start();
        try (var in = p.getOutputStream()) {
            in.write(scrape().getBytes(StandardCharsets.UTF_8));
        }
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), said);
        assertTrue(said.isBlank(), said);
    }

    @Test
    void agentMetricsIsHostPortOrOff() {
        assertTrue(AgentMetrics.address("off").isEmpty());
        assertEquals(7461, AgentMetrics.address("127.0.0.1:7461").orElseThrow().getPort());
        IllegalArgumentException e = Assertions.assertThrows(IllegalArgumentException.class,
                () -> AgentMetrics.address("localhost"));
        assertTrue(e.getMessage().startsWith("agent.metrics must be HOST:PORT"), e.getMessage());
    }

    static boolean promtool() {
        try {
            return new ProcessBuilder("promtool", "--version").redirectErrorStream(true).start().waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }
}

package io.ferry.cli;

import com.sun.management.OperatingSystemMXBean;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmInfoMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.lang.management.ManagementFactory;

/**
 * The one Prometheus registry of this process, made on first use with the JVM and process
 * binders (memory, GC, threads, class loading, JVM version, CPU, uptime, file descriptors).
 * The coordinator and the agent of a process put their meters on it: {@code ferry run}, which
 * runs both, serves the same registry at the coordinator's {@code /metrics} (after the
 * job-state families) and at the agent's. Two of Micrometer's processor meters break
 * Prometheus's naming rules ({@code promtool check metrics} says so): the CPU count is served
 * as {@code system_cpus} (a {@code _count} suffix is a histogram's), and the process's CPU time
 * as the conventional {@code process_cpu_seconds_total} instead of nanoseconds. Thread-safe.
 */
final class ProcessMetrics {
    private static PrometheusMeterRegistry registry;

    private ProcessMetrics() {}

    static synchronized PrometheusMeterRegistry registry() {
        if (registry == null) {
            PrometheusMeterRegistry r = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            // Filters first: they apply to meters registered after them.
            r.config().meterFilter(MeterFilter.denyNameStartsWith("process.cpu.time"));
            r.config().meterFilter(new MeterFilter() {
                @Override
                public Meter.Id map(Meter.Id id) {
                    return id.getName().equals("system.cpu.count") ? id.withName("system.cpus") : id;
                }
            });
            new JvmMemoryMetrics().bindTo(r);
            new JvmGcMetrics().bindTo(r); // listens to GC notifications for the life of the process
            new JvmThreadMetrics().bindTo(r);
            new ClassLoaderMetrics().bindTo(r);
            new JvmInfoMetrics().bindTo(r);
            new ProcessorMetrics().bindTo(r);
            new UptimeMetrics().bindTo(r);
            new FileDescriptorMetrics().bindTo(r);
            if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
                FunctionCounter.builder("process.cpu", os, o -> o.getProcessCpuTime() / 1e9).baseUnit("seconds")
                        .description("CPU time this process used, all threads.").register(r);
            }
            registry = r;
        }
        return registry;
    }
}

package io.ferry.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferry.coordinator.JobView;
import io.ferry.coordinator.predict.Calibration;
import io.ferry.coordinator.predict.CalibrationJson;
import io.ferry.coordinator.predict.FillTimeLaw;
import io.ferry.coordinator.predict.Projection;
import io.ferry.model.Names;
import io.ferry.model.Rates;
import io.ferry.model.Sizes;
import io.ferry.staging.OpenedStore;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code ferry plan}: how long a checkpoint takes on a machine, by the Checkpoint Fill-Time Law
 * (Cao et al.), for capacity planners.
 */
@Command(name = "plan", mixinStandardHelpOptions = true,
        description = {"Ideal checkpoint time by the Checkpoint Fill-Time Law (Cao et al.):",
                "(checkpoint size / total storage) x (disk size / disk write bandwidth).",
                "Sizes: KB, MB, GB, TB, PB, EB are decimal (10^3, 10^6, ...); KiB, MiB, GiB, TiB,"
                        + " PiB, EiB and bare K, M, G,",
                "T, P, E are binary (2^10, 2^20, ...), up to 9.2 EB. Rates: a size per second,"
                        + " e.g. 4GB/s or 500MiB/s."})
final class PlanCommand implements Callable<Integer> {
    @Option(names = {"--checkpoint-size", "--ram"}, paramLabel = "SIZE",
            description = "Bytes to write; for a full-memory dump, the machine's RAM (e.g. 1PB).")
    String checkpointSize;
    @Option(names = "--storage", paramLabel = "SIZE", description = "Total capacity of the storage (e.g. 10PB).")
    String storage;
    @Option(names = "--disk-size", paramLabel = "SIZE", description = "Capacity of one disk or SSD (e.g. 4TB).")
    String diskSize;
    @Option(names = "--disk-bandwidth", paramLabel = "RATE", description = "Write bandwidth of one disk (e.g. 4GB/s).")
    String diskBandwidth;
    @Option(names = "--json",
            description = "Print JSON: ratio, singleDiskFillSeconds, idealSeconds and the inputs in bytes.")
    boolean json;
    @Option(names = "--accuracy", paramLabel = "JOB",
            description = "Instead: every forecast the coordinator made for JOB beside what then happened, and"
                    + " the error distribution.")
    String accuracy;
    @Option(names = "--refit",
            description = "With --accuracy: the forecasts this version's model makes from the job's recorded history"
                    + " (each from the snapshots established before it was requested; again at 25%%, 50%% and 75%%"
                    + " of the bytes read while the heartbeats topic keeps the staging reports, an hour), to judge"
                    + " a model change on a recorded job.")
    boolean refit;
    @Option(names = "--calibrate-from", paramLabel = "JOB",
            description = {
                    "Calibrate from JOB's established snapshots (local write, staging, compression, straggler spread)",
                    "and a probe of its store with concurrent writers; with --nodes, project"
                            + " to that machine per tier."})
    String calibrateFrom;
    @Option(names = "--calibration", paramLabel = "FILE",
            description = "Project from a calibration saved earlier instead.")
    Path calibrationFile;
    @Option(names = "--save-calibration", paramLabel = "FILE", description = "Write the calibration to FILE (JSON).")
    Path saveCalibration;
    @Option(names = "--nodes", paramLabel = "N",
            description = "Target machine: nodes (one agent and one store writer each).")
    Long nodes;
    @Option(names = "--memory-per-node", paramLabel = "SIZE",
            description = "Target machine: checkpoint bytes per node (its RAM for a full-memory dump); or"
                    + " --checkpoint-size in all.")
    String memoryPerNode;
    @Option(names = "--local-bandwidth", paramLabel = "RATE",
            description = "Target machine: write bandwidth of a node's SSD (default: as measured here).")
    String localBandwidth;
    @Option(names = "--probe-size", defaultValue = "64MiB", paramLabel = "SIZE",
            description = "Bytes each probe writer puts into the store. Default ${DEFAULT-VALUE}.")
    String probeSize;
    @Option(names = "--probe-writers", defaultValue = "1,2,4,8", split = ",", paramLabel = "N,N,...",
            description = "Concurrent writers to probe the store with. Default ${DEFAULT-VALUE}.")
    List<Integer> probeWriters;
    @Option(names = "--set", paramLabel = "KEY=VALUE",
            description = "Store configuration for the probe, repeatable, as the job had it (e.g. s3.endpoint=...).")
    Map<String, String> settings = new LinkedHashMap<>();
    @CommandLine.Mixin
    LogOptions logOptions;

    @Override
    public Integer call() throws Exception {
        if (refit && accuracy == null) {
            throw new IllegalArgumentException("--refit goes with --accuracy JOB");
        }
        if (accuracy != null) {
            return Accuracy.print(accuracy, logOptions, json, refit, System.out);
        }
        if (calibrateFrom != null || calibrationFile != null) {
            return calibrated();
        }
        List<String> missing = new ArrayList<>();
        if (checkpointSize == null) {
            missing.add("--checkpoint-size (or --ram)");
        }
        if (storage == null) {
            missing.add("--storage");
        }
        if (diskSize == null) {
            missing.add("--disk-size");
        }
        if (diskBandwidth == null) {
            missing.add("--disk-bandwidth");
        }
        if (!missing.isEmpty()) {
            throw new CommandLine.ParameterException(new CommandLine(this),
                    "missing " + String.join(", ", missing));
        }
        FillTimeLaw law = new FillTimeLaw(size("--checkpoint-size", checkpointSize), size("--storage", storage),
                size("--disk-size", diskSize), rate("--disk-bandwidth", diskBandwidth));
        if (json) {
            ObjectMapper m = new ObjectMapper();
            ObjectNode n = m.createObjectNode().put("ratio", law.ratio())
                    .put("singleDiskFillSeconds", law.singleDiskFillSeconds()).put("idealSeconds", law.idealSeconds())
                    .put("checkpointSizeBytes", law.checkpointBytes()).put("storageBytes", law.storageBytes())
                    .put("diskSizeBytes", law.diskBytes()).put("diskBandwidthBytesPerSecond", law.diskBytesPerSecond());
            System.out.println(m.writeValueAsString(n));
        } else {
            print(law, System.out);
        }
        return 0;
    }

    private int calibrated() throws IOException, InterruptedException {
        if (calibrateFrom != null && calibrationFile != null) {
            throw new IllegalArgumentException("give --calibrate-from JOB or --calibration FILE, not both");
        }
        if (nodes != null && nodes < 1) {
            throw new IllegalArgumentException("--nodes must be >= 1, got " + nodes);
        }
        if (memoryPerNode != null && checkpointSize != null) {
            throw new IllegalArgumentException("give --memory-per-node or --checkpoint-size, not both");
        }
        boolean target = nodes != null || memoryPerNode != null || checkpointSize != null;
        if (target && (nodes == null || (memoryPerNode == null && checkpointSize == null))) {
            throw new IllegalArgumentException(
                    "a target machine needs --nodes and --memory-per-node (or --checkpoint-size)");
        }
        int lawInputs = (storage != null ? 1 : 0) + (diskSize != null ? 1 : 0) + (diskBandwidth != null ? 1 : 0);
        if (lawInputs != 0 && lawInputs != 3) {
            throw new IllegalArgumentException(
                    "the target's storage needs all of --storage, --disk-size and --disk-bandwidth");
        }
        double local = localBandwidth == null ? Double.NaN : rate("--local-bandwidth", localBandwidth);
        Calibration c;
        String storeUri = null;
        if (calibrateFrom != null) {
            Names.requireJob(calibrateFrom);
            JobView v;
            try (LogConnection conn = logOptions.open()) {
                v = conn.replay().get(calibrateFrom)
                        .orElseThrow(() -> new IllegalArgumentException("no job " + calibrateFrom + " in the log"));
            }
            c = Calibration.measure(v);
            storeUri = v.settings().orElseThrow().store();
            c = probe(c, storeUri);
        } else {
            c = CalibrationJson.read(calibrationFile);
        }
        if (saveCalibration != null) {
            CalibrationJson.write(c, saveCalibration);
            System.err.println("ferry: calibration written to " + saveCalibration);
        }
        Projection p = null;
        if (target) {
            long perNode = memoryPerNode != null ? size("--memory-per-node", memoryPerNode)
                    : Math.max(1, size("--checkpoint-size", checkpointSize) / nodes);
            Optional<FillTimeLaw> law = lawInputs == 3
                    ? Optional.of(new FillTimeLaw(perNode * nodes, size("--storage", storage),
                    size("--disk-size", diskSize), rate("--disk-bandwidth", diskBandwidth))) : Optional.empty();
            p = new Projection(c, nodes, perNode, local, law);
        }
        if (json) {
            System.out.println(new ObjectMapper().writerWithDefaultPrettyPrinter()
                    .writeValueAsString(Calibrated.json(c, p)));
            return 0;
        }
        Calibrated.printCalibration(c, storeUri, System.out);
        if (p != null) {
            Calibrated.printProjection(p, System.out);
        } else {
            System.out.println(
                    "Give --nodes N --memory-per-node SIZE (and --storage, --disk-size, --disk-bandwidth) to project.");
        }
        return 0;
    }

    /** Probes the job's store (and, for a file: store, its disk); progress on stderr. */
    private Calibration probe(Calibration c, String storeUri) throws IOException, InterruptedException {
        long perWriter = size("--probe-size", probeSize);
        for (int w : probeWriters) {
            if (w < 1 || w > 256) {
                throw new IllegalArgumentException("--probe-writers must be between 1 and 256, got " + w);
            }
        }
        System.err.println("ferry: probing " + storeUri + " with " + probeWriters + " concurrent writers, "
                + Sizes.format(perWriter) + " each (deleted afterwards)");
        try (OpenedStore o = StoreOptions.open(storeUri, settings)) {
            var curve = StoreProbe.curve(o.store(), probeWriters, perWriter, System.err);
            double raw = Double.NaN;
            URI uri = o.store().uri();
            if ("file".equals(uri.getScheme())) {
                raw = StoreProbe.rawDisk(Path.of(uri), perWriter * 2);
                System.err.printf(Locale.ROOT, "  raw disk: %s/s%n", decimal(raw));
            }
            return c.withStore(curve, raw);
        }
    }

    static void print(FillTimeLaw law, PrintStream out) {
        out.println("Checkpoint Fill-Time Law (Cao et al.): ideal time = (checkpoint size / storage) x"
                + " (disk size / disk bandwidth)");
        out.printf(Locale.ROOT, "  checkpoint size     %s%n", bytes(law.checkpointBytes()));
        out.printf(Locale.ROOT, "  total storage       %s (%.0f disks)%n", bytes(law.storageBytes()), law.disks());
        out.printf(Locale.ROOT, "  disk size           %s%n", bytes(law.diskBytes()));
        out.printf(Locale.ROOT, "  disk bandwidth      %s/s%n", decimal(law.diskBytesPerSecond()));
        out.printf(Locale.ROOT, "  ratio               %.4g (checkpoint / storage)%n", law.ratio());
        out.printf(Locale.ROOT, "  single-disk fill    %s%n", seconds(law.singleDiskFillSeconds()));
        out.printf(Locale.ROOT, "  ideal checkpoint    %s%n", seconds(law.idealSeconds()));
        out.println("Units: KB/MB/GB/TB/PB/EB decimal (10^3n bytes), KiB/MiB/GiB/TiB/PiB/EiB binary"
                + " (2^10n); printed in decimal.");
    }

    private static long size(String option, String text) {
        try {
            long v = Sizes.parse(text);
            if (v <= 0) {
                throw new IllegalArgumentException("must be above zero");
            }
            return v;
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + ": " + e.getMessage());
        }
    }

    private static double rate(String option, String text) {
        try {
            return Rates.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + ": " + e.getMessage());
        }
    }

    private static String bytes(long b) {
        return decimal(b) + " (" + b + " bytes)";
    }

    /** Decimal units with three significant digits: {@code 4.00 TB}. */
    static String decimal(double b) {
        String[] units = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
        int i = 0;
        while (b >= 1000 && i < units.length - 1) {
            b /= 1000;
            i++;
        }
        return String.format(Locale.ROOT, "%.3g %s", b, units[i]);
    }

    /** {@code 100 s (1 min 40 s)}. */
    static String seconds(double s) {
        String exact = String.format(Locale.ROOT, "%.4g s", s);
        if (s < 60) {
            return exact;
        }
        long whole = Math.round(s);
        long h = whole / 3600;
        long m = whole % 3600 / 60;
        long sec = whole % 60;
        return exact + " (" + (h > 0 ? h + " h " : "") + m + " min " + sec + " s)";
    }
}

package io.ferry.cli;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A real Slurm cluster for a test, in a temporary directory: {@code munged} with its own key and
 * socket, {@code slurmctld}, and one {@code slurmd} per {@link TestBed} host (each in the host's
 * network namespace, with its UTS host name as its node name and its address as NodeAddr), or, on
 * the loopback bed, one {@code slurmd} for this host with {@code cpus} CPUs. The daemons run in
 * the foreground as children of the test JVM, as root (SlurmUser=root), with proctrack/linuxproc
 * and task/none (no cgroup confinement), on ports picked free, so nothing collides with a Slurm
 * the machine may run. {@link #close()} cancels every job, stops the daemons and kills what is
 * left of their processes (every process whose environment carries this bed's mark), also on a
 * failed test; a shutdown hook does the same when the JVM is stopped.
 *
 * <p>Each slurmd has its own host name and address (its namespace host), so no Slurm built with
 * {@code --enable-multiple-slurmd} is needed; on loopback there is one node, as several slurmd on one
 * host name need that build option.
 */
final class SlurmBed implements AutoCloseable {
    private static final List<String> TOOLS = List.of("munged", "mungekey", "slurmctld", "slurmd", "sbatch",
            "srun", "squeue", "scancel", "scontrol", "sinfo");

    private final Path dir;
    private final Path conf;
    private final String mark;
    private final List<String> nodes = new ArrayList<>();
    /** munged, slurmctld, then the slurmds, in the order they were started. */
    private final List<Daemon> daemons = new ArrayList<>();
    private final Thread hook = new Thread(this::stop, "SlurmBed cleanup");
    private boolean stopped;

    private SlurmBed(Path dir) {
        this.dir = dir;
        this.conf = dir.resolve("etc").resolve("slurm.conf");
        this.mark = "ferry-slurmbed-" + ProcessHandle.current().pid() + "-" + Integer.toHexString(dir.hashCode());
    }

    /**
     * Starts munge, slurmctld and the slurmds in {@code dir} and waits (60 s at most) until every node is idle.
     * Aborts the test (JUnit assumption, saying why) where Slurm cannot run: not root, or a tool missing.
     */
    static SlurmBed start(Path dir, TestBed bed, int cpus) throws IOException, InterruptedException {
        Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        Assumptions.assumeTrue(Integer.valueOf(0).equals(uid),
                "SlurmBed: not root (uid " + uid + "): slurmd and munged here run as root");
        for (String t : TOOLS) {
            Assumptions.assumeTrue(which(t) != null, "SlurmBed: no `" + t
                    + "` (Debian: apt-get install slurmctld slurmd slurm-client munge; .ci/run installs them)");
        }
        SlurmBed s = new SlurmBed(dir);
        Runtime.getRuntime().addShutdownHook(s.hook);
        try {
            s.boot(bed, cpus);
        } catch (IOException | InterruptedException | RuntimeException | Error e) {
            s.close();
            throw e;
        }
        return s;
    }

    /** The node names, in order (fe-h0, fe-h1, ... or this host's name). */
    List<String> nodes() {
        return nodes;
    }

    /**
     * The environment every Slurm command needs (SLURM_CONF), for a ProcessBuilder or sbatch's exported environment.
     */
    Map<String, String> env() {
        return Map.of("SLURM_CONF", conf.toString());
    }

    /**
     * {@code sbatch --parsable OPTIONS SCRIPT ARGS} with {@code env} added to the environment it exports; the job id.
     */
    String sbatch(List<String> options, Path script, List<String> args, Map<String, String> env)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(which("sbatch"), "--parsable"));
        cmd.addAll(options);
        cmd.add(script.toString());
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().putAll(env);
        pb.environment().putAll(env());
        pb.environment().put("FERRY_SLURMBED", mark);
        return run(pb, "sbatch").split(";")[0].trim();
    }

    void scancel(String job) throws IOException, InterruptedException {
        slurm("scancel", job);
    }

    /** SIGTERM to the batch script only, as {@code #SBATCH --signal=B:TERM@N} sends it before the time limit. */
    void terminateBatch(String job) throws IOException, InterruptedException {
        slurm("scancel", "--signal=TERM", "--batch", job);
    }

    /** {@code scontrol show job}'s fields of one job (JobState, ExitCode, NodeList...). */
    Map<String, String> job(String id) throws IOException, InterruptedException {
        Map<String, String> f = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(\\w+)=(\\S*)").matcher(slurm("scontrol", "-o", "show", "job", id));
        while (m.find()) {
            f.putIfAbsent(m.group(1), m.group(2));
        }
        return f;
    }

    /** Waits until the job has left the queue for good (any final state); returns {@link #job}'s fields then. */
    Map<String, String> awaitEnd(String id, long seconds) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        Map<String, String> f = job(id);
        while (List.of("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED").contains(f.get("JobState"))
                || f.getOrDefault("JobState", "").isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Slurm job " + id + " still " + f.get("JobState") + " after " + seconds
                        + " s: " + f + "\n" + logs());
            }
            Thread.sleep(250);
            f = job(id);
        }
        return f;
    }

    /** The tails of the daemons' logs, for a failure message. */
    String logs() {
        StringBuilder s = new StringBuilder();
        for (Daemon d : daemons) {
            if (!d.process().isAlive()) {
                s.append(d.name()).append(" EXITED (").append(d.process().exitValue()).append(")\n");
            }
        }
        try (Stream<Path> logs = Files.list(dir.resolve("log"))) {
            for (Path p : logs.sorted().toList()) {
                List<String> l = Files.readAllLines(p, StandardCharsets.UTF_8);
                s.append("--- ").append(p.getFileName()).append('\n')
                        .append(String.join("\n", l.subList(Math.max(0, l.size() - 15), l.size()))).append('\n');
            }
        } catch (IOException e) {
            s.append(e);
        }
        return s.toString();
    }

    @Override
    public void close() {
        stop();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway; stop() is idempotent
        }
    }

    private void boot(TestBed bed, int cpus) throws IOException, InterruptedException {
        for (String d : List.of("etc", "log", "state", "munge", "spool", "tmp")) {
            Files.createDirectories(dir.resolve(d));
        }
        Path munge = dir.resolve("munge");
        Files.setPosixFilePermissions(munge, PosixFilePermissions.fromString("rwx------"));
        Path key = munge.resolve("munge.key");
        Path socket = munge.resolve("munge.socket");
        run(new ProcessBuilder(which("mungekey"), "--create", "--keyfile=" + key), "mungekey");
        daemon("munged", which("munged"), "--foreground", "--force", "--socket=" + socket, "--key-file=" + key,
                "--pid-file=" + munge.resolve("munged.pid"), "--seed-file=" + munge.resolve("munged.seed"),
                "--log-file=" + dir.resolve("log").resolve("munged.log"));
        awaitFile(socket, "munged's socket");

        String host = Files.readString(Path.of("/proc/sys/kernel/hostname")).trim().split("\\.")[0];
        String controller = bed.serviceAddress();
        List<String> nodeLines = new ArrayList<>();
        if (bed.namespaces()) {
            for (int i = 0; i < bed.hostCount(); i++) {
                nodes.add(bed.hostName(i));
                nodeLines.add("NodeName=%s NodeAddr=%s CPUs=%d State=UNKNOWN".formatted(bed.hostName(i),
                        bed.hostAddress(i), cpus));
            }
        } else {
            nodes.add(host);
            nodeLines.add("NodeName=%s NodeAddr=127.0.0.1 CPUs=%d State=UNKNOWN".formatted(host, cpus));
        }
        for (String n : nodes) {
            Files.createDirectories(dir.resolve("spool").resolve(n));
            Files.createDirectories(dir.resolve("tmp").resolve(n));
        }
        String d = dir.toString();
        Files.writeString(conf, String.join("\n",
                "# written by io.ferry.cli.SlurmBed for one test; everything under " + d,
                "ClusterName=ferrytest",
                "SlurmctldHost=%s(%s)".formatted(host, controller),
                "SlurmctldPort=" + TestBed.freePort(),
                "SlurmdPort=" + TestBed.freePort(),
                "SlurmUser=root",
                "SlurmdUser=root",
                "AuthType=auth/munge",
                "CredType=cred/munge",
                "AuthInfo=socket=" + socket,
                "StateSaveLocation=" + d + "/state",
                "SlurmdSpoolDir=" + d + "/spool/%n",
                // PMIx makes its client directories under TmpFS: per node, as the hosts share one /tmp
                "TmpFS=" + d + "/tmp/%n",
                "SlurmctldPidFile=" + d + "/state/slurmctld.pid",
                "SlurmdPidFile=" + d + "/spool/slurmd-%n.pid",
                "SlurmctldLogFile=" + d + "/log/slurmctld.log",
                "SlurmdLogFile=" + d + "/log/slurmd-%n.log",
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_CPU",
                "SlurmdParameters=config_overrides",
                "MpiDefault=none",
                "ReturnToService=2",
                "SchedulerType=sched/builtin",
                "JobAcctGatherType=jobacct_gather/none",
                "AccountingStorageType=accounting_storage/none",
                "MailProg=/bin/true",
                "KillWait=5",
                "InactiveLimit=0",
                "MinJobAge=600",
                String.join("\n", nodeLines),
                "PartitionName=ferry Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
                ""));
        // slurmd always loads a cgroup plugin in 22.05, even with proctrack/linuxproc and task/none; name the
        // hierarchy this machine has (autodetect fails on a hybrid one whose /sys/fs/cgroup is a tmpfs).
        boolean v2 = Files.exists(Path.of("/sys/fs/cgroup/cgroup.controllers"));
        Files.writeString(conf.resolveSibling("cgroup.conf"), v2
                ? "CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n"
                : "CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\nCgroupAutomount=no\n");

        daemon("slurmctld", which("slurmctld"), "-D", "-i", "-f", conf.toString());
        for (int i = 0; i < nodes.size(); i++) {
            List<String> slurmd = List.of(which("slurmd"), "-D", "-f", conf.toString());
            daemon("slurmd-" + nodes.get(i), (bed.namespaces() ? bed.onHost(i, slurmd) : new ProcessBuilder(slurmd))
                    .command().toArray(String[]::new));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String states = "";
        while (System.nanoTime() < deadline) {
            for (Daemon daemon : daemons) {
                if (!daemon.process().isAlive()) {
                    throw new IOException("a Slurm daemon exited (" + daemon.process().exitValue() + "): "
                            + daemon.name() + "\n" + logs());
                }
            }
            try {
                states = slurm("sinfo", "-h", "-N", "-o", "%N %t");
            } catch (IOException notYet) {
                states = notYet.getMessage();
            }
            if (states.lines().filter(l -> l.endsWith(" idle")).count() == nodes.size()) {
                return;
            }
            Thread.sleep(500);
        }
        throw new IOException("Slurm nodes not idle within 60 s: " + states + "\n" + logs());
    }

    private void daemon(String name, String... cmd) throws IOException {
        // in the bed's directory: a daemon that crashes leaves its core there, not in the module's (slurmd 22.05
        // was seen to die of a SIGSEGV in its own malloc, in nodelist_find)
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).directory(dir.toFile())
                .redirectOutput(dir.resolve("log").resolve(name + ".out").toFile());
        pb.environment().put("FERRY_SLURMBED", mark); // slurmstepd inherits it: close() finds what is left by it
        pb.environment().putAll(env());
        daemons.add(new Daemon(name, pb.start()));
    }

    private record Daemon(String name, Process process) {}

    private synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        try {
            if (daemons.size() > 1 && daemons.get(1).process().isAlive()) { // slurmctld: cancel every job, let them end
                String jobs = slurm("squeue", "-h", "-o", "%i");
                for (String j : jobs.split("\\s+")) {
                    if (!j.isBlank()) {
                        slurm("scancel", j);
                    }
                }
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
                while (!slurm("squeue", "-h", "-o", "%i").isBlank() && System.nanoTime() < deadline) {
                    Thread.sleep(250);
                }
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            System.err.println("SlurmBed cleanup: " + e.getMessage());
        }
        for (int i = daemons.size() - 1; i >= 0; i--) { // slurmds, slurmctld, munged
            daemons.get(i).process().destroy();
        }
        for (Process p : daemons.stream().map(Daemon::process).toList()) {
            try {
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
            }
        }
        // slurmstepd daemonises (it is no child of slurmd) and job tasks may outlive it: kill every process left
        // whose environment carries this bed's mark (the daemons', or sbatch's exported environment).
        ProcessHandle.allProcesses().filter(this::marked).forEach(ProcessHandle::destroyForcibly);
    }

    private boolean marked(ProcessHandle h) {
        if (h.pid() == ProcessHandle.current().pid()) {
            return false;
        }
        try {
            byte[] env = Files.readAllBytes(Path.of("/proc", Long.toString(h.pid()), "environ"));
            return new String(env, StandardCharsets.ISO_8859_1).contains("FERRY_SLURMBED=" + mark + "\0");
        } catch (IOException | SecurityException gone) {
            return false;
        }
    }

    private String slurm(String tool, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(which(tool)));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().putAll(env());
        return run(pb, tool);
    }

    private static String run(ProcessBuilder pb, String what) throws IOException, InterruptedException {
        Process p = pb.redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException(what + ": `" + String.join(" ", pb.command()) + "` failed: " + out);
        }
        return out;
    }

    private static void awaitFile(Path p, String what) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!Files.exists(p)) {
            if (System.nanoTime() > deadline) {
                throw new IOException("no " + what + " (" + p + ") within 15 s");
            }
            Thread.sleep(100);
        }
    }

    /** The first executable {@code name} on PATH or in the sbin/bin directories (daemons live in /usr/sbin). */
    static String which(String name) {
        String path = System.getenv().getOrDefault("PATH", "") + ":/usr/sbin:/sbin:/usr/bin:/bin";
        return Stream.of(path.split(":")).filter(d -> !d.isEmpty()).map(d -> Path.of(d, name))
                .filter(Files::isExecutable).map(Path::toString).findFirst().orElse(null);
    }
}

package io.ferry.cli;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Class-data sharing for the {@code ferry} children the tests start: the classes a push, a pull and a one-node
 * run load, parsed once per build into a static archive ({@code -Xshare:dump}) that every child maps instead
 * of reading and verifying its jars again. A child starts every few seconds in the CLI tests, and its class
 * loading was about a third of a short command's CPU on a 2-core machine.
 *
 * <p>A static archive holds classes from jars only (the JVM refuses a non-empty directory in the archived
 * class path), so a child's class path is this test JVM's jars, the module's own classes among them (its
 * jar, which Failsafe puts there itself; under Surefire, the jar beside the classes directory when no
 * compiled class is newer), then its directories (the test classes; no resource of them is in any jar).
 * The archive is made once per class path (a hash names it, the jars' sizes and times included) under
 * {@code target/it-cds}, under a file lock that the other test JVMs wait on. If it cannot be made, the
 * reason is kept beside it, said once, and children run without
 * one. {@code -Dferry.it.cds=off} leaves it out.
 */
final class ChildClassData {
    /** The class path a child runs on and the JVM options that map the archive (none without one). */
    record Plan(String classPath, List<String> jvmOptions) {}

    private static Plan plan;

    private ChildClassData() {}

    static synchronized Plan plan() {
        if (plan == null) {
            plan = make();
        }
        return plan;
    }

    private static Plan make() {
        String original = System.getProperty("java.class.path");
        if ("off".equals(System.getProperty("ferry.it.cds", "on"))) {
            return new Plan(original, List.of());
        }
        try {
            // Failsafe puts the module's jar on the class path, Surefire its classes directory
            Path classes = Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            Path target = classes.getParent();
            Path jar = Files.isDirectory(classes) ? freshJar(target, classes) : null;
            List<String> jars = new ArrayList<>();
            List<String> directories = new ArrayList<>();
            for (String entry : original.split(File.pathSeparator)) {
                if (entry.isEmpty()) {
                    continue;
                }
                Path p = Path.of(entry);
                if (jar != null && p.toAbsolutePath().equals(classes.toAbsolutePath())) {
                    jars.add(jar.toString());
                } else if (entry.endsWith(".jar") && Files.isRegularFile(p)) {
                    jars.add(entry);
                } else {
                    directories.add(entry);
                }
            }
            String archived = String.join(File.pathSeparator, jars);
            String classPath = directories.isEmpty() ? archived
                    : archived + File.pathSeparator + String.join(File.pathSeparator, directories);
            Path dir = Files.createDirectories(target.resolve("it-cds"));
            String key = key(jars);
            Path archive = dir.resolve(key + ".jsa");
            Path failed = dir.resolve(key + ".failed");
            try (FileChannel ch = FileChannel.open(dir.resolve("lock"), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE); FileLock ignored = ch.lock()) {
                if (!Files.exists(archive) && !Files.exists(failed)) {
                    try {
                        dump(dir, archived, classPath, archive);
                    } catch (IOException | InterruptedException | RuntimeException e) {
                        Files.writeString(failed, String.valueOf(e));
                        System.err.println("test children run without class-data sharing: " + e);
                    }
                }
            }
            if (!Files.exists(archive)) {
                return new Plan(classPath, List.of());
            }
            return new Plan(classPath, List.of("-XX:SharedArchiveFile=" + archive, "-Xshare:auto",
                    "-Xlog:cds=off", "-Xlog:cds+dynamic=off"));
        } catch (IOException | URISyntaxException e) {
            System.err.println("test children run without class-data sharing: " + e);
            return new Plan(original, List.of());
        }
    }

    /** The module's jar beside {@code classes} when no compiled class is newer than it, else null. */
    private static Path freshJar(Path target, Path classes) throws IOException {
        Path jar;
        try (Stream<Path> s = Files.list(target)) {
            jar = s.filter(p -> {
                String n = p.getFileName().toString();
                return n.startsWith("ferry-cli-") && n.endsWith(".jar") && !n.endsWith("-sources.jar")
                        && !n.endsWith("-javadoc.jar") && !n.endsWith("-tests.jar");
            }).findFirst().orElse(null);
        }
        if (jar == null) {
            return null;
        }
        long made = Files.getLastModifiedTime(jar).toMillis();
        try (Stream<Path> s = Files.walk(classes)) {
            boolean newer = s.filter(Files::isRegularFile).anyMatch(p -> {
                try {
                    return Files.getLastModifiedTime(p).toMillis() > made;
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            return newer ? null : jar;
        }
    }

    private static String key(List<String> jars) throws IOException {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            md.update(System.getProperty("java.vm.version").getBytes(StandardCharsets.UTF_8));
            for (String j : jars) {
                Path p = Path.of(j);
                md.update((j + "|" + Files.size(p) + "|" + Files.getLastModifiedTime(p).toMillis() + "\n")
                        .getBytes(StandardCharsets.UTF_8));
            }
            return HexFormat.of().formatHex(md.digest(), 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Lists the classes of three real commands (a push, a pull, a one-node run with its broker,
     * coordinator and agent) and dumps them. A static dump runs no application code, so none of a
     * dynamic archive's JIT state can be kept in it.
     */
    private static void dump(Path dir, String archived, String classPath, Path archive)
            throws IOException, InterruptedException {
        Path work = Files.createTempDirectory(dir, "train");
        Path image = Files.createDirectories(work.resolve("image"));
        StringBuilder lines = new StringBuilder();
        for (int i = 1; i <= 20_000; i++) {
            lines.append(i).append('\n');
        }
        Files.writeString(image.resolve("a"), lines);
        Path store = work.resolve("store");
        Path results = Files.createDirectories(work.resolve("results"));
        List<List<String>> commands = List.of(
                List.of("image", "push", image.toString(), "--store", store.toString(), "--job", "cds",
                        "--generation", "0", "--rank", "0"),
                List.of("image", "pull", work.resolve("pulled").toString(), "--store", store.toString(), "--job",
                        "cds", "--generation", "0", "--rank", "0"),
                List.of("run", "--job", "cds", "--ranks", "1", "--interval", "1s", "--home",
                        work.resolve("home").toString(), "--", LcgRank.script(work, 60).toString(),
                        results.toString()));
        Set<String> classes = new LinkedHashSet<>();
        for (int i = 0; i < commands.size(); i++) {
            Path list = work.resolve("classes-" + i + ".lst");
            List<String> cmd = new ArrayList<>(java());
            cmd.addAll(FerryProcess.childJvmOptions());
            cmd.addAll(List.of("-XX:DumpLoadedClassList=" + list, "-cp", classPath, Main.class.getName()));
            cmd.addAll(commands.get(i));
            run(cmd, work.resolve("train-" + i + ".log"), "training command " + commands.get(i));
            classes.addAll(Files.readAllLines(list));
        }
        Path list = work.resolve("classes.lst");
        Files.write(list, classes);
        Path partial = dir.resolve(archive.getFileName() + ".part");
        List<String> cmd = new ArrayList<>(java());
        cmd.addAll(List.of("-Xshare:dump", "-XX:SharedClassListFile=" + list, "-XX:SharedArchiveFile=" + partial,
                "-cp", archived));
        run(cmd, work.resolve("dump.log"), "the dump");
        Files.move(partial, archive, StandardCopyOption.ATOMIC_MOVE);
        try (Stream<Path> s = Files.walk(work)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private static List<String> java() {
        return List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    private static void run(List<String> cmd, Path log, String what) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(3, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IOException(what + " did not finish in 3 minutes (log: " + log + ")");
        }
        if (p.exitValue() != 0) {
            throw new IOException(what + " exited " + p.exitValue() + " (log: " + log + ")");
        }
    }
}

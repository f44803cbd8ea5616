package io.ferry.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The class-data archive {@code bin/ferry} makes after a build, used as every command uses it:
 * the classes of a push come from it, and the JIT still compiles the push's hot loop. A JDK 17
 * dynamic archive keeps the "queued for compilation" flag of any method queued when its training
 * JVM exited (JDK-8306460), and a method so flagged is never compiled in a JVM that maps the
 * archive: a build whose archive held the content-defined cut's loop pushed 1 GiB in 25-45 s
 * instead of 3.5 s. The launcher trains interpreted ({@code -Xint}) so that nothing is queued;
 * this test would catch an archive that stops the cut's compilation, whatever made it.
 */
class LauncherArchiveIT {
    @TempDir
    Path tmp;

    @Test
    void thePushLoadsItsClassesFromTheArchiveAndTheCutIsStillCompiled() throws Exception {
        Path root = Path.of("").toAbsolutePath().getParent(); // Failsafe runs in cli/
        ProcessBuilder version = new ProcessBuilder(root.resolve("bin/ferry").toString(), "--version").inheritIO();
        version.environment().remove("FERRY_CDS");
        assertEquals(0, version.start().waitFor());
        Path jar = root.resolve("cli/target/ferry-cli-0.1.0-SNAPSHOT.jar");
        Path archive = root.resolve("cli/target/ferry-2.jsa");
        assertTrue(Files.exists(archive)
                && Files.getLastModifiedTime(archive).compareTo(Files.getLastModifiedTime(jar)) > 0,
                "bin/ferry made its archive after the build: " + archive);

        Path image = tmp.resolve("image");
        SyntheticImage.write(image, 64L << 20, 5, 0);
        Path out = tmp.resolve("out.txt");
        Process push = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:SharedArchiveFile=" + archive, "-Xlog:cds=off,cds+dynamic=off", "-Xlog:class+load=info",
                "-XX:+PrintCompilation", "-Djna.tmpdir=" + tmp.resolve("jna"),
                "-cp", jar + ":" + root.resolve("cli/target/lib") + "/*", "io.ferry.cli.Main",
                "image", "push", image.toString(), "--store", tmp.resolve("store").toString(),
                "--job", "archive", "--generation", "0", "--rank", "0")
                .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        assertTrue(push.waitFor(300, TimeUnit.SECONDS), "the push ended");
        List<String> lines = Files.readAllLines(out, StandardCharsets.UTF_8);
        assertEquals(0, push.exitValue(),
                String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size())));
        assertTrue(lines.stream()
                .anyMatch(l -> l.contains("io.ferry.staging.chunking.FastCdc ") && l.contains("shared objects file")),
                "the cut's class came from the archive");
        assertTrue(lines.stream().anyMatch(
                l -> l.matches("\\s*\\d+\\s+\\d+\\s+[%sbn! ]*4\\s+io\\.ferry\\.staging\\.chunking\\.FastCdc::next .*")),
                "C2 compiled the cut's loop (FastCdc::next at tier 4) in a JVM that maps the archive");
    }
}

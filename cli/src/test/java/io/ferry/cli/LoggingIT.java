package io.ferry.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Logging of the real command in child processes: one provider, no third-party INFO, levels per package. */
class LoggingIT {
    /** A log line below WARN from Kafka, Hadoop or Jetty (as cli's logback.xml abbreviates them, or in full). */
    private static final Pattern THIRD_PARTY_CHATTER = Pattern.compile(
            "(?m)^\\S+ (INFO|DEBUG|TRACE)"
                    + " +(o\\.a\\.k\\.|k\\.|o\\.a\\.h\\.|o\\.e\\.j\\.|org\\.apache\\.|kafka\\.|org\\.eclipse\\.)");

    @TempDir
    Path tmp;

    private FerryProcess.Result run(String job, String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of("run", "--job", job, "--ranks", "1", "--interval", "0",
                "--http", "off", "--home", tmp.resolve("home").toString()));
        args.addAll(List.of(extra));
        args.addAll(List.of("--", "bash", "-c", "sleep 0.2"));
        return FerryProcess.run(args.toArray(String[]::new));
    }

    @Test
    void aOneNodeRunHasOneLoggingProviderNoThirdPartyChatterAndFerrysDebugLinesWhenAsked() throws Exception {
        FerryProcess.Result plain = run("quiet");
        assertEquals(0, plain.exit(), plain.out() + plain.err());
        assertFalse(plain.err().contains("SLF4J"), plain.err());
        assertFalse(THIRD_PARTY_CHATTER.matcher(plain.err()).find(), plain.err());
        assertFalse(plain.err().contains("i.f.events"),
                "ferry run prints its own progress; Ferry's INFO lines only when asked: " + plain.err());
        assertTrue(plain.out().contains("job finished"), plain.out());
        assertFalse(plain.out().contains("logback"), "Logback says nothing of itself on stdout: " + plain.out());

        FerryProcess.Result debug = run("loud", "--set", "log.level.io.ferry=debug");
        assertEquals(0, debug.exit(), debug.out() + debug.err());
        assertFalse(debug.err().contains("SLF4J"), debug.err());
        assertFalse(THIRD_PARTY_CHATTER.matcher(debug.err()).find(), debug.err());
        // One line per event, with the event's job and the agent's node from the MDC.
        assertTrue(Pattern.compile("(?m)^\\S+ DEBUG i\\.f\\.events job=loud: ").matcher(debug.err()).find(),
                debug.err());
        assertTrue(Pattern.compile("(?m)^\\S+ INFO  i\\.f\\.events job=loud rank=0 node=\\S+: rank exited with 0$")
                .matcher(debug.err()).find(), debug.err());
        assertEquals(plain.out().lines().filter(l -> l.contains("job finished")).count(),
                debug.out().lines().filter(l -> l.contains("job finished")).count(), "stdout as without logging");
    }

    @Test
    void aBadLevelFailsAtStartUpNamingTheKeyAndASitesLogbackFileIsUsed() throws Exception {
        FerryProcess.Result flag = FerryProcess.run("config", "show", "--log-level", "io.ferry.agent=loud");
        assertEquals(1, flag.exit(), flag.err());
        assertEquals(
                "ferry: --log-level io.ferry.agent=loud: configuration key 'log.level.io.ferry.agent': invalid value"
                + " 'loud': use one of trace, debug, info, warn, error, off", flag.err().strip());

        ProcessBuilder env = FerryProcess.builder(List.of(), "config", "show");
        env.environment().put("FERRY_LOG_LEVEL_ORG_APACHE_KAFKA", "chatty");
        Process p = env.start();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(1, p.waitFor(), err);
        assertTrue(err.startsWith(
                "ferry: env FERRY_LOG_LEVEL_ORG_APACHE_KAFKA: configuration key 'log.level.org.apache.kafka'"), err);

        Path site = tmp.resolve("site-logback.xml");
        Files.writeString(site, "<configuration debug=\"true\"><root level=\"OFF\"/></configuration>\n");
        ProcessBuilder withSite = FerryProcess.builder(List.of(), "config", "show").redirectErrorStream(true);
        withSite.environment().put("FERRY_LOGBACK", site.toString());
        Process s = withSite.start();
        String out = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, s.waitFor(), out);
        assertTrue(out.contains("Setting level of ROOT logger to OFF"),
                "Logback read the site's file (cli's sets WARN): " + out);

        ProcessBuilder missing = FerryProcess.builder(List.of(), "config", "show");
        missing.environment().put("FERRY_LOGBACK", tmp.resolve("nope.xml").toString());
        Process m = missing.start();
        String why = new String(m.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(1, m.waitFor(), why);
        assertEquals("ferry: FERRY_LOGBACK=" + tmp.resolve("nope.xml") + ": no such file", why.strip());
    }
}

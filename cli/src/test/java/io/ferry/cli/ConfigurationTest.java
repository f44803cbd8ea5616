package io.ferry.cli;

import io.ferry.model.LaunchSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConfigurationTest {
    @TempDir
    Path tmp;

    private Path file(String text) throws Exception {
        Path f = tmp.resolve("ferry.conf");
        Files.writeString(f, text);
        return f;
    }

    @Test
    void flagsOverTheEnvironmentOverTheFileEachValueWithItsSource() throws Exception {
        Path f = file("# site defaults\nstaging.zstd-level = 3\n\nstaging.workers=4\ncache.keep-generations = 5\n"
                + "s3.endpoint = http://s3.site:9000\nposix.lustre.stripe-count = 8\n");
        Map<String, String> env = Map.of("FERRY_CONFIG", f.toString(), "FERRY_STAGING_WORKERS", "6",
                "FERRY_CACHE_KEEP_GENERATIONS", "7", "FERRY_RANK", "3", "FERRY_HOME", "/x");
        Map<String, Configuration.Value> v = Configuration.effective(Map.of("cache.keep-generations", "9"), env,
                "file");
        assertEquals(new Configuration.Value("staging.zstd-level", "3", "file " + f + ":2"),
                v.get("staging.zstd-level"));
        assertEquals(new Configuration.Value("staging.workers", "6", "env FERRY_STAGING_WORKERS"),
                v.get("staging.workers"));
        assertEquals(new Configuration.Value("cache.keep-generations", "9", "--set"), v.get("cache.keep-generations"));
        assertEquals("8", v.get("posix.lustre.stripe-count").value(), "the file: store's own option");
        assertFalse(v.containsKey("s3.endpoint"), "an S3 option does not reach a file: store");
        assertEquals("http://s3.site:9000", Configuration.effective(Map.of(), env, "s3").get("s3.endpoint").value());
        List<Configuration.Value> shown = Configuration.show(Map.of(), env, "file");
        assertTrue(shown.contains(new Configuration.Value("staging.chunk-size", "4MiB", "default")), shown.toString());
    }

    @Test
    void agentMetricsIsAProcessKeyFromTheFileOrTheEnvironmentAndABadOneFailsNamingIt() throws Exception {
        Path f = file("agent.metrics = 0.0.0.0:9461\n");
        assertEquals(Optional.of("0.0.0.0:9461"),
                Configuration.processSetting("agent.metrics", Map.of("FERRY_CONFIG", f.toString())));
        assertEquals(9462,
                AgentMetrics.configured(Map.of("FERRY_CONFIG", f.toString(), "FERRY_AGENT_METRICS", "127.0.0.1:9462"))
                .orElseThrow().getPort(), "the environment over the file");
        assertEquals(Optional.empty(), AgentMetrics.configured(Map.of("FERRY_AGENT_METRICS", "off")));
        assertTrue(Configuration.processKey("agent.metrics"), "never a job's setting, never in the log");
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> AgentMetrics.configured(Map.of("FERRY_AGENT_METRICS", "everywhere")));
        assertTrue(bad.getMessage().startsWith("env FERRY_AGENT_METRICS: agent.metrics must be HOST:PORT"),
                bad.getMessage());
    }

    @Test
    void cacheRetentionsAreTheAgentsHostsNeverAJobsAndABadOneFailsNamingIt() throws Exception {
        Path f = file("cache.finished-retention = 2h\n");
        Map<String, String> env = Map.of("FERRY_CONFIG", f.toString(), "FERRY_CACHE_FAILED_RETENTION", "48h");
        assertEquals(Optional.of("2h"), Configuration.processSetting("cache.finished-retention", env));
        assertEquals(Optional.of("48h"), Configuration.processSetting("cache.failed-retention", env));
        assertTrue(!Configuration.merged(Map.of("cache.finished-retention", "1h"), "file")
                .containsKey("cache.finished-retention"),
                "a --set of it is not passed to the job");
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> Configuration.processSetting("cache.failed-retention",
                        Map.of("FERRY_CACHE_FAILED_RETENTION", "soon")));
        assertTrue(bad.getMessage().startsWith("env FERRY_CACHE_FAILED_RETENTION: cache.failed-retention=soon"),
                bad.getMessage());
    }

    @Test
    void theSnapshotIntervalIsTheCoordinatorsHostsNeverAJobsAndABadOneFailsNamingIt() throws Exception {
        Path f = file("coordinator.snapshot-every = 5000\n");
        assertEquals(Optional.of("5000"), Configuration.processSetting("coordinator.snapshot-every",
                Map.of("FERRY_CONFIG", f.toString())));
        assertEquals(Optional.of("0"), Configuration.processSetting("coordinator.snapshot-every",
                Map.of("FERRY_CONFIG", f.toString(), "FERRY_COORDINATOR_SNAPSHOT_EVERY", "0")),
                "the environment over the file");
        assertTrue(Configuration.processKey("coordinator.snapshot-every"), "never a job's setting, never in the log");
        for (String bad : List.of("-1", "often")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Configuration.processSetting(
                    "coordinator.snapshot-every", Map.of("FERRY_COORDINATOR_SNAPSHOT_EVERY", bad)));
            assertTrue(e.getMessage()
                    .startsWith("env FERRY_COORDINATOR_SNAPSHOT_EVERY: coordinator.snapshot-every=" + bad),
                    e.getMessage());
        }
    }

    @Test
    void logLevelsComeFromTheFileTheEnvironmentAndFlagsAndABadOneFailsNamingTheKeyAndWhere() throws Exception {
        Path f = file("staging.zstd-level = 3\nlog.level.io.ferry = debug\nlog.level.org.apache.kafka = info\n");
        Map<String, String> env = Map.of("FERRY_CONFIG", f.toString(), "FERRY_LOG_LEVEL_ORG_APACHE_KAFKA", "error",
                "FERRY_LOG_LEVEL_ORG_APACHE_HADOOP", "info");
        assertEquals(Map.of("log.level.io.ferry", "trace", "log.level.org.apache.kafka", "error",
                        "log.level.org.apache.hadoop", "info"),
                Configuration.logLevels(Map.of("log.level.io.ferry", "trace"), env));
        Path bad = Files.writeString(tmp.resolve("bad.conf"), "# a site file\nlog.level.io.ferry = loud\n");
        IllegalArgumentException inFile = assertThrows(IllegalArgumentException.class,
                () -> Configuration.logLevels(Map.of(), Map.of("FERRY_CONFIG", bad.toString())));
        assertTrue(inFile.getMessage()
                .startsWith("file " + bad + ":2: configuration key 'log.level.io.ferry': invalid value 'loud'"),
                inFile.getMessage());
        IllegalArgumentException inFlag = assertThrows(IllegalArgumentException.class,
                () -> Configuration.logLevels(Map.of("log.level.io.ferry", "loud"), Map.of()));
        assertTrue(inFlag.getMessage().startsWith("--set: configuration key 'log.level.io.ferry'"),
                inFlag.getMessage());
        // The keys are the process's own: a store or a job never sees them, and config show lists them with their
        // source.
        Map<String, Configuration.Value> v = Configuration.effective(Map.of(), env, "file");
        assertEquals(new Configuration.Value("log.level.org.apache.kafka", "error",
                "env FERRY_LOG_LEVEL_ORG_APACHE_KAFKA"), v.get("log.level.org.apache.kafka"));
        assertEquals(Optional.of("log.level.io.ferry"), Configuration.keyOf("FERRY_LOG_LEVEL_IO_FERRY"));
    }

    @Test
    void anAgentTakesTheCredentialsOfEveryKindOfStoreAndNothingElse() throws Exception {
        Path f = file("s3.access-key-id = AKIA\nstaging.zstd-level = 3\n");
        Map<String, String> secrets = Configuration.secrets(Map.of("FERRY_CONFIG", f.toString(),
                "FERRY_S3_SECRET_ACCESS_KEY", "shh", "FERRY_STAGING_WORKERS", "4"));
        assertEquals(Map.of("s3.access-key-id", "AKIA", "s3.secret-access-key", "shh"), secrets);
    }

    @Test
    void variablesNameKeysUnambiguously() {
        assertEquals("FERRY_STAGING_ZSTD_LEVEL", Configuration.variableOf("staging.zstd-level"));
        assertEquals(Optional.of("staging.zstd-level"), Configuration.keyOf("FERRY_STAGING_ZSTD_LEVEL"));
        assertEquals(Optional.of("s3.secret-access-key"), Configuration.keyOf("FERRY_S3_SECRET_ACCESS_KEY"));
        assertEquals(Optional.of("posix.lustre.stripe-count"), Configuration.keyOf("FERRY_POSIX_LUSTRE_STRIPE_COUNT"));
        assertEquals(Optional.of("store.retry.max-backoff"), Configuration.keyOf("FERRY_STORE_RETRY_MAX_BACKOFF"));
        for (String notConfig : new String[]{"FERRY_RANK", "FERRY_HOME", "FERRY_SOCKET", "FERRY_", "PATH",
                "FERRY_CONFIG"}) {
            assertEquals(Optional.empty(), Configuration.keyOf(notConfig), notConfig);
        }
    }

    @Test
    void unknownKeysBadValuesAndAMissingFileAreOneLineErrorsNamingWhere() throws Exception {
        Path typo = file("staging.zstd-levl = 3\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Configuration.effective(Map.of(), Map.of("FERRY_CONFIG", typo.toString()), "file"));
        assertEquals("file " + typo + ":1: unknown configuration key 'staging.zstd-levl' (see ferry config show)",
                e.getMessage());
        Path bad = file("staging.zstd-level = 99\n");
        e = assertThrows(IllegalArgumentException.class,
                () -> Configuration.effective(Map.of(), Map.of("FERRY_CONFIG", bad.toString()), "file"));
        assertTrue(e.getMessage().startsWith("file " + bad + ":1: staging.zstd-level=99:")
                && e.getMessage().contains("-7..22"), e.getMessage());
        Path noEquals = file("staging.zstd-level 3\n");
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> Configuration.effective(Map.of(), Map.of("FERRY_CONFIG", noEquals.toString()), "file"))
                .getMessage().contains(":1: expected KEY = VALUE"));
        e = assertThrows(IllegalArgumentException.class,
                () -> Configuration.effective(Map.of(), Map.of("FERRY_STAGING_WORKERS", "many"), "file"));
        assertTrue(e.getMessage().startsWith("env FERRY_STAGING_WORKERS: staging.workers=many"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> Configuration.effective(Map.of(), Map.of("FERRY_CONFIG", tmp.resolve("nope").toString()),
                        "file"));
        assertTrue(e.getMessage().endsWith("nope: no such file"), e.getMessage());
    }

    @Test
    void ferryConfigShowPrintsTheEffectiveValuesAndHidesSecrets() throws Exception {
        Path f = file("staging.zstd-level = 3\ns3.secret-access-key = hunter2\n");
        ProcessBuilder pb = FerryProcess.builder(List.of(), "config", "show", "--store", "s3://bucket/p", "--set",
                "staging.workers=2");
        pb.environment().put("FERRY_CONFIG", f.toString());
        pb.environment().put("FERRY_STAGING_LAYOUT", "chunks");
        Process p = pb.redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor(), out);
        assertTrue(out.matches("(?s).*staging\\.zstd-level *= 3 *# file .*ferry\\.conf:1.*"), out);
        assertTrue(out.matches("(?s).*staging\\.layout *= chunks *# env FERRY_STAGING_LAYOUT.*"), out);
        assertTrue(out.matches("(?s).*staging\\.workers *= 2 *# --set.*"), out);
        assertTrue(out.contains("s3.secret-access-key") && !out.contains("hunter2"), out);
    }

    @Test
    void kafkaClientKeysComeFromEveryLayerAndStayApartFromTheJobsSettings() throws Exception {
        Path f = file("kafka.security.protocol = SASL_SSL\nkafka.ssl.truststore.location = /etc/ferry/ca.p12\n"
                + "staging.zstd-level = 3\n");
        Map<String, String> env = Map.of("FERRY_CONFIG", f.toString(), "FERRY_KAFKA_SASL_JAAS_CONFIG", JAAS,
                "FERRY_KAFKA_SASL_MECHANISM", "PLAIN", "FERRY_KAFKA_EMBEDDED_USERS_FILE", "/etc/ferry/users");
        assertEquals(Optional.of("kafka.sasl.jaas.config"), Configuration.keyOf("FERRY_KAFKA_SASL_JAAS_CONFIG"));
        assertEquals(Optional.of("kafka.embedded.users-file"), Configuration.keyOf("FERRY_KAFKA_EMBEDDED_USERS_FILE"));
        Map<String, String> kafka = Configuration.kafka(Map.of("kafka.client.id", "ops"), env);
        assertEquals(Map.of("kafka.security.protocol", "SASL_SSL", "kafka.ssl.truststore.location", "/etc/ferry/ca.p12",
                "kafka.sasl.jaas.config", JAAS, "kafka.sasl.mechanism", "PLAIN", "kafka.embedded.users-file",
                "/etc/ferry/users",
                "kafka.client.id", "ops"), kafka);
        KafkaAccess a = KafkaAccess.of("h:9092", kafka);
        assertEquals("SASL_SSL", a.client().settings().get("security.protocol"));
        assertFalse(a.embedded().required(), "the users file is the embedded broker's, not a client's");
        assertEquals(Map.of(), Configuration.secrets(env), "the log's login is no store credential");
        assertEquals(Map.of("staging.zstd-level", "3"), LaunchSpec.withoutSecrets(
                Map.of("staging.zstd-level", "3", "kafka.security.protocol", "SASL_SSL")), "never in a job's settings");
    }

    @Test
    void unknownKafkaKeysAndBadValuesFailNamingTheKeyAndWhere() throws Exception {
        Path typo = file("kafka.sasl.mechanisms = PLAIN\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Configuration.kafka(Map.of(), Map.of("FERRY_CONFIG", typo.toString())));
        assertTrue(e.getMessage().contains(typo + ":1: unknown configuration key 'kafka.sasl.mechanisms'"),
                e.getMessage());
        Path bad = file("kafka.security.protocol = SASL_TLS\n");
        e = assertThrows(IllegalArgumentException.class,
                () -> Configuration.kafka(Map.of(), Map.of("FERRY_CONFIG", bad.toString())));
        assertTrue(e.getMessage().contains(bad + ":1: ") && e.getMessage().contains("security.protocol"),
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> KafkaAccess.of("h:1", Map.of("kafka.bootstrap.servers", "x:1")));
        assertTrue(e.getMessage().contains("give --kafka"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> KafkaAccess.of("h:1", Map.of("kafka.no.such", "x")));
        assertTrue(e.getMessage().contains("'kafka.no.such'"), e.getMessage());
    }

    @Test
    void anOpenUsersFileIsRefusedWhereTheEmbeddedBrokerStarts() throws Exception {
        Path users = Files.writeString(tmp.resolve("users"), "agent:pw\n");
        Files.setPosixFilePermissions(users, PosixFilePermissions.fromString("rw-r-----"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> KafkaAccess.of(null, Map.of("kafka.embedded.users-file", users.toString())));
        assertTrue(e.getMessage().contains("chmod 600"), e.getMessage());
        Files.setPosixFilePermissions(users, PosixFilePermissions.fromString("rw-------"));
        assertEquals(Map.of("agent", "pw"), KafkaAccess.of(null, Map.of("kafka.embedded.users-file", users.toString()))
                .embedded().users());
    }

    @Test
    void operatorsAreLoginsOfTheUsersFile() throws Exception {
        Path users = Files.writeString(tmp.resolve("users"), "agents:pw1\nalice:pw2\nbob:pw3\n");
        Files.setPosixFilePermissions(users, PosixFilePermissions.fromString("rw-------"));
        KafkaAccess a = KafkaAccess.of(null, Map.of("kafka.embedded.users-file", users.toString(),
                "kafka.embedded.operators", " agents , "));
        assertEquals(Set.of("agents"), a.embedded().operators());
        assertEquals(Set.of("alice", "bob"), a.embedded().restricted());
        assertFalse(KafkaAccess.of(null, Map.of("kafka.embedded.users-file", users.toString())).embedded().owners(),
                "no operators named: every login an operator, as before");
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> KafkaAccess.of(null,
                Map.of("kafka.embedded.users-file", users.toString(), "kafka.embedded.operators", "agents,carol")));
        assertTrue(unknown.getMessage().contains("'carol'")
                && unknown.getMessage().contains("kafka.embedded.operators"), unknown.getMessage());
        IllegalArgumentException noUsers = assertThrows(IllegalArgumentException.class,
                () -> KafkaAccess.of(null, Map.of("kafka.embedded.operators", "agents")));
        assertTrue(noUsers.getMessage().contains("kafka.embedded.users-file"), noUsers.getMessage());
        IllegalArgumentException empty = assertThrows(IllegalArgumentException.class, () -> KafkaAccess.of(null,
                Map.of("kafka.embedded.users-file", users.toString(), "kafka.embedded.operators", " , ")));
        assertTrue(empty.getMessage().contains("at least one login"), empty.getMessage());
    }

    @Test
    void ferryConfigShowHidesTheLogsSecrets() throws Exception {
        Path f = file("kafka.sasl.jaas.config = " + JAAS + "\nkafka.ssl.truststore.password = trust-me-7\n"
                + "kafka.security.protocol = SASL_SSL\n");
        ProcessBuilder pb = FerryProcess.builder(List.of(), "config", "show");
        pb.environment().put("FERRY_CONFIG", f.toString());
        pb.environment().put("FERRY_KAFKA_SSL_KEY_PASSWORD", "key-pass-9");
        Process p = pb.redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor(), out);
        assertTrue(out.matches("(?s).*kafka\\.security\\.protocol *= SASL_SSL .*"), out);
        assertTrue(out.matches("(?s).*kafka\\.sasl\\.jaas\\.config *= \\(set, not shown\\).*"), out);
        assertTrue(out.contains("kafka.ssl.key.password") && out.contains("kafka.ssl.truststore.password"), out);
        for (String secret : new String[]{"s3cret-pw", "trust-me-7", "key-pass-9"}) {
            assertFalse(out.contains(secret), secret + " shown: " + out);
        }
    }

    private static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required"
            + " username=\"alice\" password=\"s3cret-pw\";";
}

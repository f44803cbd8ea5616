package io.ferry.cli;

import io.ferry.agent.CacheRetention;
import io.ferry.coordinator.CoordinatorSettings;
import io.ferry.model.ConfigKey;
import io.ferry.model.ConfigTable;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StoreSettings;
import io.ferry.staging.crypt.Keys;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The configuration reference, {@code docs/reference/configuration.md}, printed from the declared
 * tables that {@link Configuration} reads, so the page says what the code accepts.
 * {@code ConfigReferenceTest} fails when the committed page differs; the page's header says how
 * to regenerate it. Stateless and thread-safe.
 */
final class ConfigReference {
    /** The page, relative to the repository root. */
    static final String PAGE = "docs/reference/configuration.md";

    private record Section(String title, String source, ConfigTable table) {}

    private static final List<Section> SECTIONS = List.of(
            new Section("Staging, node cache, store retention and recovery",
                    "staging/src/main/java/io/ferry/staging/StagingConfig.java", StagingConfig.TABLE),
            new Section("Remote stores: retries, circuit breaker, bulkhead",
                    "staging/src/main/java/io/ferry/staging/StoreSettings.java", StoreSettings.TABLE),
            new Section("Encryption at rest", "staging/src/main/java/io/ferry/staging/crypt/Keys.java", Keys.TABLE),
            new Section("Node agents: reclaiming the cache of jobs that are over",
                    "capture-agent/src/main/java/io/ferry/agent/CacheRetention.java",
                    CacheRetention.TABLE),
            new Section("The coordinator: snapshots of its folded state",
                    "coordinator/src/main/java/io/ferry/coordinator/CoordinatorSettings.java",
                    CoordinatorSettings.TABLE));

    private ConfigReference() {}

    /** The whole page, as committed. */
    static String markdown() {
        StringBuilder b = new StringBuilder();
        b.append("# Configuration keys\n\n")
                .append("<!-- Generated from the code's declared tables by io.ferry.cli.ConfigReference;"
                        + " do not edit by hand.\n")
                .append("     ConfigReferenceTest fails when this page differs from what the tables produce."
                        + " To regenerate:\n")
                .append("     mvn -B -o -q -pl cli test -Dtest=ConfigReferenceTest -Dferry.docs.write=true -->\n\n")
                .append("Every key below can be set in the configuration file (`KEY = VALUE`), as an environment\n")
                .append("variable (the column *variable*), or with `--set KEY=VALUE`, in rising precedence; see\n")
                .append("[configuration sources](../operators.md#configure). A bad value or an unknown key fails at\n")
                .append("start-up, naming the key and where it came from. `ferry config show` prints each key's\n")
                .append("effective value and its source. Sizes take binary units (`64KiB`, or bare `64K`)"
                        + " and decimal ones\n")
                .append("(`64KB`); durations a number and a unit (`500ms`, `5s`, `2m`, `1h`).\n\n")
                .append("Keys that are not in these tables (store options `posix.*`, `s3.*`, `hdfs.*`; the process\n")
                .append("keys `agent.metrics`, `peer.secret-file`, `kafka.*`, `log.level.*`; the variable\n")
                .append("`FERRY_ENCRYPTION_KEY`) are described in [other keys](other-keys.md).\n");
        for (Section s : SECTIONS) {
            b.append("\n## ").append(s.title()).append("\n\n")
                    .append("Declared in [`").append(s.source().substring(s.source().lastIndexOf('/') + 1))
                    .append("`](../../").append(s.source()).append(").\n\n")
                    .append("| key | default | variable | meaning |\n|---|---|---|---|\n");
            for (ConfigKey<?> k : s.table().keys()) {
                b.append("| `").append(k.name()).append("` | ")
                        .append(k.defaultValue().isEmpty() ? "(empty)" : "`" + k.defaultValue() + "`").append(" | `")
                        .append(Configuration.variableOf(k.name())).append("` | ")
                        .append(cell(k.doc())).append(" |\n");
            }
        }
        return b.toString();
    }

    private static String cell(String text) {
        return text.replace("|", "\\|").replace("\n", " ");
    }

    /** Writes the page to {@code args[0]}, or prints it when no path is given. */
    public static void main(String[] args) throws IOException {
        if (args.length == 0) {
            System.out.print(markdown());
        } else {
            Files.writeString(Path.of(args[0]), markdown(), StandardCharsets.UTF_8);
        }
    }
}

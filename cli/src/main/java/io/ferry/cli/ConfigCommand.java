package io.ferry.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.ferry.model.LaunchSpec;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code ferry config show}: the effective configuration and where each value came from. */
@Command(name = "config", mixinStandardHelpOptions = true, subcommands = ConfigCommand.Show.class,
        description =
                "The configuration: a file ($FERRY_CONFIG, else /etc/ferry/ferry.conf), FERRY_* variables, --set.")
final class ConfigCommand {
    @Command(name = "show", mixinStandardHelpOptions = true,
            description = "Every key's effective value and its source (default, file PATH:LINE, env NAME, --set).")
    static final class Show implements Callable<Integer> {
        @Option(names = "--store", paramLabel = "URI",
                description = "For a store of this kind (its options); default: a file: store.")
        String store;
        @Option(names = "--set", paramLabel = "KEY=VALUE", description = "As a command would be given it, repeatable.")
        Map<String, String> settings = new LinkedHashMap<>();
        @Option(names = "--json", description = "Print JSON: [{key, value, source}].")
        boolean json;

        @Override
        public Integer call() throws Exception {
            List<Configuration.Value> all = Configuration.show(settings, System.getenv(), Configuration.scheme(store));
            if (json) {
                ObjectMapper m = new ObjectMapper();
                ArrayNode a = m.createArrayNode();
                all.forEach(v -> a.addObject().put("key", v.key()).put("value", shown(v)).put("source", v.source()));
                System.out.println(m.writerWithDefaultPrettyPrinter().writeValueAsString(a));
                return 0;
            }
            int width = all.stream().mapToInt(v -> v.key().length()).max().orElse(10);
            Configuration.file(System.getenv()).ifPresentOrElse(f -> System.out.println("# configuration file: " + f),
                    () -> System.out.println("# configuration file: none ($" + Configuration.FILE_VARIABLE
                            + " unset, no " + Configuration.SITE_FILE + ")"));
            for (Configuration.Value v : all) {
                System.out.printf(Locale.ROOT, "%-" + width + "s = %-14s # %s%n", v.key(), shown(v), v.source());
            }
            return 0;
        }

        /** Secrets are never printed. */
        private static String shown(Configuration.Value v) {
            String k = v.key().toLowerCase(Locale.ROOT);
            boolean secret = LaunchSpec.isSecret(k) || KafkaAccess.isSecret(v.key());
            return secret && !v.value().isEmpty() ? "(set, not shown)" : v.value();
        }
    }
}

package io.ferry.cli;

import io.ferry.cli.log.Logs;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.ScopeType;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code ferry} command. Exit codes: 0 success, 1 failure (one line saying why on
 * stderr), 2 bad usage, 3 {@code store verify} found damage.
 */
@Command(name = "ferry", mixinStandardHelpOptions = true, version = "ferry 0.1.0",
        description = "Checkpoint pipeline: stage job images to stable storage and back, verified.")
public final class Main {
    /**
     * The subcommands, in the order {@code ferry help} lists them. Added by {@link #commandLine}, not
     * by the annotation: picocli builds the whole model of every command it is given (reflection and
     * annotation proxies, a third of a second on a 2-core node), which a {@code ferry image push}
     * need not pay for fifteen commands it does not run.
     */
    static final List<Class<?>> SUBCOMMANDS = List.of(RunCommand.class, ConfigCommand.class, CoordinatorCommand.class,
            AgentCommand.class, ChaosCommand.class, CheckpointCommand.class, HaltCommand.class, CaptureCommand.class,
            RestoreCommand.class, RestartCommand.class, StatusCommand.class, ListCommand.class, PlanCommand.class,
            ImageCommand.class, DaemonCommand.class, SnapshotCommand.class, StoreCommand.class, DemoCommand.class,
            CommandLine.HelpCommand.class);

    /**
     * The {@code ferry} command line for {@code args}: with only the subcommand its first argument
     * names, or with every one (for {@code ferry help}, {@code --help}, a misspelt command that
     * picocli should suggest a fix for, or no command at all).
     */
    static CommandLine commandLine(String... args) {
        CommandLine cl = new CommandLine(new Main());
        Class<?> named = null;
        for (String a : args) {
            if (!a.startsWith("-")) {
                for (Class<?> c : SUBCOMMANDS) {
                    if (c != CommandLine.HelpCommand.class && c.getAnnotation(Command.class).name().equals(a)) {
                        named = c;
                    }
                }
                break; // the first word that is not an option is the command, or not one of ours
            }
        }
        for (Class<?> c : named != null ? List.of(named) : SUBCOMMANDS) {
            cl.addSubcommand(c);
        }
        return cl;
    }
    /** Commands that print their own progress: Ferry's log lines below WARN, Kafka's below ERROR, only when asked. */
    private static final Set<String> OWN_PROGRESS = Set.of("run", "demo");

    @Option(names = "--log-level", paramLabel = "[LOGGER=]LEVEL", scope = ScopeType.INHERIT,
            description = "Log level (trace, debug, info, warn, error, off) of Ferry's packages, or of LOGGER"
                    + " (a package or class, e.g. org.apache.kafka=info); repeatable. Same as --set"
                    + " log.level.LOGGER=LEVEL.")
    List<String> logLevels;

    public static void main(String[] args) {
        System.exit(run(args));
    }

    public static int run(String... args) {
        return run(Invocation.process(), args);
    }

    /**
     * Runs {@code args} for {@code inv}: its output to its writers and, for a client of
     * {@code ferry daemon}, its relative paths against the client's directory and logging as the
     * daemon set it up (a client that asks for log levels is not served; see {@link ThinClient}).
     */
    static int run(Invocation inv, String... args) {
        CommandLine cl = commandLine(args);
        cl.setOut(inv.out());
        cl.setErr(inv.err());
        if (inv.served()) {
            cl.registerConverter(Path.class, inv::resolve);
        }
        cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
            PrintWriter err = cmd.getErr();
            err.println("ferry: " + describe(e));
            if (System.getenv("FERRY_DEBUG") != null) {
                e.printStackTrace(err);
            }
            err.flush();
            return 1;
        });
        // Bad usage: one line saying what is wrong, exit 2; the full usage is one --help away.
        cl.setParameterExceptionHandler((e, a) -> {
            PrintWriter err = e.getCommandLine().getErr();
            String command = e.getCommandLine().getCommandSpec().qualifiedName(" "); // "ferry", "ferry image push"
            String meant = e instanceof CommandLine.UnmatchedArgumentException u && !u.getSuggestions().isEmpty()
                    ? "; did you mean " + String.join(" or ", u.getSuggestions()) + "?" : "";
            err.println(command + ": " + e.getMessage() + meant + " (see " + command + " --help)");
            err.flush();
            return 2;
        });
        cl.setExecutionStrategy(parsed -> {
            try {
                if (!inv.served()) {
                    setUpLogging(parsed);
                }
            } catch (IllegalArgumentException | IOException e) {
                cl.getErr().println("ferry: " + describe(e));
                cl.getErr().flush();
                return 1;
            }
            return new CommandLine.RunLast().execute(parsed);
        });
        return inv.run(() -> cl.execute(args));
    }

    /**
     * Logging before the command runs: the site's Logback file if {@code FERRY_LOGBACK} names one,
     * then the {@code log.level.*} keys of the configuration file, the environment, {@code --set}
     * and {@code --log-level}, in rising precedence; a bad one fails naming the key.
     */
    private static void setUpLogging(ParseResult parsed) throws IOException {
        Logs.useSiteFile(System.getenv());
        Map<String, String> flags = new LinkedHashMap<>();
        String command = "ferry";
        for (ParseResult p = parsed; p != null; p = p.subcommand()) {
            command = p.commandSpec().name();
            OptionSpec set = p.matchedOption("--set");
            if (set != null) {
                for (String kv : set.originalStringValues()) {
                    int eq = kv.indexOf('=');
                    if (eq > 0 && Logs.isKey(kv.substring(0, eq))) {
                        flags.put(kv.substring(0, eq), kv.substring(eq + 1));
                    }
                }
            }
            OptionSpec level = p.matchedOption("--log-level");
            if (level != null) {
                for (String v : level.originalStringValues()) {
                    try {
                        Map.Entry<String, String> e = Logs.fromFlag(v);
                        flags.put(e.getKey(), e.getValue());
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException("--log-level " + v + ": " + e.getMessage(), e);
                    }
                }
            }
        }
        Map<String, String> keys = new LinkedHashMap<>();
        if (Logs.builtIn()) {
            // Every command without --kafka runs the one-node job's broker in-process (status, list, restart...),
            // whose WARN lines are routine (controller activation, topic creation): its errors only, unless asked.
            keys.put(Logs.KEY_PREFIX + "org.apache.kafka", "error");
            keys.put(Logs.KEY_PREFIX + "kafka", "error");
            if (OWN_PROGRESS.contains(command)) {
                keys.put(Logs.KEY_PREFIX + "io.ferry", "warn"); // the command prints its own progress lines
            }
        }
        keys.putAll(Configuration.logLevels(flags, System.getenv()));
        Logs.apply(keys);
    }

    static String describe(Throwable e) {
        String m = e.getMessage();
        if (m == null || m.isBlank()) {
            m = e.getClass().getSimpleName();
        }
        if (e.getCause() != null && e.getCause().getMessage() != null && !m.contains(e.getCause().getMessage())
                && !(e instanceof IllegalArgumentException)) {
            m += " (" + e.getCause().getMessage() + ")";
        }
        return m;
    }
}

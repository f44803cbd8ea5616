package io.ferry.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.PrintWriter;

/**
 * The {@code ferry} command. Exit codes: 0 success, 1 failure (one line saying why on
 * stderr), 2 bad usage, 3 {@code store verify} found damage.
 */
@Command(name = "ferry", mixinStandardHelpOptions = true, version = "ferry 0.1.0",
        description = "Checkpoint pipeline: stage job images to stable storage and back, verified.",
        subcommands = {RunCommand.class, ConfigCommand.class, CoordinatorCommand.class, AgentCommand.class, ChaosCommand.class, CheckpointCommand.class, HaltCommand.class, CaptureCommand.class, RestartCommand.class, StatusCommand.class,
                ListCommand.class, PlanCommand.class, ImageCommand.class, SnapshotCommand.class, StoreCommand.class, DemoCommand.class,
                CommandLine.HelpCommand.class})
public final class Main {
    public static void main(String[] args) {
        System.exit(run(args));
    }

    public static int run(String... args) {
        CommandLine cl = new CommandLine(new Main());
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
            err.println("ferry " + e.getCommandLine().getCommandName() + ": " + e.getMessage()
                    + " (see ferry " + e.getCommandLine().getCommandSpec().qualifiedName(" ").replaceFirst("^ferry ?", "")
                    + " --help)");
            err.flush();
            return 2;
        });
        return cl.execute(args);
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

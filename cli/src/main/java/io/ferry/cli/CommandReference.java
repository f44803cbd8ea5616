package io.ferry.cli;

import picocli.CommandLine;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The usage reference, {@code docs/reference/usage.md}: every command's {@code --help}, printed
 * from the same picocli model the commands parse with, so the page lists the options the code
 * accepts. {@code CommandReferenceTest} fails when the committed page differs; the page's header
 * says how to regenerate it. Stateless and thread-safe.
 */
final class CommandReference {
    /** The page, relative to the repository root. */
    static final String PAGE = "docs/reference/usage.md";
    /** Fixed, so the page does not depend on the terminal it was made on. */
    private static final int WIDTH = 100;

    private CommandReference() {}

    /** The whole page, as committed. */
    static String markdown() {
        CommandLine root = Main.commandLine(); // every subcommand
        root.setUsageHelpWidth(WIDTH);
        root.setUsageHelpAutoWidth(false);
        StringBuilder b = new StringBuilder();
        b.append("# Usage of every command\n\n")
                .append("<!-- Generated from the commands' picocli model by io.ferry.cli.CommandReference;"
                        + " do not edit by hand.\n")
                .append("     CommandReferenceTest fails when this page differs from what the code prints."
                        + " To regenerate:\n")
                .append("     mvn -B -o -q -pl cli test -Dtest=CommandReferenceTest -Dferry.docs.write=true -->\n\n")
                .append("What `ferry COMMAND --help` prints, for every command. An overview with examples:\n")
                .append("[commands.md](commands.md); exit codes: [exit-codes.md](exit-codes.md).\n");
        walk(root, b, new IdentityHashMap<>());
        return b.toString();
    }

    private static void walk(CommandLine cl, StringBuilder b, Map<CommandLine, Boolean> seen) {
        if (seen.put(cl, Boolean.TRUE) != null || cl.getCommand() instanceof CommandLine.HelpCommand) {
            return; // an alias names a command already printed
        }
        b.append("\n## `").append(cl.getCommandSpec().qualifiedName(" ")).append("`\n\n```\n")
                .append(cl.getUsageMessage(CommandLine.Help.Ansi.OFF).stripTrailing()).append("\n```\n");
        for (CommandLine sub : cl.getSubcommands().values()) {
            walk(sub, b, seen);
        }
    }
}

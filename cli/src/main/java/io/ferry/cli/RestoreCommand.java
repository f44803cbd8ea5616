package io.ferry.cli;

import io.ferry.agent.StreamPump;
import io.ferry.agent.capture.Capturer;
import io.ferry.agent.capture.Capturers;
import io.ferry.staging.internal.FileTrees;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code ferry restore DIR}: the restore of a one-off dump {@code ferry capture --method criu}
 * wrote, with what the image carries beside the process (the files it had open for writing,
 * put back as they were; new pipes in place of the pipes it wrote to, whose bytes this command
 * prints), which a bare {@code criu restore} does not do. The restored process runs in the
 * foreground: this command ends when it does, with its exit code.
 */
@Command(name = "restore", mixinStandardHelpOptions = true,
        description = {"Restore a process from a dump `ferry capture --method criu` wrote, and wait for it.",
                "Puts back the files it had open for writing as they were at the dump, hands it new pipes in place of",
                "the pipes it wrote to (their bytes are printed here), and exits with the"
                        + " restored process's exit code.",
                "Needs every pid of the dumped tree free, the same paths and binaries (CRIU restores"
                        + " processes as they were)."})
final class RestoreCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "DIR", description = "The image directory `ferry capture --out` made.")
    Path image;

    @Override
    public Integer call() throws Exception {
        if (!Files.isDirectory(image)) {
            throw new IllegalArgumentException(image
                    + " is not a directory: give the --out directory of ferry capture");
        }
        if (!Files.exists(image.resolve("inventory.img"))) {
            throw new IllegalArgumentException(image
                    + " is not a CRIU image (no inventory.img): ferry restore takes what"
                    + " `ferry capture --method criu` wrote; a proc core is for gdb, and DMTCP"
                    + " images restart with ferry run");
        }
        Capturer criu = Capturers.of("criu");
        criu.unavailable().ifPresent(why -> {
            throw new IllegalStateException("criu is not available here: " + why);
        });
        Path work = Files.createTempDirectory("ferry-restore-"); // the restore's log and pid file
        try {
            Process p = criu.restore(image.toAbsolutePath(), work, new ProcessBuilder());
            System.err.println("ferry restore: process " + p.pid() + " restored from " + image.toAbsolutePath()
                    + "; it runs until it ends");
            Thread out = StreamPump.start(p.getInputStream(), System.out, "ferry-restore-stdout");
            Thread err = StreamPump.start(p.getErrorStream(), System.err, "ferry-restore-stderr");
            int code = p.waitFor();
            out.join();
            err.join();
            return code;
        } finally {
            FileTrees.delete(work);
        }
    }
}

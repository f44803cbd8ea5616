package io.ferry.stores.posix;

import io.ferry.stores.PermanentStoreException;
import io.ferry.stores.StoreException;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Sets the default Lustre layout of a store root with {@code lfs setstripe}, so the chunk and
 * manifest files created below inherit it. Only when the options ask for it; a site that
 * asks for striping on a machine without {@code lfs} gets a clear error rather than silence.
 */
final class LustreStriping {
    private LustreStriping() {}

    static void apply(Path root, String count, String size) throws StoreException {
        if (count == null && size == null) {
            return;
        }
        List<String> cmd = new ArrayList<>(List.of("lfs", "setstripe"));
        if (count != null) {
            if (!count.matches("-1|[1-9][0-9]{0,4}")) {
                throw new IllegalArgumentException(PosixStore.STRIPE_COUNT
                        + " must be -1 or a positive integer, got '" + count + "'");
            }
            cmd.addAll(List.of("-c", count));
        }
        if (size != null) {
            if (!size.matches("[1-9][0-9]*[KMG]?")) {
                throw new IllegalArgumentException(PosixStore.STRIPE_SIZE
                        + " must look like 1M or 4M, got '" + size + "'");
            }
            cmd.addAll(List.of("-S", size));
        }
        cmd.add(root.toString());
        if (!onPath("lfs")) {
            throw new PermanentStoreException("Lustre striping was requested for " + root
                    + " but the 'lfs' command is not on PATH", null);
        }
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes()).trim();
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new PermanentStoreException(String.join(" ", cmd) + " failed: " + out, null);
            }
        } catch (IOException e) {
            throw new PermanentStoreException("cannot run " + String.join(" ", cmd) + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PermanentStoreException("interrupted running lfs setstripe", e);
        }
    }

    private static boolean onPath(String command) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, command))) {
                return true;
            }
        }
        return false;
    }
}

package io.ferry.agent.capture;

import io.ferry.model.OwnerOnly;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What DMTCP writes for a rank and which of it is the rank's image, for {@link DmtcpCapturer}:
 * the rank's DMTCP directory {@code <rankDir>/dmtcp}, where each checkpoint writes the
 * {@code ckpt_*.dmtcp} files and the {@code ckpt_*_files} directories beside them; the
 * coordinator's restart script, a copy of which goes into every image because its name
 * ({@code dmtcp_restart_script_<id>.sh}) says which computation the image belongs to; and
 * putting an image's files back where a {@code dmtcp_restart} of it needs them. Stateless.
 */
final class DmtcpFiles {
    /** A DMTCP computation id, as in {@code dmtcp_restart_script_<id>.sh}. */
    private static final Pattern COMPUTATION = Pattern.compile(
            "dmtcp_restart_script_([0-9a-f]{1,16}-[0-9]{1,10}-[0-9a-f]{1,16})\\.sh");

    /** What DMTCP writes for one checkpoint of a rank, all of it the rank's image. */
    private static final String IMAGE_FILES = "{ckpt_*.dmtcp,ckpt_*_files,dmtcp_restart_script*.sh}";

    private DmtcpFiles() {
    }

    /** The rank's DMTCP directory, not created (see {@link #prepareArea}). */
    static Path area(Path rankDir) {
        return rankDir.toAbsolutePath().resolve("dmtcp");
    }

    /**
     * The rank's DMTCP directory, created: absolute, because DMTCP records the path of its
     * {@code ckpt_*_files} directory at the checkpoint and looks there on restart.
     */
    static Path prepareArea(Path rankDir) {
        Path area = area(rankDir);
        try {
            OwnerOnly.createDirectories(area);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare " + area + " for dmtcp", e);
        }
        return area;
    }

    /** Deletes what a checkpoint whose collection failed left in {@code area}: never mixed into the next one. */
    static void clearLeftovers(Path area) throws IOException {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(area, "{ckpt_*,dmtcp_restart_script*}")) {
            for (Path p : ds) {
                ImageDirs.delete(p);
            }
        }
    }

    /**
     * Copies the restart script the coordinator in {@code coordinatorDir} wrote at its last
     * checkpoint into each of {@code areas}, if it wrote one: it names the computation, so a
     * restore elsewhere joins its ranks again.
     */
    static void copyScript(Path coordinatorDir, Collection<Path> areas) throws IOException {
        Path script = newestScript(coordinatorDir);
        if (script == null) {
            return;
        }
        for (Path area : areas) {
            Files.copy(script, area.resolve(script.getFileName()));
        }
    }

    /** The restart script the coordinator wrote at its last checkpoint (not the link to it), or null. */
    private static Path newestScript(Path coordinatorDir) throws IOException {
        Path newest = null;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(coordinatorDir, "dmtcp_restart_script_*.sh")) {
            for (Path p : ds) {
                if (!Files.isSymbolicLink(p) && (newest == null
                        || Files.getLastModifiedTime(p).compareTo(Files.getLastModifiedTime(newest)) > 0)) {
                    newest = p;
                }
            }
        }
        return newest;
    }

    /**
     * Moves everything of the last checkpoint in {@code area} into the image being filled in
     * {@code partial}; returns how many {@code ckpt_*.dmtcp} files it moved.
     */
    static int moveImage(Path area, Path partial) throws IOException {
        int moved = 0;
        // The ckpt_*_files directories too: dmtcp_restart refuses to start without the copies in them.
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(area, IMAGE_FILES)) {
            for (Path p : ds) {
                Files.move(p, partial.resolve(p.getFileName()));
                moved += p.getFileName().toString().endsWith(".dmtcp") ? 1 : 0;
            }
        }
        return moved;
    }

    /**
     * Copies the image's {@code ckpt_*_files} directories (not links: DMTCP rewrites them in
     * place at the next checkpoint) into the rank's DMTCP directory {@code area}, and returns the
     * absolute paths of its {@code ckpt_*.dmtcp} files, for {@code dmtcp_restart}.
     */
    static List<String> unpackImage(Path imageDir, Path area) throws IOException {
        List<String> images = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(imageDir, "ckpt_*")) {
            for (Path p : ds) {
                if (Files.isDirectory(p)) {
                    ImageDirs.copyTree(p, area.resolve(p.getFileName()));
                } else if (p.getFileName().toString().endsWith(".dmtcp")) {
                    images.add(p.toAbsolutePath().toString());
                }
            }
        }
        return images;
    }

    /**
     * The DMTCP computation the image belongs to, from the restart script saved with it: images
     * of one computation restart only into one coordinator, and those of two computations (this
     * node's, and a lost node's moved here) only into two. "" for an image without one.
     */
    static String computation(Path imageDir) throws IOException {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(imageDir, "dmtcp_restart_script_*.sh")) {
            for (Path p : ds) {
                Matcher m = COMPUTATION.matcher(p.getFileName().toString());
                if (m.matches()) {
                    return m.group(1);
                }
            }
        }
        return "";
    }
}

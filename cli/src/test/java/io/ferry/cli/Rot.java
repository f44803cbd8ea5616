package io.ferry.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The crash harness's damage ({@link FaultHarnessIT}'s cache rot and store rot): a seeded bit
 * flipped, or a file cut short, in a node's cached images or in a pack on the store; and
 * whether the rollback that followed took the damaged rank from elsewhere.
 */
final class Rot {
    private static final Pattern SOURCES = Pattern.compile("restored generation (\\d+), sources by rank \\{([^}]*)}");

    private Rot() {}

    /**
     * Damages a seeded file of rank {@code r}'s image in its node's cache, in generation {@code g}
     * and every newer one cached (one may be established by the time the rollback picks): what
     * it did, or null.
     */
    static String inCache(Path tmp, String job, long g, int r, Random rnd) throws IOException {
        List<String> done = new ArrayList<>();
        for (String node : List.of("n0", "n1")) {
            Path jobDir = tmp.resolve(node).resolve("cache").resolve(job);
            if (!Files.isDirectory(jobDir)) {
                continue;
            }
            List<Path> generations;
            try (var list = Files.list(jobDir)) {
                generations = list.filter(d -> d.getFileName().toString().matches("\\d+")
                        && Long.parseLong(d.getFileName().toString()) >= g).sorted().toList();
            }
            for (Path gen : generations) {
                Path dir = gen.resolve(Integer.toString(r));
                if (!Files.isDirectory(dir)) {
                    continue;
                }
                List<Path> files;
                try (var walk = Files.walk(dir)) {
                    files = walk.filter(Files::isRegularFile).sorted().toList();
                }
                for (Path f : files) {
                    if (Files.size(f) > 0) {
                        done.add(damage(f, rnd) + " of generation " + gen.getFileName() + " in " + node + "'s cache");
                        break;
                    }
                }
            }
        }
        return done.isEmpty() ? null : String.join("; ", done);
    }

    /** Damages a seeded pack object on the store; what it did, ending with the pack's name, or null. */
    static String inStore(Path store, Random rnd) throws IOException {
        Path packs = store.resolve("ferry/v2/packs");
        if (!Files.isDirectory(packs)) {
            return null;
        }
        List<Path> all;
        try (var walk = Files.walk(packs)) {
            all = walk.filter(Files::isRegularFile).sorted().toList();
        }
        if (all.isEmpty()) {
            return null;
        }
        Path pack = all.get(rnd.nextInt(all.size()));
        return damage(pack, rnd) + " of the store's pack " + pack.getFileName();
    }

    /** Flips one seeded bit of {@code f}, or (one time in four) cuts it to half its size. */
    private static String damage(Path f, Random rnd) throws IOException {
        long size = Files.size(f);
        try (java.nio.channels.FileChannel c = java.nio.channels.FileChannel.open(f, java.nio.file.StandardOpenOption.READ,
                java.nio.file.StandardOpenOption.WRITE)) {
            if (size > 1 && rnd.nextInt(4) == 0) {
                c.truncate(size / 2);
                return "cut " + f.getFileName() + " from " + size + " to " + size / 2 + " bytes";
            }
            long at = (long) (rnd.nextDouble() * size);
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(1);
            c.read(b, at);
            int bit = rnd.nextInt(8);
            b.put(0, (byte) (b.get(0) ^ (1 << bit)));
            b.rewind();
            c.write(b, at);
            return "flipped bit " + bit + " of byte " + at + " of " + f.getFileName();
        }
    }

    /**
     * Whether the rollback after the damage took rank {@code r} of {@code g} from elsewhere than
     * its node's cache: "caught (SOURCE)", "not exercised (...)" when the rollback went to
     * another generation, or what went wrong.
     */
    static String caught(List<String> after, long g, int r) {
        for (String l : after) {
            Matcher m = SOURCES.matcher(l);
            if (m.find() && m.group(2).matches("(.*, )?" + r + "=.*")) {
                if (Long.parseLong(m.group(1)) < g) {
                    return "not exercised (the rollback went to generation " + m.group(1) + ", before the damage)";
                }
                String source = m.group(2).replaceAll("(?:.*, )?" + r + "=(\\w+).*", "$1");
                return source.equals("local") ? "restored from the damaged local copy" : "caught (" + source + ")";
            }
        }
        return "not exercised (no rollback restored rank " + r + ")";
    }
}

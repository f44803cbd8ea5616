package io.ferry.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The crash harness's damage ({@link FaultHarness}'s cache rot and store rot): a seeded bit
 * flipped, or a file cut short, in a node's cached images or in a pack on the store; and
 * whether the rollback that followed took the damaged rank from elsewhere.
 */
final class Rot {
    private static final Pattern SOURCES = Pattern.compile("restored generation (\\d+), sources by rank \\{([^}]*)}");

    private Rot() {}

    /**
     * Damages a seeded file of rank {@code r}'s image in its node's cache, in generation {@code g}
     * and every newer one already staged (one may be established by the time the rollback
     * picks): what it did and which generations it damaged, or null. Only a staged image counts:
     * its manifest on the store fixes its content, where a copy still on its way from the rank
     * to the store is, damaged, what the rank wrote as far as anyone can tell.
     */
    static Damage inCache(Path tmp, Path store, String job, long g, int r, Random rnd) throws IOException {
        List<String> done = new ArrayList<>();
        Set<Long> damaged = new TreeSet<>();
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
                Path manifest = store.resolve("ferry/v1/jobs/" + job + "/" + gen.getFileName() + "/" + r + ".manifest");
                if (!Files.isDirectory(dir) || !Files.isRegularFile(manifest)) {
                    continue;
                }
                List<Path> files;
                try (var walk = Files.walk(dir)) {
                    files = walk.filter(Files::isRegularFile).sorted().toList();
                }
                for (Path f : files) {
                    if (Files.size(f) > 0) {
                        done.add(damage(f, rnd) + " of generation " + gen.getFileName() + " in " + node + "'s cache");
                        damaged.add(Long.parseLong(gen.getFileName().toString()));
                        break;
                    }
                }
            }
        }
        return done.isEmpty() ? null : new Damage(String.join("; ", done), Set.copyOf(damaged));
    }

    /** What {@link #inCache} did, and the generations of the rank whose cached copy it damaged. */
    record Damage(String what, Set<Long> generations) {}

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
        try (FileChannel c = FileChannel.open(f,
                StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (size > 1 && rnd.nextInt(4) == 0) {
                c.truncate(size / 2);
                return "cut " + f.getFileName() + " from " + size + " to " + size / 2 + " bytes";
            }
            long at = (long) (rnd.nextDouble() * size);
            ByteBuffer b = ByteBuffer.allocate(1);
            c.read(b, at);
            int bit = rnd.nextInt(8);
            b.put(0, (byte) (b.get(0) ^ (1 << bit)));
            b.rewind();
            c.write(b, at);
            return "flipped bit " + bit + " of byte " + at + " of " + f.getFileName();
        }
    }

    /**
     * Whether the rollback after the damage took rank {@code r} from elsewhere than its node's
     * cache when it restored one of the damaged generations: "caught (SOURCE)", "not exercised
     * (...)" when the rollback went to a generation whose copy was not damaged (an older one, or
     * a newer one not yet in the cache when the damage was done), or what went wrong.
     */
    static String caught(List<String> after, Damage d, int r) {
        for (String l : after) {
            Matcher m = SOURCES.matcher(l);
            if (m.find() && m.group(2).matches("(.*, )?" + r + "=.*")) {
                if (!d.generations().contains(Long.parseLong(m.group(1)))) {
                    return "not exercised (the rollback went to generation " + m.group(1)
                            + ", whose copy was not damaged)";
                }
                String source = m.group(2).replaceAll("(?:.*, )?" + r + "=(\\w+).*", "$1");
                return source.equals("local") ? "restored from the damaged local copy" : "caught (" + source + ")";
            }
        }
        return "not exercised (no rollback restored rank " + r + ")";
    }
}

package io.ferry.model;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Seeded mutation fuzzing of every decoder that reads bytes written by another process or
 * node (events and commands from the log, manifests and commit markers from the store): bits
 * flipped, bytes cut, slices repeated, JSON punctuation and extreme numbers dropped in. Each
 * mutant either decodes to a record that passes its own validation, or is refused with the
 * decoder's own error (IllegalArgumentException for the log, MalformedManifestException for the
 * store). Anything else (a NullPointerException, an index out of bounds, an
 * ArithmeticException, a stack overflow) is a bug: a bad record must never take down the loop
 * that reads it. 12,000 record mutants and 9,000 text mutants in about two seconds; the seed is in
 * the failure message. (Seeded mutation, not yet coverage-guided.)
 */
class DecoderFuzzTest {
    private static final int MUTANTS_PER_SAMPLE = 1000;
    private static final String SHA = "ab".repeat(32);
    private static final String[] TOKENS = {"\"", "{", "}", "[", "]", ",", ":", "null", "true", "-1", "0",
            "1e309", "-9223372036854775809", "99999999999999999999", "\"\"", "\\u0000", "\\", "NaN", " ", "2.5"};

    private interface Decoder {
        Object decode(byte[] bytes) throws Exception;
    }

    private record Sample(String name, byte[] bytes, Decoder decoder, Class<? extends Exception> refusal) {}

    private static List<Sample> samples() {
        List<Sample> s = new ArrayList<>();
        for (Event e : List.of(new Event.ImageCaptured("j", 2, 1, "n0", 1234, 0.25),
                new Event.ImageStaged("j", 2, 1, "remote", 1234, 600, 0.5, SHA), new Event.Heartbeat("j", "n0"),
                new Event.JobStarted("j", 8, 0, false, "file:/s", "login1", "block:n1,n2",
                        new LaunchSpec(List.of("./sim", "in.cfg"), "app", 30_000, "USR2", Map.of("s3.region", "eu"))),
                new Event.ImagesRestored("j", 2, "n1", Map.of(0, "local", 1, "remote")),
                new Event.PredictionMade("j", 4, 1234, 2, 0.5, 3.0, 0.2, 5, 600),
                new Event.PartnerCopied("j", 4, "n1", "n2", "4-7", 4096, 0.125))) {
            s.add(new Sample(e.getClass().getSimpleName(), EventCodec.encode(e), EventCodec::decode,
                    IllegalArgumentException.class));
        }
        s.add(new Sample("Launch", EventCodec.encode(new Command.Launch("j", "n2", 4, "4-7", 8, "file:/s",
                LaunchSpec.of(List.of("./sim")), "node lost", false, Map.of(4, "n1=10.0.0.1:5000"))),
                EventCodec::decodeCommand, IllegalArgumentException.class));
        Manifest m = new Manifest(new ImageRef("job", 3, 1), 4096, List.of(new Entry.Directory("d", 0750),
                new Entry.RegularFile("d/state.bin", 0640, 4097 + 4096, SHA, List.of(ChunkId.parse("01".repeat(32)),
                        ChunkId.ZERO, ChunkId.parse("02".repeat(32)))),
                new Entry.RegularFile("v2", 0600, 10, Entry.RegularFile.NOT_RECORDED,
                        List.of(ChunkId.parse("03".repeat(32)))),
                new Entry.Symlink("latest", "d/state.bin")));
        s.add(new Sample("manifest", ManifestCodec.encode(m), b -> ManifestCodec.decodeManifest(b, "fuzz"),
                MalformedManifestException.class));
        s.add(new Sample("manifest v3", ManifestCodec.encode(ManifestCodecTest.packed()),
                b -> ManifestCodec.decodeManifest(b, "fuzz"),
                MalformedManifestException.class));
        Instant at = Instant.parse("2026-11-23T10:00:00Z");
        s.add(new Sample("marker v1", ManifestCodec.encode(new SnapshotMarker("job", 3, 2, Map.of(0, SHA, 1, SHA), at)),
                b -> ManifestCodec.decodeCommitMarker(b, "fuzz"), MalformedManifestException.class));
        s.add(new Sample("marker v2",
                ShardedMarker.encode(new ShardedMarker.Head("job", 3, 5, 2, List.of(SHA, SHA, SHA), at)),
                b -> ManifestCodec.decodeCommitMarker(b, "fuzz"), MalformedManifestException.class));
        s.add(new Sample("marker shard", ShardedMarker.encode(new ShardedMarker.Shard("job", 3, 2, List.of(SHA, SHA))),
                b -> ShardedMarker.decodeShard(b, "fuzz"), MalformedManifestException.class));
        return s;
    }

    @Test
    void mutatedRecordsDecodeOrAreRefusedWithTheDecodersOwnErrorNeverAnythingElse() {
        long seed = 20261123L;
        Random rnd = new Random(seed);
        int decoded = 0;
        int refused = 0;
        for (Sample sample : samples()) {
            for (int i = 0; i < MUTANTS_PER_SAMPLE; i++) {
                byte[] mutant = mutate(sample.bytes(), rnd);
                try {
                    sample.decoder().decode(mutant);
                    decoded++;
                } catch (Exception e) {
                    if (!sample.refusal().isInstance(e)) {
                        fail(sample.name() + " mutant " + i + " (seed " + seed + ") raised " + e + " instead of "
                                + sample.refusal().getSimpleName() + ":\n"
                                + new String(mutant, StandardCharsets.UTF_8), e);
                    }
                    assertTrue(e.getMessage() != null && !e.getMessage().isBlank(), "a refusal says why: " + e);
                    refused++;
                } catch (StackOverflowError | OutOfMemoryError e) {
                    fail(sample.name() + " mutant " + i + " (seed " + seed + "): " + e);
                }
            }
        }
        assertTrue(refused > decoded, "most mutants are refused (" + refused + " refused, " + decoded + " decoded)");
        assertTrue(decoded > 0, "and some still decode: the mutations are not all fatal");
    }

    /** The text parsers of command-line values and of settings carried in the log. */
    @Test
    void mutatedTextValuesParseOrAreRefusedWithAnIllegalArgumentException() {
        long seed = 20261124L;
        Random rnd = new Random(seed);
        Map<String, Function<String, Object>> parsers = new LinkedHashMap<>();
        parsers.put("4MiB", Sizes::parse);
        parsers.put("1.5GiB", Sizes::parse);
        parsers.put("9EB", Sizes::parse);
        parsers.put("30s", Durations::parse);
        parsers.put("1h30m", Durations::parse);
        parsers.put("0-3,7,9-12", RankSet::parse);
        parsers.put("block:n1,n2", t -> Placement.parse(t, 8));
        parsers.put("map:0-3:n1,4-7:n3", t -> Placement.parse(t, 8));
        parsers.put("n1=10.0.0.1:5000,n2=[fd00::2]:7", PeerAddresses::parse);
        int refused = 0;
        for (Map.Entry<String, Function<String, Object>> p : parsers.entrySet()) {
            byte[] valid = p.getKey().getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < MUTANTS_PER_SAMPLE; i++) {
                String mutant = new String(mutate(valid, rnd), StandardCharsets.UTF_8);
                try {
                    p.getValue().apply(mutant);
                } catch (IllegalArgumentException e) {
                    assertTrue(e.getMessage() != null && !e.getMessage().isBlank(), "a refusal says why: " + e);
                    refused++;
                } catch (RuntimeException | StackOverflowError e) {
                    fail("'" + mutant + "' (mutant " + i + " of '" + p.getKey() + "', seed " + seed
                            + ") raised " + e, e);
                }
            }
        }
        assertTrue(refused > parsers.size() * MUTANTS_PER_SAMPLE / 2, refused + " refused");
    }

    private static byte[] mutate(byte[] in, Random rnd) {
        byte[] b = in.clone();
        int edits = 1 + rnd.nextInt(3);
        for (int k = 0; k < edits; k++) {
            switch (rnd.nextInt(5)) {
                case 0 -> { // flip a bit
                    int at = rnd.nextInt(b.length);
                    b[at] ^= (byte) (1 << rnd.nextInt(8));
                }
                case 1 -> b = Arrays.copyOf(b, rnd.nextInt(b.length + 1)); // cut short
                case 2 -> { // repeat a slice
                    int from = rnd.nextInt(b.length + 1);
                    int to = from + rnd.nextInt(b.length - from + 1);
                    byte[] out = new byte[b.length + (to - from)];
                    System.arraycopy(b, 0, out, 0, to);
                    System.arraycopy(b, from, out, to, b.length - from);
                    b = out;
                }
                case 3 -> b = splice(b, rnd.nextInt(b.length + 1), TOKENS[rnd.nextInt(TOKENS.length)]); // a token
                default -> { // replace a digit run's first digit, or any byte, with a digit
                    if (b.length > 0) {
                        b[rnd.nextInt(b.length)] = (byte) ('0' + rnd.nextInt(10));
                    }
                }
            }
            if (b.length == 0) {
                break;
            }
        }
        return b;
    }

    private static byte[] splice(byte[] b, int at, String token) {
        byte[] t = token.getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[b.length + t.length];
        System.arraycopy(b, 0, out, 0, at);
        System.arraycopy(t, 0, out, at, t.length);
        System.arraycopy(b, at, out, at + t.length, b.length - at);
        return out;
    }
}

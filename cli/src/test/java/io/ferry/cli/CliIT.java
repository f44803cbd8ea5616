package io.ferry.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The real command in child processes: exit codes, one-line errors, memory bounds. */
class CliIT {
    @TempDir
    Path tmp;

    private Path image(long bytes) throws Exception {
        Path dir = tmp.resolve("image");
        SyntheticImage.write(dir, bytes, 1, 0);
        return dir;
    }

    @Test
    void pushPullCommitLsVerifyRoundTrip() throws Exception {
        Path img = image(20 << 20);
        String store = tmp.resolve("store").toString();
        FerryProcess.Result push = FerryProcess.run("image", "push", img.toString(), "--store", store,
                "--job", "sim", "--generation", "4", "--rank", "0");
        assertEquals(0, push.exit(), push.err());
        assertTrue(push.out().startsWith("pushed sim/4/0: 20.0 MiB raw in 4 files"), push.out());
        assertEquals(0, FerryProcess.run("snapshot", "commit", "--store", store, "--job", "sim",
                "--generation", "4", "--ranks", "1").exit());
        FerryProcess.Result ls = FerryProcess.run("store", "ls", store);
        assertTrue(ls.out().matches("(?s).*sim\\s+4\\s+1 established\\s+20.0 MiB.*"), ls.out());
        FerryProcess.Result pull = FerryProcess.run("image", "pull", "--store", "file:" + store, "--job", "sim",
                "--generation", "4", "--rank", "0", tmp.resolve("out").toString());
        assertEquals(0, pull.exit(), pull.err());
        for (String f : List.of("text.bin", "heap.bin", "fields.bin", "random.bin")) {
            assertEquals(-1, Files.mismatch(img.resolve(f), tmp.resolve("out").resolve(f)), f);
        }
        FerryProcess.Result verify = FerryProcess.run("store", "verify", store);
        assertEquals(0, verify.exit(), verify.out());
        assertTrue(verify.out().startsWith("OK: "), verify.out());
    }

    /**
     * One agent per home: a second `ferry agent` over a home whose agent lock is held is refused, naming the holder.
     */
    @Test
    void aSecondAgentOverOneHomeIsRefused() throws Exception {
        Path home = Files.createDirectories(tmp.resolve("node-home"));
        // The first agent's hold, taken here by this JVM: a real lock of another process than the command's.
        try (var ch = FileChannel.open(home.resolve("agent.lock"),
                StandardOpenOption.CREATE,
                StandardOpenOption.WRITE); var held = ch.lock()) {
            ch.write(ByteBuffer.wrap("4242\n".getBytes()));
            FerryProcess.Result r = FerryProcess.run(List.of(), "agent", "--kafka", "127.0.0.1:1", "--node", "n1",
                    "--home", home.toString(), "--peer-listen", "off");
            assertEquals(1, r.exit(), r.err());
            assertTrue(r.err().contains("another ferry agent (pid 4242) uses " + home), r.err());
        }
    }

    @Test
    void unsafeJobNameIsRefusedBeforeAnyIo() throws Exception {
        Path img = image(1 << 20);
        Path store = tmp.resolve("store");
        FerryProcess.Result r = FerryProcess.run("image", "push", img.toString(), "--store", store.toString(),
                "--job", "../escape", "--generation", "1", "--rank", "0");
        assertEquals(1, r.exit());
        assertEquals("ferry: unsafe job id '../escape': use 1-128 characters of A-Z a-z 0-9 . _ -, the"
                + " first a letter or digit", r.err().strip());
        assertFalse(Files.exists(store), "the store was not touched");
    }

    @Test
    void badArgumentsAndConfigurationGetOneClearLine() throws Exception {
        FerryProcess.Result missing = FerryProcess.run("image", "push", "x", "--store", "s");
        assertEquals(2, missing.exit());
        assertTrue(missing.err().contains("Missing required options"), missing.err());
        FerryProcess.Result badKey = FerryProcess.run("image", "push", tmp.toString(), "--store",
                tmp.resolve("s").toString(),
                "--job", "j", "--generation", "1", "--rank", "0", "--set", "staging.chunk-size=3000");
        assertEquals(1, badKey.exit());
        assertTrue(badKey.err().startsWith("ferry: configuration key 'staging.chunk-size'"), badKey.err());
        FerryProcess.Result unknown = FerryProcess.run("store", "ls", tmp.toString(), "--set", "staging.chunksize=4M");
        assertEquals(1, unknown.exit());
        assertTrue(unknown.err().contains("'staging.chunksize'"), unknown.err());
    }

    @Test
    void verifyExitsThreeOnDamage() throws Exception {
        Path img = image(8 << 20);
        String store = tmp.resolve("store").toString();
        assertEquals(0, FerryProcess.run("image", "push", img.toString(), "--store", store, "--job", "j",
                "--generation", "0", "--rank", "0", "--set", "staging.layout=chunks").exit());
        Path chunk;
        try (Stream<Path> s = Files.walk(tmp.resolve("store/ferry/v1/chunks"))) {
            chunk = s.filter(Files::isRegularFile).findFirst().orElseThrow();
        }
        try (RandomAccessFile f = new RandomAccessFile(chunk.toFile(), "rw")) {
            f.seek(30);
            f.write(f.read() ^ 0xff);
        }
        FerryProcess.Result r = FerryProcess.run("store", "verify", store);
        assertEquals(3, r.exit(), r.out());
        assertTrue(r.out().contains("CORRUPT_CHUNK ferry/v1/chunks/"), r.out());
        assertTrue(r.out().contains("DAMAGED_IMAGE j/0/0"), r.out());
    }

    @Test
    void storageDemoRunsAndNeverDeletesForeignDirectories() throws Exception {
        Path demo = tmp.resolve("demo");
        FerryProcess.Result ok = FerryProcess.run("demo", "--storage-only", "--dir", demo.toString(), "--image-size",
                "8MiB");
        assertEquals(0, ok.exit(), ok.out() + ok.err());
        assertTrue(ok.out().contains("demo OK: restored images are byte-identical"), ok.out());
        assertTrue(ok.out().contains("dropped [0]"), "retention ran: " + ok.out());
        assertEquals(0, FerryProcess.run("demo", "--storage-only", "--dir", demo.toString(), "--image-size", "4MiB")
                .exit(), "a rerun reuses its own dir");

        Path precious = tmp.resolve("precious");
        Files.createDirectories(precious);
        Files.writeString(precious.resolve("results.txt"), "keep me");
        FerryProcess.Result refused = FerryProcess.run("demo", "--dir", precious.toString());
        assertEquals(1, refused.exit());
        assertTrue(refused.err().contains("refusing to use"), refused.err());
        assertEquals("keep me", Files.readString(precious.resolve("results.txt")));
    }

    @Test
    void largeImagesStreamInSmallHeaps() throws Exception {
        Path img = image(400 << 20);
        String store = tmp.resolve("store").toString();
        // A 400 MiB image through a 64 MiB heap: memory is bounded by the in-flight budget, not the image.
        List<String> small = List.of("-Xmx64m");
        FerryProcess.Result push = FerryProcess.run(small, "image", "push", img.toString(), "--store", store,
                "--job", "big", "--generation", "0", "--rank", "0", "--set", "staging.max-bytes-in-flight=16MiB",
                "--set", "staging.workers=2");
        assertEquals(0, push.exit(), push.err());
        FerryProcess.Result pull = FerryProcess.run(small, "image", "pull", "--store", store, "--job", "big",
                "--generation", "0", "--rank", "0", "--set", "staging.max-bytes-in-flight=16MiB",
                "--set", "staging.workers=2", tmp.resolve("out").toString());
        assertEquals(0, pull.exit(), pull.err());
        assertEquals(-1, Files.mismatch(img.resolve("heap.bin"), tmp.resolve("out/heap.bin")));
    }
}

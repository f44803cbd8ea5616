package io.ferry.cli.demo;

import io.ferry.agent.client.FerryCheckpoint;

import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The demo's simulation rank, in socket mode: explicit 1-D heat diffusion over 32 Ki cells.
 * Deterministic, so a run that was killed and rolled back must end with exactly the state of
 * an uninterrupted run. Args: steps resultsDir [releaseFile]. {@code FERRY_PACE_MS} (default 20) paces
 * steps. With a release file, the rank waits after its last step, still answering checkpoints, until
 * that file exists; the demo uses it to keep the job alive until its kill and recovery are done.
 */
public final class HeatRank {
    private static final int CELLS = 1 << 15;

    private HeatRank() {}

    public static void main(String[] args) throws Exception {
        int steps = Integer.parseInt(args[0]);
        Path results = Path.of(args[1]);
        Path release = args.length > 2 ? Path.of(args[2]) : null;
        long pace = Long.parseLong(System.getenv().getOrDefault("FERRY_PACE_MS", "20"));
        int rank = Integer.parseInt(System.getenv().getOrDefault("FERRY_RANK", "0"));
        FerryCheckpoint ferry = FerryCheckpoint.fromEnvironment();
        double[] u = new double[CELLS];
        int[] step = {0};
        for (int i = 0; i < CELLS; i++) {
            u[i] = Math.sin(Math.PI * i * (rank + 1) / CELLS) + (i % 97 == 0 ? 1.0 : 0.0);
        }
        if (ferry.restartDir().isPresent()) {
            try (DataInputStream in = new DataInputStream(
                    Files.newInputStream(ferry.restartDir().get().resolve("state.bin")))) {
                step[0] = in.readInt();
                for (int i = 0; i < CELLS; i++) {
                    u[i] = in.readDouble();
                }
            }
        }
        Object lock = new Object();
        if (ferry.managed()) {
            ferry.serve((dir, generation) -> {
                synchronized (lock) {
                    try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(
                            Files.newOutputStream(dir.resolve("state.bin"))))) {
                        out.writeInt(step[0]);
                        for (double v : u) {
                            out.writeDouble(v);
                        }
                    }
                }
            });
        }
        double[] next = new double[CELLS];
        while (true) {
            synchronized (lock) {
                if (step[0] >= steps) {
                    break;
                }
                for (int i = 1; i < CELLS - 1; i++) {
                    next[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
                }
                System.arraycopy(next, 1, u, 1, CELLS - 2);
                step[0]++;
            }
            if (pace > 0) {
                Thread.sleep(pace);
            }
        }
        while (release != null && !Files.exists(release)) {
            Thread.sleep(50);
        }
        Files.writeString(results.resolve("rank-" + rank), checksum(u) + "\n");
    }

    static String checksum(double[] u) throws IOException {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            ByteBuffer b = ByteBuffer.allocate(8 * u.length);
            for (double v : u) {
                b.putDouble(v);
            }
            return HexFormat.of().formatHex(md.digest(b.array())).substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IOException(e);
        }
    }
}

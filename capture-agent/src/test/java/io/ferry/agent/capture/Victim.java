package io.ferry.agent.capture;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The test program {@code victim.c}, compiled once with gcc, started under {@code setsid -w -f}
 * as {@link ProcCapturer#launchCommand} does, so the process under capture is a grandchild
 * of the test JVM in its own process group.
 */
final class Victim implements AutoCloseable {
    final Process wrapper;
    final long pid;
    final Map<String, Long> addresses = new HashMap<>();
    private final BufferedReader out;

    static Path binary() throws IOException, InterruptedException {
        return Scenario.compileOnce("/proc/victim.c", "victim", "-O1", "-g", "-pthread");
    }

    Victim(int mib, int threads, boolean write) throws IOException, InterruptedException {
        List<String> cmd = new ProcCapturer().launchCommand(List.of(binary().toString(), Integer.toString(mib),
                Integer.toString(threads), write ? "write" : "idle"), null);
        wrapper = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        out = new BufferedReader(new InputStreamReader(wrapper.getInputStream(), StandardCharsets.US_ASCII));
        String ready = out.readLine();
        if (ready == null || !ready.startsWith("ready ")) {
            throw new IOException("victim did not start: " + ready);
        }
        for (String kv : ready.substring(6).split(" ")) {
            String[] p = kv.split("=");
            addresses.put(p[0], p[1].startsWith("0x") ? Long.parseUnsignedLong(p[1].substring(2), 16)
                    : Long.parseLong(p[1]));
        }
        pid = new ProcCapturer().target(wrapper.pid()).orElseThrow();
        // The ticker thread is made after "ready": its first tick says every thread of the victim exists
        // (a capture taken before it counted one thread short on a loaded machine).
        if (nextTick() < 0) {
            throw new IOException("victim ended before its first tick");
        }
    }

    /** The next "tick N" the victim prints, N; -1 at end of output. */
    long nextTick() throws IOException {
        String l;
        while ((l = out.readLine()) != null) {
            if (l.startsWith("tick ")) {
                return Long.parseLong(l.substring(5));
            }
        }
        return -1;
    }

    /** The victim's state letter from /proc (R, S, T...). */
    char state() throws IOException {
        String s = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        return s.charAt(s.lastIndexOf(')') + 2);
    }

    int quit() throws IOException, InterruptedException {
        OutputStream in = wrapper.getOutputStream();
        in.write("quit\n".getBytes(StandardCharsets.US_ASCII));
        in.flush();
        if (!wrapper.waitFor(10, TimeUnit.SECONDS)) {
            throw new IOException("victim did not quit");
        }
        return wrapper.exitValue();
    }

    @Override
    public void close() {
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        wrapper.destroyForcibly();
    }
}

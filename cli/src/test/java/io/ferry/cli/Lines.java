package io.ferry.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Every line a child process prints, kept and echoed (prefixed), so a test can wait for one. */
final class Lines {
    final List<String> lines = new CopyOnWriteArrayList<>();
    private final Thread reader;

    Lines(Process p, String name) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    lines.add(l);
                    System.out.println("[" + name + "] " + l);
                }
            } catch (IOException ignored) {
                // the process is gone
            }
        });
        t.setDaemon(true);
        t.start();
        reader = t;
    }

    /**
     * Waits (two minutes at most) until every line is read: the process closed its output, as it
     * does when it ends, unless a child it left behind holds the pipe.
     */
    void awaitEnd() throws InterruptedException {
        reader.join(TimeUnit.SECONDS.toMillis(120));
        if (reader.isAlive()) {
            throw new AssertionError("the output did not end: " + String.join("\n", lines));
        }
    }

    /**
     * A copy of the lines read so far from the {@code from}-th on (none where fewer were read): a sublist of
     * the live list fails once a line is added meanwhile. Lines are only ever added, each read by index.
     */
    List<String> since(int from) {
        List<String> out = new ArrayList<>();
        for (int i = from, n = lines.size(); i < n; i++) {
            out.add(lines.get(i));
        }
        return out;
    }

    /** The first line (printed so far or within two minutes) that matches. */
    String await(String what, Predicate<String> match) throws InterruptedException {
        return awaitAfter(0, what, match);
    }

    /** The first line from the {@code from}-th on (printed so far or within two minutes) that matches. */
    String awaitAfter(int from, String what, Predicate<String> match) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < deadline) {
            for (String l : since(from)) {
                if (match.test(l)) {
                    return l;
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError("timed out waiting for " + what + ": " + String.join("\n", lines));
    }

    /** The first "generation N" a printed line names. */
    static long generationOf(String line) {
        Matcher m = Pattern.compile("generation (\\d+)").matcher(line);
        if (!m.find()) {
            throw new AssertionError("no generation in " + line);
        }
        return Long.parseLong(m.group(1));
    }
}

package io.ferry.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a command that reports prints on success: a sentence for people, or with {@code --json}
 * one JSON object for scripts, from the same fields. A picocli mixin: {@code @Mixin Report report}.
 */
final class Report {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Option(names = "--json", description = "Print one JSON object instead of text.")
    boolean json;

    /** Prints {@code text}, or the fields (in order) as one JSON object with {@code --json}. */
    void print(PrintStream out, String text, Object... fields) {
        if (!json) {
            out.println(text);
            return;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i + 1 < fields.length; i += 2) {
            m.put((String) fields[i], fields[i + 1]);
        }
        try {
            out.println(JSON.writeValueAsString(m));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the report as JSON: " + e.getOriginalMessage(), e);
        }
    }
}

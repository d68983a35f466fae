package io.tenure.it.safety;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** History files: one JSON object per line. A torn last line (a killed writer) is ignored. */
public final class JsonLines {
    private static final ObjectMapper JSON = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private JsonLines() {
    }

    public static String line(Object record) {
        try {
            return JSON.writeValueAsString(record);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Appends one record and a newline; the caller flushes. */
    public static void append(Writer out, Object record) throws IOException {
        out.write(line(record));
        out.write('\n');
    }

    public static <T> List<T> read(Path file, Class<T> type) {
        List<T> records = new ArrayList<>();
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                try {
                    records.add(JSON.readValue(line, type));
                } catch (IOException torn) {
                    if (in.readLine() != null) {
                        throw new UncheckedIOException("malformed line in " + file + ": " + line, torn);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return records;
    }
}

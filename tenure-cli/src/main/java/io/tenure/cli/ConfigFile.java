package io.tenure.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The {@code --config} file of {@code tenure server}: one {@code key = value} per line, where the
 * key is an option's long name without its dashes ({@code data-dir = /var/lib/tenure}). Blank
 * lines and lines starting with {@code #} are ignored; the value is the rest of the line with
 * surrounding blanks removed, taken literally (no quotes, escapes or trailing comments). A
 * malformed line, a key given twice and an unknown key are errors naming the line, so a typo
 * never silently leaves a setting at its default.
 */
final class ConfigFile {
    /** One setting and where it was written. */
    record Entry(String key, String value, int line) {}

    private final Path path;
    private final Map<String, Entry> entries;

    private ConfigFile(Path path, Map<String, Entry> entries) {
        this.path = path;
        this.entries = entries;
    }

    /**
     * Reads and checks {@code path}.
     *
     * @param knownKeys the settings a file may give
     * @throws IllegalArgumentException naming the file, and the line when a line is at fault
     */
    static ConfigFile read(Path path, Collection<String> knownKeys) {
        List<String> lines;
        try {
            lines = Files.readAllLines(path, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("config file " + path + " does not exist");
        } catch (IOException e) {
            throw new IllegalArgumentException("config file " + path + " cannot be read: " + e);
        }
        Map<String, Entry> entries = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            int number = i + 1;
            String line = lines.get(i).strip();
            if (number == 1 && line.startsWith("\uFEFF")) {
                line = line.substring(1).strip();
            }
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int eq = line.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException(where(path, number) + ": expected 'key = value', got '" + line + "'");
            }
            String key = line.substring(0, eq).strip();
            String value = line.substring(eq + 1).strip();
            if (key.startsWith("-")) {
                throw new IllegalArgumentException(where(path, number) + ": write the key without dashes ('"
                        + key.replaceFirst("^-+", "") + " = ...')");
            }
            if (!knownKeys.contains(key)) {
                throw new IllegalArgumentException(where(path, number) + ": unknown setting '" + key + "'; known: "
                        + String.join(", ", new TreeSet<>(knownKeys)));
            }
            Entry before = entries.put(key, new Entry(key, value, number));
            if (before != null) {
                throw new IllegalArgumentException(where(path, number) + ": '" + key + "' is already set on line " + before.line());
            }
        }
        return new ConfigFile(path, entries);
    }

    Path path() {
        return path;
    }

    /** The setting {@code key}, or null when the file does not give it. */
    Entry get(String key) {
        return entries.get(key);
    }

    private static String where(Path path, int line) {
        return "config file " + path + ", line " + line;
    }
}

package io.tenure.cli;

import io.tenure.client.Scope;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/**
 * The lock scopes of {@code tenure lock} and {@code tenure describe}, in place of NAME:
 * {@code --path}, {@code --inode} and {@code --range}, each repeatable. Every value is checked as
 * it is read, so a bad one is a usage error (exit 2) naming the option, before any call; the
 * messages are one line, whatever the value holds.
 */
final class ScopeOptions {
    /** {@code INODE:START-END}, decimal. */
    private static final Pattern RANGE = Pattern.compile("(\\d+):(\\d+)-(\\d+)");

    @Option(names = "--path", paramLabel = "PATH", converter = PathConverter.class,
            description = "An absolute path: it overlaps itself, its ancestors and its descendants, not its siblings "
                    + "(normalized: //, ., .. and a trailing / are read as the member does). Repeatable.")
    List<Scope> paths = new ArrayList<>();

    @Option(names = "--inode", paramLabel = "INODE", converter = InodeConverter.class,
            description = "A whole inode (a number): it overlaps every byte range of it. Repeatable.")
    List<Scope> inodes = new ArrayList<>();

    @Option(names = "--range", paramLabel = "INODE:START-END", converter = RangeConverter.class,
            description = "Bytes [START, END) of inode INODE, e.g. 42:0-4096; ranges of one inode overlap when they share "
                    + "a byte. Repeatable.")
    List<Scope> ranges = new ArrayList<>();

    /** Every scope given: the paths, then the inodes, then the ranges, each in the order given. */
    List<Scope> scopes() {
        List<Scope> all = new ArrayList<>(paths);
        all.addAll(inodes);
        all.addAll(ranges);
        return all;
    }

    boolean isEmpty() {
        return paths.isEmpty() && inodes.isEmpty() && ranges.isEmpty();
    }

    /** An absolute path, normalized. */
    static Scope path(String text) {
        if (hasControlCharacter(text)) {
            // Not echoed: a newline or an escape sequence would break the one-line message.
            throw new TypeConversionException("a path must not hold control characters (NUL, newline, tab and the like)");
        }
        try {
            return Scope.path(text);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }

    /** A whole inode: a number from 0 to 2^63 - 1. */
    static Scope inode(String text) {
        return Scope.inode(number(text, "an inode", "a number like 42"));
    }

    /** {@code INODE:START-END}: bytes [START, END) of INODE, START below END. */
    static Scope range(String text) {
        Matcher m = RANGE.matcher(text);
        if (!m.matches()) {
            throw new TypeConversionException(quoted(text) + " is not INODE:START-END, e.g. 42:0-4096 for the first 4096 bytes of inode 42");
        }
        long inode = number(m.group(1), "the inode", "a number");
        long start = number(m.group(2), "the start", "a byte offset");
        long end = number(m.group(3), "the end", "a byte offset");
        if (end <= start) {
            throw new TypeConversionException(quoted(text) + ": the end (" + end + ") must be above the start (" + start
                    + "); the range is [START, END)");
        }
        return Scope.byteRange(inode, start, end);
    }

    private static long number(String text, String what, String expected) {
        if (!text.matches("\\d+")) {
            throw new TypeConversionException(quoted(text) + " is not " + what + ": use " + expected);
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new TypeConversionException(quoted(text) + ": " + what + " must be at most " + Long.MAX_VALUE);
        }
    }

    private static boolean hasControlCharacter(String text) {
        return text.chars().anyMatch(c -> c < 0x20 || c == 0x7f);
    }

    /** The value in quotes, with any control character shown as {@code \\uXXXX} so the message stays one line. */
    private static String quoted(String text) {
        StringBuilder quoted = new StringBuilder("'");
        text.chars().forEach(c -> {
            if (c < 0x20 || c == 0x7f) {
                quoted.append(String.format("\\u%04x", c));
            } else {
                quoted.append((char) c);
            }
        });
        return quoted.append('\'').toString();
    }

    static final class PathConverter implements ITypeConverter<Scope> {
        @Override
        public Scope convert(String value) {
            return path(value);
        }
    }

    static final class InodeConverter implements ITypeConverter<Scope> {
        @Override
        public Scope convert(String value) {
            return inode(value);
        }
    }

    static final class RangeConverter implements ITypeConverter<Scope> {
        @Override
        public Scope convert(String value) {
            return range(value);
        }
    }
}

package io.tenure.server.text;

import java.time.Duration;

/**
 * The argument line of a request, read as dflockd reads it: fields separated by spaces, whole
 * seconds for durations (0 or more, at most what fits in 64-bit nanoseconds), a bad field
 * answered with a bare {@code error}.
 */
public final class TextArgs {
    /** dflockd refuses seconds whose nanoseconds would not fit in a signed 64-bit number. */
    static final long MAX_SECONDS = Long.MAX_VALUE / 1_000_000_000L;

    private final String[] fields;

    private TextArgs(String[] fields) {
        this.fields = fields;
    }

    public static TextArgs of(TextRequest request) {
        String arg = request.arg().strip();
        return new TextArgs(arg.isEmpty() ? new String[0] : arg.split("[ \t]+"));
    }

    public int size() {
        return fields.length;
    }

    public String field(int i) {
        return fields[i];
    }

    /** Fails unless there are between {@code min} and {@code max} fields. */
    public TextArgs count(int min, int max) {
        if (fields.length < min || fields.length > max) {
            throw TextRefusal.error(TextRefusal.MALFORMED_ARG, "expected " + (min == max ? "" + min : min + "-" + max)
                    + " arguments, got " + fields.length);
        }
        return this;
    }

    /** Field {@code i} as whole seconds, 0 or more. */
    public long seconds(int i) {
        long s = integer(i);
        if (s < 0 || s > MAX_SECONDS) {
            throw TextRefusal.error(TextRefusal.BAD_INTEGER, "seconds out of range: " + fields[i]);
        }
        return s;
    }

    /** Field {@code i} as a lease TTL in milliseconds, or {@code absent} when there is no such field. */
    public long leaseTtlMillis(int i, Duration absent) {
        if (i >= fields.length) {
            return absent.toMillis();
        }
        long s = seconds(i);
        if (s <= 0) {
            throw TextRefusal.error(TextRefusal.LEASE_NOT_POSITIVE, "lease_ttl must be positive");
        }
        return Math.multiplyExact(s, 1000L);
    }

    /** Field {@code i} as a signed 64-bit integer. */
    public long integer(int i) {
        try {
            return Long.parseLong(fields[i]);
        } catch (NumberFormatException e) {
            throw TextRefusal.error(TextRefusal.BAD_INTEGER, "not an integer: " + fields[i]);
        }
    }

    /** Field {@code i} as a positive count (a limit, a barrier's parties). */
    public int positiveCount(int i) {
        long n = integer(i);
        if (n <= 0 || n > Integer.MAX_VALUE) {
            throw TextRefusal.error(TextRefusal.COUNT_NOT_POSITIVE, "count must be positive: " + fields[i]);
        }
        return (int) n;
    }
}

package io.tenure.server.text;

/**
 * A request answered with a status line other than its success: a bare {@code error} (a parse
 * error, with dflockd's numeric code logged only), or one of dflockd's named statuses
 * ({@code error_max_locks}, {@code timeout}, {@code nil}, ...). The line is the whole answer.
 */
public final class TextRefusal extends RuntimeException {
    /** dflockd's codes for a bare {@code error}, which it logs and never sends. */
    public static final int BAD_COMMAND = 3;
    public static final int BAD_INTEGER = 4;
    public static final int BAD_KEY = 5;
    public static final int EMPTY_TOKEN = 7;
    public static final int MALFORMED_ARG = 8;
    public static final int LEASE_NOT_POSITIVE = 9;
    public static final int COUNT_NOT_POSITIVE = 13;

    private final String line;

    private TextRefusal(String line, String why) {
        super(why, null, false, false);
        this.line = line;
    }

    /** A bare {@code error}: dflockd's answer to every parse error. */
    public static TextRefusal error(int code, String why) {
        return new TextRefusal("error", "code " + code + ": " + why);
    }

    /** A named status as the whole answer ({@code error_max_locks}, {@code timeout}, {@code nil}...). */
    public static TextRefusal status(String line, String why) {
        return new TextRefusal(line, why);
    }

    /** The answer line. */
    public String line() {
        return line;
    }
}

package io.tenure.core.watch;

import io.tenure.core.Limits;

import java.util.Arrays;

/**
 * A pattern over dot-separated names (seed 004's, as NATS subjects): tokens separated by
 * {@code .}; the token {@code *} matches exactly one whole token; the token {@code >} matches one
 * or more trailing tokens and must be last. Every other token matches itself. {@code a.*.c}
 * matches {@code a.b.c} but not {@code a.b.x.c}; {@code a.>} matches {@code a.b} and
 * {@code a.b.c} but not {@code a}. A name with no wildcard token is a literal: it matches only
 * itself. Immutable.
 */
public final class KeyPattern {
    private final String text;
    private final String[] tokens;
    private final boolean literal;

    private KeyPattern(String text, String[] tokens, boolean literal) {
        this.text = text;
        this.tokens = tokens;
        this.literal = literal;
    }

    /**
     * The pattern {@code text}.
     *
     * @throws IllegalArgumentException naming {@code field} when it is empty, too long, has an
     *                                  empty token ({@code a..b}, a leading or trailing dot), or a
     *                                  {@code >} that is not the last token
     */
    public static KeyPattern parse(String field, String text) {
        String problem = check(field, text);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        String[] tokens = text.split("\\.", -1);
        boolean literal = Arrays.stream(tokens).noneMatch(t -> t.equals("*") || t.equals(">"));
        return new KeyPattern(text, tokens, literal);
    }

    /** @return null when {@code text} is a valid pattern, else a message naming {@code field} and the problem */
    public static String check(String field, String text) {
        String problem = Limits.checkKey(field, text);
        if (problem != null) {
            return problem;
        }
        String[] tokens = text.split("\\.", -1);
        for (int i = 0; i < tokens.length; i++) {
            if (tokens[i].isEmpty()) {
                return field + " '" + text + "' has an empty token: tokens are separated by single dots, with none at either end";
            }
            if (tokens[i].equals(">") && i != tokens.length - 1) {
                return field + " '" + text + "' has '>' before its last token: '>' matches the trailing tokens and must be last";
            }
        }
        return null;
    }

    /** @return null when {@code text} is a channel a signal may be published on (a valid pattern with no wildcard), else the problem */
    public static String checkLiteral(String field, String text) {
        String problem = check(field, text);
        if (problem != null) {
            return problem;
        }
        return parse(field, text).isLiteral() ? null
                : field + " '" + text + "' has a wildcard token ('*' or '>'): a signal is published on one channel, not a pattern";
    }

    /** Whether {@code name} matches: token by token, {@code *} any one token, {@code >} one or more trailing ones. */
    public boolean matches(String name) {
        if (literal) {
            return text.equals(name);
        }
        int at = 0;
        int length = name.length();
        for (int i = 0; i < tokens.length; i++) {
            if (at > length) {
                return false; // the name has fewer tokens
            }
            int end = name.indexOf('.', at);
            if (end < 0) {
                end = length;
            }
            if (end == at) {
                return false; // an empty token in the name matches nothing
            }
            String token = tokens[i];
            if (token.equals(">")) {
                // One or more tokens remain here; none of them may be empty.
                return name.charAt(length - 1) != '.' && name.indexOf("..", at) < 0;
            }
            if (!token.equals("*") && (token.length() != end - at || !name.regionMatches(at, token, 0, token.length()))) {
                return false;
            }
            at = end + 1;
        }
        return at == length + 1; // every token of the name was matched
    }

    /** Whether the pattern has no wildcard token (it matches itself alone). */
    /**
     * What every name it matches starts with: its text up to its first wildcard token
     * ({@code a.b.*} and {@code a.b.>}: {@code a.b.}; a literal: itself; {@code *}: empty).
     */
    public String literalPrefix() {
        StringBuilder prefix = new StringBuilder();
        for (String token : tokens) {
            if (token.equals("*") || token.equals(">")) {
                return prefix.toString();
            }
            prefix.append(token).append('.');
        }
        return text;
    }

    public boolean isLiteral() {
        return literal;
    }

    public String text() {
        return text;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeyPattern p && p.text.equals(text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    @Override
    public String toString() {
        return text;
    }
}

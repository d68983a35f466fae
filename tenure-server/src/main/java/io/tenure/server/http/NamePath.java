package io.tenure.server.http;

import io.tenure.core.Limits;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Lock, semaphore, election and barrier names in paths. A name may contain {@code /} and any Unicode, so the routes
 * are wildcards and the name is taken from the raw (undecoded) path: {@code /v1/locks/jobs%2Fnightly}
 * and {@code /v1/locks/jobs/nightly} name the same lock. For a POST the last raw segment is the
 * action ({@code acquire}, {@code renew}, {@code release}, {@code campaign}, ...); percent-encoding is decoded once, after
 * that split, so an encoded {@code %2F} never separates anything.
 *
 * @param noun   what the name names ({@code lock}, {@code semaphore}, {@code election}): the field a bad name is reported as
 * @param prefix the path before the name
 */
record NamePath(String noun, String prefix) {
    static final NamePath LOCKS = new NamePath("lock", "/v1/locks/");
    static final NamePath SEMAPHORES = new NamePath("semaphore", "/v1/semaphores/");
    static final NamePath ELECTIONS = new NamePath("election", "/v1/elections/");
    static final NamePath BARRIERS = new NamePath("barrier", "/v1/barriers/");
    static final NamePath DOUBLE_BARRIERS = new NamePath("double_barrier", "/v1/double-barriers/");
    static final NamePath LATCHES = new NamePath("latch", "/v1/latches/");
    static final NamePath COUNTERS = new NamePath("counter", "/v1/counters/");
    static final NamePath KV = new NamePath("key", "/v1/kv/");
    static final NamePath SIGNALS = new NamePath("channel", "/v1/signals/");
    static final NamePath LISTS = new NamePath("list", "/v1/lists/");

    /** A name and, for a POST, the action after it. */
    record Target(String name, String action) {}

    /** The name a GET names: everything after the prefix, decoded. */
    String nameOf(String rawPath) {
        return decode(tail(rawPath));
    }

    /**
     * The name and action a POST names, or null when the path has no action segment. An empty
     * name ({@code /v1/locks//acquire}) is a name, for {@link #check} to refuse as the noun's field.
     */
    Target actionOf(String rawPath) {
        String tail = tail(rawPath);
        int slash = tail.lastIndexOf('/');
        if (slash < 0) {
            return null;
        }
        return new Target(decode(tail.substring(0, slash)), tail.substring(slash + 1));
    }

    /** Refuses a name the member would refuse (empty, not Unicode, too long), as the {@link #noun} field. */
    void check(String name) {
        String problem = Limits.checkKey(noun, name);
        if (problem != null) {
            throw Failure.invalid(noun, "the " + noun + " name " + problem.substring(noun.length() + 1));
        }
    }

    private String tail(String rawPath) {
        return rawPath.startsWith(prefix) ? rawPath.substring(prefix.length()) : "";
    }

    /**
     * Decodes {@code %XX} escapes once, as UTF-8 ({@code +} stays a plus: this is a path, not a form).
     *
     * @throws Failure invalid_argument for a malformed escape or bytes that are not UTF-8
     */
    String decode(String raw) {
        if (raw.indexOf('%') < 0) {
            return raw;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c != '%') {
                byte[] utf8 = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                if (Character.isHighSurrogate(c) && i + 1 < raw.length()) {
                    utf8 = raw.substring(i, i + 2).getBytes(StandardCharsets.UTF_8);
                    i++;
                }
                bytes.writeBytes(utf8);
                continue;
            }
            int hi = i + 2 < raw.length() ? Character.digit(raw.charAt(i + 1), 16) : -1;
            int lo = hi < 0 ? -1 : Character.digit(raw.charAt(i + 2), 16);
            if (hi < 0 || lo < 0) {
                throw Failure.invalid(noun, "the " + noun + " name in the path has a malformed percent-escape at character "
                        + i + " ('" + raw.substring(i, Math.min(raw.length(), i + 3)) + "'); encode '%' as %25");
            }
            bytes.write(hi * 16 + lo);
            i += 2;
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray())).toString();
        } catch (CharacterCodingException e) {
            throw Failure.invalid(noun, "the " + noun + " name in the path is not UTF-8 once percent-decoded");
        }
    }
}

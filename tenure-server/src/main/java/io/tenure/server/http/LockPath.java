package io.tenure.server.http;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Lock names in paths. A name may contain {@code /} and any Unicode, so the lock routes are
 * wildcards and the name is taken from the raw (undecoded) path: {@code /v1/locks/jobs%2Fnightly}
 * and {@code /v1/locks/jobs/nightly} name the same lock. For a POST the last raw segment is the
 * action ({@code acquire}, {@code renew}, {@code release}); percent-encoding is decoded once, after
 * that split, so an encoded {@code %2F} never separates anything.
 */
final class LockPath {
    static final String PREFIX = "/v1/locks/";

    /** A lock name and, for a POST, the action after it. */
    record Target(String lock, String action) {}

    private LockPath() {}

    /** The lock a GET names: everything after {@code /v1/locks/}, decoded. */
    static String lockOf(String rawPath) {
        return decode(tail(rawPath));
    }

    /** The lock and action a POST names, or null when the path has no action segment. */
    static Target actionOf(String rawPath) {
        String tail = tail(rawPath);
        int slash = tail.lastIndexOf('/');
        if (slash <= 0) {
            return null;
        }
        return new Target(decode(tail.substring(0, slash)), tail.substring(slash + 1));
    }

    private static String tail(String rawPath) {
        return rawPath.startsWith(PREFIX) ? rawPath.substring(PREFIX.length()) : "";
    }

    /**
     * Decodes {@code %XX} escapes once, as UTF-8 ({@code +} stays a plus: this is a path, not a form).
     *
     * @throws Failure invalid_argument for a malformed escape or bytes that are not UTF-8
     */
    static String decode(String raw) {
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
                throw Failure.invalid("lock", "the lock name in the path has a malformed percent-escape at character "
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
            throw Failure.invalid("lock", "the lock name in the path is not UTF-8 once percent-decoded");
        }
    }
}

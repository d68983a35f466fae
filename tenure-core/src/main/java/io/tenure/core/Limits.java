package io.tenure.core;

import java.nio.charset.StandardCharsets;

/** The documented bounds on what a client may ask for; checked at the edge and again in apply. */
public final class Limits {
    /** A lock name is 1 to 1024 bytes of UTF-8. */
    public static final int MAX_KEY_BYTES = 1024;
    /** Metadata attached to a grant is at most 64 KiB. */
    public static final int MAX_METADATA_BYTES = 64 * 1024;
    /** A client id is at most 256 bytes of UTF-8. */
    public static final int MAX_CLIENT_ID_BYTES = 256;
    /** The shortest lease: one second, comfortably above a single member's commit latency. */
    public static final long MIN_TTL_MILLIS = 1_000;
    /** The longest lease: one day. A longer-lived holder should renew, not park a lock for days. */
    public static final long MAX_TTL_MILLIS = 24L * 60 * 60 * 1000;

    private Limits() {}

    /** @return null when valid, else a message naming the problem */
    public static String checkKey(String field, String key) {
        if (key == null || key.isEmpty()) {
            return field + " must not be empty";
        }
        if (!wellFormed(key)) {
            return field + " is not valid Unicode (an unpaired surrogate)";
        }
        int bytes = key.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_KEY_BYTES) {
            return field + " is " + bytes + " bytes, over the limit of " + MAX_KEY_BYTES;
        }
        return null;
    }

    public static String checkMetadata(String field, byte[] metadata) {
        if (metadata != null && metadata.length > MAX_METADATA_BYTES) {
            return field + " is " + metadata.length + " bytes, over the limit of " + MAX_METADATA_BYTES;
        }
        return null;
    }

    public static String checkTtl(String field, long ttlMillis) {
        if (ttlMillis < MIN_TTL_MILLIS || ttlMillis > MAX_TTL_MILLIS) {
            return field + " must be between " + MIN_TTL_MILLIS + " ms and " + MAX_TTL_MILLIS + " ms, got " + ttlMillis + " ms";
        }
        return null;
    }

    public static String checkClientId(String field, String clientId) {
        if (clientId != null && !wellFormed(clientId)) {
            return field + " is not valid Unicode (an unpaired surrogate)";
        }
        if (clientId != null && clientId.getBytes(StandardCharsets.UTF_8).length > MAX_CLIENT_ID_BYTES) {
            return field + " is over the limit of " + MAX_CLIENT_ID_BYTES + " bytes";
        }
        return null;
    }

    /** Whether every surrogate is paired, so the text has a UTF-8 form and survives a round trip. */
    static boolean wellFormed(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 == s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
                    return false;
                }
                i++;
            } else if (Character.isLowSurrogate(c)) {
                return false;
            }
        }
        return true;
    }
}

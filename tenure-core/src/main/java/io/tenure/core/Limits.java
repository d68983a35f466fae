package io.tenure.core;

import java.nio.charset.StandardCharsets;

/**
 * The documented bounds on what a client may ask for, in one place: the service layer checks a
 * request against them once, before anything is proposed, and apply checks again (a command from
 * the log is never trusted). The member's own configurable guards are {@code ServerLimits}.
 */
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
    /** Entries a list read returns when the request names no limit. */
    public static final int DEFAULT_LIST = 1_000;
    /** The most entries one list read may ask for. */
    public static final int MAX_LIST = 10_000;
    /** The most leases one keep-alive request may renew, or one batch grant. */
    public static final int MAX_BATCH = 10_000;

    /** The largest limit a semaphore may have. */
    public static final int MAX_SEMAPHORE_LIMIT = 1_000_000;

    private Limits() {}

    /** @return null when {@code limit} is 1 to {@link #MAX_SEMAPHORE_LIMIT} and {@code permits} 1 to {@code limit}, else a message */
    public static String checkPermits(int limit, int permits) {
        if (limit < 1 || limit > MAX_SEMAPHORE_LIMIT) {
            return "limit must be between 1 and " + MAX_SEMAPHORE_LIMIT + ", got " + limit;
        }
        if (permits < 1) {
            return "permits must be at least 1, got " + permits;
        }
        if (permits > limit) {
            return "permits must not exceed the limit: asked for " + permits + " of a semaphore whose limit is " + limit;
        }
        return null;
    }

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

    /** @return null when {@code limit} is 0 (the default) or a valid page size, else a message naming the problem */
    public static String checkListLimit(String field, int limit) {
        if (limit < 0 || limit > MAX_LIST) {
            return field + " must be between 0 (the default of " + DEFAULT_LIST + ") and " + MAX_LIST + ", got " + limit;
        }
        return null;
    }

    /** The page size a valid list limit asks for: {@link #DEFAULT_LIST} for 0. */
    public static int listLimit(int limit) {
        return limit == 0 ? DEFAULT_LIST : limit;
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

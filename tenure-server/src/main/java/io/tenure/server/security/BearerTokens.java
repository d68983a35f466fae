package io.tenure.server.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/**
 * Bearer tokens: 256 random bits, shown once to the user they are issued to ({@code tnr_} and
 * base64url), and kept in the replicated state as their SHA-256 only. A token is checked on every
 * call by hashing it and looking the hash up, so it costs microseconds, and a stolen snapshot
 * holds no usable token.
 */
public final class BearerTokens {
    static final String PREFIX = "tnr_";
    private static final SecureRandom RANDOM = new SecureRandom();

    private BearerTokens() {
    }

    /** A new token. */
    public static String create() {
        byte[] secret = new byte[32];
        RANDOM.nextBytes(secret);
        return PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
    }

    /** The SHA-256 of {@code token}, in hex: what the state keeps and looks tokens up by. */
    public static String hash(String token) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }
}

package io.tenure.server.security;

import io.tenure.server.RequestRejected;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/**
 * Users' passwords as the replicated state keeps them: PBKDF2-HMAC-SHA256 with a random salt,
 * written {@code pbkdf2-sha256$<iterations>$<salt>$<hash>} (base64). The member that receives a
 * password hashes it, so the password itself is never written to the log or a snapshot.
 *
 * <p>Hashing costs about 0.1 s of one core on purpose (a stolen snapshot must not give the
 * passwords up cheaply); it is paid when a user is added, changes password or authenticates,
 * never on an ordinary call, which shows a bearer token checked by its SHA-256 ({@link BearerTokens}).
 */
public final class Passwords {
    static final String SCHEME = "pbkdf2-sha256";
    /** OWASP's 2023 figure for PBKDF2-HMAC-SHA256 is 600,000; this is a fifth of it, for a 2-core member. */
    static final int ITERATIONS = 120_000;
    /** The longest password accepted, in characters. */
    public static final int MAX_CHARS = 1024;
    private static final SecureRandom RANDOM = new SecureRandom();

    private Passwords() {
    }

    /**
     * The stored form of {@code password}.
     *
     * @throws RequestRejected (INVALID_ARGUMENT, field {@code password}) for an empty or too long one
     */
    public static String hash(String password) {
        check(password);
        byte[] salt = new byte[16];
        RANDOM.nextBytes(salt);
        return SCHEME + "$" + ITERATIONS + "$" + Base64.getEncoder().encodeToString(salt) + "$"
                + Base64.getEncoder().encodeToString(derive(password, salt, ITERATIONS));
    }

    /** Whether {@code password} is the one {@code stored} was made from; compared in constant time. */
    public static boolean matches(String password, String stored) {
        if (password == null || stored == null) {
            return false;
        }
        String[] parts = stored.split("\\$");
        if (parts.length != 4 || !parts[0].equals(SCHEME)) {
            return false;
        }
        try {
            int iterations = Integer.parseInt(parts[1]);
            byte[] salt = Base64.getDecoder().decode(parts[2]);
            byte[] expected = Base64.getDecoder().decode(parts[3]);
            return MessageDigest.isEqual(expected, derive(password, salt, iterations));
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    static void check(String password) {
        if (password == null || password.isEmpty()) {
            throw RequestRejected.invalid("password", "password must not be empty");
        }
        if (password.length() > MAX_CHARS) {
            throw RequestRejected.invalid("password", "password must be at most " + MAX_CHARS + " characters, got " + password.length());
        }
    }

    private static byte[] derive(String password, byte[] salt, int iterations) {
        try {
            PBEKeySpec spec = new PBEKeySpec(password.toCharArray(), salt, iterations, 256);
            return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec).getEncoded();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK has no PBKDF2WithHmacSHA256: " + e.getMessage(), e);
        }
    }

    /** For tests and logs: never the password, only whether a string looks like a stored hash. */
    static boolean isHash(String stored) {
        return stored != null && stored.startsWith(SCHEME + "$") && stored.getBytes(StandardCharsets.US_ASCII).length > 20;
    }
}

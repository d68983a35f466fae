package io.tenure.core.access;

/**
 * Issues user {@code user} the token whose hash is {@code tokenHash}, working until
 * {@code expiresAtMillis} on the issuing member's wall clock (0: never). The issuing member
 * chose the token and its expiry: apply reads no clock.
 */
public record TokenIssue(String user, String tokenHash, long expiresAtMillis) implements AccessCommand {}

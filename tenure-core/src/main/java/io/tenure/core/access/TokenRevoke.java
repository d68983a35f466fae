package io.tenure.core.access;

/** Revokes user {@code user}'s token whose hash is {@code tokenHash}. */
public record TokenRevoke(String user, String tokenHash) implements AccessCommand {}

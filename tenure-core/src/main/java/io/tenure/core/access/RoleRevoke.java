package io.tenure.core.access;

/** Revokes role {@code role}'s permission on {@code kind} and {@code prefix}. */
public record RoleRevoke(String role, String kind, String prefix) implements AccessCommand {}

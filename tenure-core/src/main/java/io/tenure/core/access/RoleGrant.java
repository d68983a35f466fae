package io.tenure.core.access;

/** Grants role {@code role} {@code level} on {@code kind}'s names starting with {@code prefix}; replaces the level of the same kind and prefix. */
public record RoleGrant(String role, String kind, String prefix, Level level) implements AccessCommand {}

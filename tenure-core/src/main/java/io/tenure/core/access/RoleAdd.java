package io.tenure.core.access;

/** Adds role {@code name}, with no permission. */
public record RoleAdd(String name) implements AccessCommand {}

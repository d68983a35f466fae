package io.tenure.core.access;

/** Deletes role {@code name} and takes it from every user. */
public record RoleDelete(String name) implements AccessCommand {}

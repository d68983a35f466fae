package io.tenure.core.access;

/** Gives user {@code user} role {@code role}. */
public record UserGrantRole(String user, String role) implements AccessCommand {}

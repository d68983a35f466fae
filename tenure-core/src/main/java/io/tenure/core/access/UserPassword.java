package io.tenure.core.access;

/** Replaces user {@code name}'s password; every token issued to it stops working. */
public record UserPassword(String name, String passwordHash) implements AccessCommand {}

package io.tenure.core.access;

/** Adds user {@code name} with the stored form of its password. */
public record UserAdd(String name, String passwordHash) implements AccessCommand {}

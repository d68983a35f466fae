package io.tenure.core.access;

/** Deletes user {@code name}, and its tokens with it. */
public record UserDelete(String name) implements AccessCommand {}

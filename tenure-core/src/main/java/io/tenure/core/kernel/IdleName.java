package io.tenure.core.kernel;

/** A name of {@code kind} with no holder and no waiter since log position {@code since}. */
public record IdleName(String kind, String name, long since) {}

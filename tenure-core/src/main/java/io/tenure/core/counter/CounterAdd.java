package io.tenure.core.counter;

/**
 * Adds {@code delta} (negative to decrement) to counter {@code key}, which reads 0 when it does
 * not exist. Refused, changing nothing, when the sum leaves the signed 64-bit range.
 */
public record CounterAdd(String key, long delta, long requestId) implements CounterCommand {}

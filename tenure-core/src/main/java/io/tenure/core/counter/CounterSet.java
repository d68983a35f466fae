package io.tenure.core.counter;

/** Sets counter {@code key} to {@code value}, whatever it was. */
public record CounterSet(String key, long value, long requestId) implements CounterCommand {}

package io.tenure.core.counter;

/**
 * Sets counter {@code key} to {@code value} if it is {@code expected} now (a counter that does not
 * exist is 0); otherwise changes nothing and answers the value it has.
 */
public record CounterCompareAndSet(String key, long expected, long value, long requestId) implements CounterCommand {}

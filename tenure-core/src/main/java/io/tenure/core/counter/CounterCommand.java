package io.tenure.core.counter;

import io.tenure.core.kernel.Command;

/** The commands of counters; {@link CounterTable} applies them. */
public sealed interface CounterCommand extends Command permits CounterAdd, CounterSet, CounterCompareAndSet {

    String key();

    /** Names one change of its client, the same on every retry of it (0 = none): a retry is answered as the first copy was. */
    long requestId();
}

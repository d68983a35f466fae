package io.tenure.it;

import org.junit.jupiter.api.Test;


import static org.assertj.core.api.Assertions.assertThat;

/** {@code tenure counter incr|decr|get|set|cas} end to end, against a real server process: the value printed alone, and the exit codes. */
class CounterCommandTest extends CommandProcessTest {

    private Run tenureCounter(String id, String... args) throws Exception {
        return tenure(id, "counter", args);
    }

    @Test
    void eachCommandPrintsTheValueAloneAndACasThatMissesExitsOne() throws Exception {
        assertThat(tenureCounter("get0", "get", "jobs/seq")).isEqualTo(new Run(0, "0\n", ""));
        assertThat(tenureCounter("incr", "incr", "jobs/seq")).isEqualTo(new Run(0, "1\n", ""));
        assertThat(tenureCounter("incr5", "incr", "jobs/seq", "5")).isEqualTo(new Run(0, "6\n", ""));
        assertThat(tenureCounter("incrNeg", "incr", "jobs/seq", "-10").out()).isEqualTo("-4\n");
        assertThat(tenureCounter("decr", "decr", "jobs/seq", "2").out()).isEqualTo("-6\n");
        assertThat(tenureCounter("set", "set", "jobs/seq", "40")).isEqualTo(new Run(0, "40\n", ""));
        assertThat(client.counter("jobs/seq").get()).isEqualTo(40);

        Run missed = tenureCounter("casMiss", "cas", "jobs/seq", "7", "8");
        assertThat(missed.exit()).isEqualTo(1);
        assertThat(missed.out()).isEmpty();
        assertThat(missed.err()).contains("'jobs/seq' is 40, not 7; nothing changed");
        assertThat(tenureCounter("cas", "cas", "jobs/seq", "40", "41")).isEqualTo(new Run(0, "41\n", ""));
    }

    @Test
    void anOverflowExitsOneAndANonNumericDeltaIsAUsageError() throws Exception {
        client.counter("jobs/full").set(Long.MAX_VALUE);
        Run over = tenureCounter("over", "incr", "jobs/full");
        assertThat(over.exit()).isEqualTo(1);
        assertThat(over.err()).contains("signed 64-bit");
        assertThat(client.counter("jobs/full").get()).isEqualTo(Long.MAX_VALUE);

        Run usage = tenureCounter("usage", "incr", "jobs/full", "five");
        assertThat(usage.exit()).isEqualTo(2);
        assertThat(usage.err()).contains("DELTA").contains("five");
    }
}

package io.tenure.it;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code tenure list push|pop|len} end to end, against a real server process: the item printed alone, and the exit codes. */
class ListCommandTest extends CommandProcessTest {

    @Test
    void itemsComeOutInOrderAndAnEmptyListExitsFour() throws Exception {
        assertThat(tenure("push1", "list", "push", "jobs", "first")).isEqualTo(new Run(0, "1\n", ""));
        assertThat(tenure("push2", "list", "push", "jobs", "second").out()).isEqualTo("2\n");
        assertThat(tenure("push0", "list", "push", "jobs", "urgent", "--left").out()).isEqualTo("3\n");
        assertThat(tenure("len", "list", "len", "jobs")).isEqualTo(new Run(0, "3\n", ""));
        assertThat(tenure("pop1", "list", "pop", "jobs")).isEqualTo(new Run(0, "urgent\n", ""));
        assertThat(tenure("pop2", "list", "pop", "jobs", "--right").out()).isEqualTo("second\n");
        assertThat(tenure("pop3", "list", "pop", "jobs", "--timeout", "5s").out()).isEqualTo("first\n");

        Run empty = tenure("empty", "list", "pop", "jobs", "--timeout", "300ms");
        assertThat(empty.exit()).isEqualTo(4);
        assertThat(empty.out()).isEmpty();
        assertThat(empty.err()).contains("no item in 'jobs' within 300 ms");
        assertThat(client.queue("jobs").range(0, -1).waitingLeases()).as("the wait withdrawn").isEmpty();
    }
}

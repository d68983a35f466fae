package io.tenure.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Writes deferred while an entry is answered run once at its end, in order; outside one they run now. */
class AnswerBatchTest {
    @Test
    void writesDeferredInABatchRunAtItsEndInOrderAndOnlyOnce() {
        List<String> done = new ArrayList<>();
        AnswerBatch.run(() -> {
            assertThat(AnswerBatch.defer(() -> done.add("first"))).isTrue();
            AnswerBatch.run(() -> assertThat(AnswerBatch.defer(() -> done.add("nested"))).isTrue());
            assertThat(AnswerBatch.defer(() -> done.add("last"))).isTrue();
            done.add("answered");
        });
        assertThat(done).containsExactly("answered", "first", "nested", "last");

        AnswerBatch.run(() -> done.add("next entry"));
        assertThat(done).as("the writes of the first batch ran once").containsExactly("answered", "first", "nested", "last", "next entry");
    }

    @Test
    void withoutABatchTheCallerWritesNow() {
        assertThat(AnswerBatch.defer(() -> { })).isFalse();
    }

    @Test
    void aWriteThatFailsLeavesNothingForTheNextBatch() {
        List<String> done = new ArrayList<>();
        try {
            AnswerBatch.run(() -> {
                AnswerBatch.defer(() -> {
                    throw new IllegalStateException("stream closed");
                });
            });
        } catch (IllegalStateException expected) {
            done.add("failed");
        }
        AnswerBatch.run(() -> AnswerBatch.defer(() -> done.add("second")));
        assertThat(done).containsExactly("failed", "second");
    }
}

package io.tenure.server;

import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;

import static org.assertj.core.api.Assertions.assertThat;

/** A stream's paced queue: order, batches, a transport that is not ready, the limit, and closing. */
class PacedQueueTest {
    /** Runs queued drains only when told, so the test decides when delivery happens. */
    private final ArrayDeque<Runnable> drains = new ArrayDeque<>();
    private final Executor delivery = drains::add;
    private final List<List<Integer>> sent = new ArrayList<>();
    private boolean ready = true;

    private PacedQueue<Integer> queue(int limit) {
        return new PacedQueue<>(limit, delivery, new PacedQueue.Transport<>() {
            @Override
            public void send(List<Integer> batch) {
                sent.add(List.copyOf(batch));
            }

            @Override
            public boolean ready() {
                return ready;
            }
        });
    }

    private void runDrains() {
        while (!drains.isEmpty()) {
            drains.poll().run();
        }
    }

    @Test
    void itemsGoInOrderInBatchesWithOneDrainAtATime() {
        PacedQueue<Integer> q = queue(1_000);
        for (int i = 0; i < 300; i++) {
            assertThat(q.offer(i)).isTrue();
        }
        assertThat(drains).as("one drain scheduled for all of them").hasSize(1);
        runDrains();
        assertThat(sent).hasSize(2);
        assertThat(sent.get(0)).hasSize(256).startsWith(0, 1, 2);
        assertThat(sent.stream().flatMap(List::stream).toList()).isEqualTo(java.util.stream.IntStream.range(0, 300).boxed().toList());
    }

    @Test
    void aTransportThatIsNotReadyHoldsItemsUntilResumed() {
        PacedQueue<Integer> q = queue(1_000);
        ready = false;
        q.offer(1);
        q.offer(2);
        runDrains();
        assertThat(sent).isEmpty();
        ready = true;
        q.resume();
        runDrains();
        assertThat(sent).containsExactly(List.of(1, 2));
    }

    @Test
    void overTheLimitTheItemIsRefusedAndWhatWaitedDropped() {
        PacedQueue<Integer> q = queue(3);
        ready = false;
        assertThat(q.offer(1)).isTrue();
        assertThat(q.offer(2)).isTrue();
        assertThat(q.offer(3)).isTrue();
        assertThat(q.offer(4)).as("the fourth is one over").isFalse();
        ready = true;
        q.resume();
        runDrains();
        assertThat(sent).as("nothing left to send").isEmpty();
    }

    @Test
    void aClosedQueueSendsNothingMore() {
        PacedQueue<Integer> q = queue(10);
        q.add(1);
        q.close();
        q.resume();
        runDrains();
        assertThat(q.offer(2)).isTrue();
        runDrains();
        assertThat(sent).isEmpty();
        assertThat(q.isClosed()).isTrue();
    }
}

package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.TenureQueue;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A replicated list through the JDK's BlockingQueue interface, against one real member. */
class QueueViewTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    @Test
    void itQueuesAsABlockingQueueDoes() throws Exception {
        BlockingQueue<byte[]> q = tenure.client().queue("view/jobs").asBlockingQueue();
        assertThat(q.isEmpty()).isTrue();
        assertThat(q.peek()).isNull();
        assertThat(q.poll()).isNull();
        assertThat(q.offer(bytes("a"))).isTrue();
        q.put(bytes("b"));
        q.add(bytes("c"));
        assertThat(q.size()).isEqualTo(3);
        assertThat(q.remainingCapacity()).isEqualTo(TenureQueue.MAX_LENGTH - 3);
        assertThat(text(q.peek())).isEqualTo("a");
        List<String> seen = new ArrayList<>();
        q.iterator().forEachRemaining(b -> seen.add(text(b)));
        assertThat(seen).containsExactly("a", "b", "c");
        assertThat(text(q.take())).isEqualTo("a");
        List<byte[]> drained = new ArrayList<>();
        assertThat(q.drainTo(drained, 1)).isOne();
        assertThat(text(drained.get(0))).isEqualTo("b");
        assertThat(q.drainTo(drained)).isOne();
        assertThat(q.poll(50, TimeUnit.MILLISECONDS)).as("empty: the wait times out").isNull();
        assertThatThrownBy(() -> q.remove(bytes("x"))).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void aTakeWaitsForTheNextPushAndAnInterruptWithdrawsIt() throws Exception {
        BlockingQueue<byte[]> q = tenure.client().queue("view/wait").asBlockingQueue();
        AtomicReference<String> taken = new AtomicReference<>();
        Thread consumer = new Thread(() -> {
            try {
                taken.set(text(q.take()));
            } catch (InterruptedException e) {
                taken.set("interrupted");
            }
        });
        consumer.start();
        TenureQueue queue = tenure.client().queue("view/wait");
        Await.until("the take waits", Duration.ofSeconds(20), () -> !queue.range(0, 0).waitingLeases().isEmpty());
        q.offer(bytes("job"));
        consumer.join(20_000);
        assertThat(taken.get()).isEqualTo("job");

        Thread interrupted = new Thread(() -> {
            try {
                taken.set(text(q.take()));
            } catch (InterruptedException e) {
                taken.set("interrupted");
            }
        });
        interrupted.start();
        Await.until("the second take waits", Duration.ofSeconds(20), () -> !queue.range(0, 0).waitingLeases().isEmpty());
        interrupted.interrupt();
        interrupted.join(20_000);
        assertThat(taken.get()).isEqualTo("interrupted");
        Await.until("the interrupted wait is withdrawn", Duration.ofSeconds(20), () -> queue.range(0, 0).waitingLeases().isEmpty());
        q.offer(bytes("kept"));
        assertThat(text(q.poll())).as("the item was not handed to the withdrawn wait").isEqualTo("kept");
    }
}

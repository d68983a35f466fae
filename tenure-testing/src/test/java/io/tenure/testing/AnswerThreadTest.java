package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureQueue;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Which thread answers: a future of an {@code ...Async} call completes on an executor (the
 * client's callbacks pool for the session stream, gRPC's default executor for a unary call), never
 * on a transport thread (Netty's event loop), so that a callback which blocks, here on another call
 * of the same client, stalls no other answer. The blocking forms take their answer on the
 * transport thread; their results are the other suites' subject.
 */
class AnswerThreadTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    /** Netty's event loops, gRPC's transport threads, are all of this class; the executors' threads are not. */
    private static boolean isTransportThread(Thread thread) {
        return thread instanceof io.grpc.netty.shaded.io.netty.util.concurrent.FastThreadLocalThread;
    }

    /**
     * A callback that makes a blocking call of the same client and answers the thread it ran on.
     * On the transport thread the inner call's answer could not be read and the outer future would
     * not complete within the test's deadline.
     */
    private static <T> CompletableFuture<Thread> blockingCallback(TenureClient client, CompletableFuture<T> answered, String probeKey) {
        return answered.thenApply(value -> {
            client.kv().put(probeKey, "probe");
            return Thread.currentThread();
        });
    }

    @Test
    void aWaitAnsweredLaterCompletesOffTheTransportThreadWhereABlockingCallStillGetsItsAnswer() throws Exception {
        TenureClient client = tenure.client();
        TenureQueue jobs = client.queue("answer-thread/jobs");
        CompletableFuture<byte[]> taken = jobs.takeAsync();
        // The list is empty, so nothing can complete the take before its callback is attached.
        CompletableFuture<Thread> ranOn = blockingCallback(client, taken, "answer-thread/after-take");
        Await.until("the take waits", Duration.ofSeconds(10), () -> jobs.range(0, 0).waitingLeases().size() == 1);
        try (TenureClient producer = tenure.cluster().newClient()) {
            producer.queue("answer-thread/jobs").offer("job".getBytes(StandardCharsets.UTF_8));
        }
        Thread thread = ranOn.get(20, TimeUnit.SECONDS);
        assertThat(thread).isNotSameAs(Thread.currentThread());
        assertThat(isTransportThread(thread)).as("%s is a transport thread", thread.getName()).isFalse();
        assertThat(new String(taken.get(), StandardCharsets.UTF_8)).isEqualTo("job");
        assertThat(client.kv().get("answer-thread/after-take")).isPresent();
    }

    @Test
    void aLockGrantedLaterCompletesOffTheTransportThread() throws Exception {
        TenureClient waiter = tenure.client();
        try (TenureClient holder = tenure.cluster().newClient()) {
            LockHandle held = holder.lock("answer-thread/lock").acquire();
            CompletableFuture<LockHandle> granted = waiter.lock("answer-thread/lock").acquireAsync();
            // Held by the other client: the grant can only come after the release below.
            CompletableFuture<Thread> ranOn = blockingCallback(waiter, granted, "answer-thread/after-grant");
            Await.until("the acquire waits", Duration.ofSeconds(10),
                    () -> waiter.describe("answer-thread/lock").waiters().size() == 1);
            held.release();
            Thread thread = ranOn.get(20, TimeUnit.SECONDS);
            assertThat(thread).isNotSameAs(Thread.currentThread());
            assertThat(isTransportThread(thread)).as("%s is a transport thread", thread.getName()).isFalse();
            LockHandle mine = granted.get();
            assertThat(mine.fencingToken()).isGreaterThan(held.fencingToken());
            mine.release();
        }
    }

    @Test
    void oneShotCallsCompleteOffTheTransportThread() throws Exception {
        TenureClient client = tenure.client();
        java.util.List<Supplier<CompletableFuture<?>>> calls = java.util.List.of(
                () -> client.kv().putAsync("answer-thread/k", "v".getBytes(StandardCharsets.UTF_8)),
                () -> client.kv().getAsync("answer-thread/k"),
                () -> client.kv().swapAsync("answer-thread/k", 1, "w".getBytes(StandardCharsets.UTF_8)),
                () -> client.kv().putIfAbsentAsync("answer-thread/new", "n".getBytes(StandardCharsets.UTF_8)),
                () -> client.kv().listAsync("answer-thread/", "", 10),
                () -> client.kv().txn().ifVersion("answer-thread/k", io.tenure.client.KvTransaction.Relation.GREATER, 0)
                        .thenPut("answer-thread/t", "t").commitAsync(),
                () -> client.kv().deleteAsync("answer-thread/k"),
                () -> client.counter("answer-thread/c").addAndGetAsync(2),
                () -> client.counter("answer-thread/c").setAsync(7),
                () -> client.counter("answer-thread/c").compareAndSetAsync(7, 8),
                () -> client.counter("answer-thread/c").getAsync(),
                () -> client.queue("answer-thread/q").pushAsync("i".getBytes(StandardCharsets.UTF_8), false),
                () -> client.queue("answer-thread/q").rangeAsync(0, -1),
                () -> client.topic().publishAsync("answer-thread/s", "hello".getBytes(StandardCharsets.UTF_8)));
        int answeredElsewhere = 0;
        for (int i = 0; i < calls.size(); i++) {
            // Attached at once, the callback runs where the answer arrives, or on this thread when
            // the answer beat the attachment; it must never run on the transport thread.
            Thread ranOn = blockingCallback(client, calls.get(i).get(), "answer-thread/probe-" + i).get(20, TimeUnit.SECONDS);
            assertThat(isTransportThread(ranOn)).as("call %d ran its callback on transport thread %s", i, ranOn.getName()).isFalse();
            answeredElsewhere += ranOn != Thread.currentThread() ? 1 : 0;
        }
        // An answer needs a round trip and, for a change, an fsync; the attachment takes microseconds.
        assertThat(answeredElsewhere).as("calls whose callback ran where the answer arrived").isGreaterThan(calls.size() / 2);
    }
}

package io.tenure.client.fence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class InMemoryFenceGuardTest {
    private static final String INVOICES = "invoices";

    @Test
    void acceptsIncreasingTokensAndRemembersTheHighest() {
        InMemoryFenceGuard guard = InMemoryFenceGuard.lenient();
        assertThat(guard.highestAccepted(INVOICES)).isZero();

        guard.check(INVOICES, 458752);
        assertThat(guard.highestAccepted(INVOICES)).isEqualTo(458752);
        assertThat(guard.tryAccept(INVOICES, 524288)).isTrue();
        assertThat(guard.highestAccepted(INVOICES)).isEqualTo(524288);
    }

    @Test
    void lenientAcceptsTheSameTokenAgain() {
        InMemoryFenceGuard guard = InMemoryFenceGuard.lenient();
        guard.check(INVOICES, 7);

        guard.check(INVOICES, 7);
        assertThat(guard.tryAccept(INVOICES, 7)).isTrue();
        assertThat(guard.highestAccepted(INVOICES)).isEqualTo(7);
        assertThat(guard.mode()).isEqualTo(FenceGuard.Mode.AT_LEAST);
    }

    @Test
    void strictRefusesTheSameTokenAgain() {
        InMemoryFenceGuard guard = InMemoryFenceGuard.strict();
        guard.check(INVOICES, 7);

        assertThatThrownBy(() -> guard.check(INVOICES, 7))
                .isInstanceOfSatisfying(StaleTokenException.class, stale -> {
                    assertThat(stale.offeredToken()).isEqualTo(7);
                    assertThat(stale.highestAccepted()).isEqualTo(7);
                })
                .hasMessageContaining("'invoices'").hasMessageContaining("7").hasMessageContaining("only once");
        assertThat(guard.tryAccept(INVOICES, 7)).isFalse();
        assertThat(guard.tryAccept(INVOICES, 8)).isTrue();
        assertThat(InMemoryFenceGuard.of(FenceGuard.Mode.STRICTLY_GREATER).mode()).isEqualTo(guard.mode());
    }

    @Test
    void refusesALowerTokenNamingResourceAndBothTokens() {
        for (InMemoryFenceGuard guard : List.of(InMemoryFenceGuard.lenient(), InMemoryFenceGuard.strict())) {
            guard.check(INVOICES, 524288);

            assertThatThrownBy(() -> guard.check(INVOICES, 458752))
                    .isInstanceOfSatisfying(StaleTokenException.class, stale -> {
                        assertThat(stale.resource()).isEqualTo(INVOICES);
                        assertThat(stale.offeredToken()).isEqualTo(458752);
                        assertThat(stale.highestAccepted()).isEqualTo(524288);
                    })
                    .hasMessage("resource 'invoices' refused fencing token 458752: the highest accepted token is 524288");
            assertThat(guard.tryAccept(INVOICES, 1)).isFalse();
            assertThat(guard.highestAccepted(INVOICES)).isEqualTo(524288);
        }
    }

    @Test
    void aRefusedWriteDoesNotRunAndAFailedWriteLeavesTheTokenUnaccepted() {
        InMemoryFenceGuard guard = InMemoryFenceGuard.lenient();
        AtomicReference<String> invoice = new AtomicReference<>("none");
        guard.write(INVOICES, 20, () -> invoice.set("from 20"));

        assertThatThrownBy(() -> guard.write(INVOICES, 10, () -> invoice.set("from 10")))
                .isInstanceOf(StaleTokenException.class);
        assertThat(invoice).hasValue("from 20");

        assertThatThrownBy(() -> guard.write(INVOICES, 30, () -> {
            throw new IllegalStateException("disk full");
        })).isInstanceOf(IllegalStateException.class).hasMessage("disk full");
        assertThat(guard.highestAccepted(INVOICES)).isEqualTo(20);
        guard.write(INVOICES, 25, () -> invoice.set("from 25"));
        assertThat(invoice).hasValue("from 25");
    }

    @Test
    void resourcesAreFencedIndependently() {
        InMemoryFenceGuard guard = InMemoryFenceGuard.lenient();
        guard.check("invoices", 100);

        guard.check("payroll", 5);
        assertThat(guard.highestAccepted("payroll")).isEqualTo(5);
        assertThat(guard.highestAccepted("invoices")).isEqualTo(100);
        assertThat(guard.highestAccepted("reports")).isZero();
        assertThatThrownBy(() -> guard.check("payroll", 4)).isInstanceOf(StaleTokenException.class);
        guard.check("invoices", 100);
    }

    @Test
    void badArgumentsAreRefusedBeforeAnythingIsStored() {
        InMemoryFenceGuard guard = InMemoryFenceGuard.lenient();

        assertThatThrownBy(() -> guard.check(null, 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("resource");
        assertThatThrownBy(() -> guard.check("  ", 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("resource");
        assertThatThrownBy(() -> guard.tryAccept("", 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("resource");
        assertThatThrownBy(() -> guard.highestAccepted(null)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("resource");
        assertThatThrownBy(() -> guard.check(INVOICES, 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("token");
        assertThatThrownBy(() -> guard.tryAccept(INVOICES, -5)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("token").hasMessageContaining("-5");
        assertThatThrownBy(() -> guard.write(INVOICES, Long.MIN_VALUE, () -> { })).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> guard.write(INVOICES, 1, null)).isInstanceOf(NullPointerException.class).hasMessageContaining("write");
        assertThatThrownBy(() -> InMemoryFenceGuard.of(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("mode");

        assertThat(guard.highestAccepted(INVOICES)).isZero();
        assertThat(guard).hasToString("InMemoryFenceGuard{mode=AT_LEAST, resources=0}");
    }

    @Test
    void concurrentHoldersNeverMakeAResourceGoBackLenient() throws Exception {
        concurrentHoldersNeverMakeAResourceGoBack(InMemoryFenceGuard.lenient());
    }

    @Test
    void concurrentHoldersNeverMakeAResourceGoBackStrict() throws Exception {
        concurrentHoldersNeverMakeAResourceGoBack(InMemoryFenceGuard.strict());
    }

    /**
     * Threads offer tokens to a few resources at once: a new grant's token now and then, otherwise
     * the latest or a slightly older one (a holder writing again, or one that was superseded).
     * Each accepted write appends its token to the resource's history from inside the fence,
     * yielding the processor midway, so the history is the order of acceptance: it must never go
     * down (strictly up in strict mode), the highest offered token must win, and every offer is
     * either accepted or refused as stale.
     */
    private static void concurrentHoldersNeverMakeAResourceGoBack(InMemoryFenceGuard guard) throws Exception {
        int threads = 8;
        int offersPerThread = 5_000;
        List<String> resources = List.of("invoices", "payroll", "reports");
        Map<String, List<Long>> histories = new ConcurrentHashMap<>();
        Map<String, AtomicLong> grants = new ConcurrentHashMap<>();
        Map<String, AtomicLong> highestOffered = new ConcurrentHashMap<>();
        for (String resource : resources) {
            histories.put(resource, Collections.synchronizedList(new ArrayList<>()));
            grants.put(resource, new AtomicLong());
            highestOffered.put(resource, new AtomicLong());
        }
        AtomicInteger accepted = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> holders = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Random random = new Random(42 + t);
                holders.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < offersPerThread; i++) {
                        String resource = resources.get(random.nextInt(resources.size()));
                        AtomicLong granted = grants.get(resource);
                        long token = random.nextInt(4) == 0
                                ? granted.incrementAndGet()
                                : Math.max(1, granted.get() - random.nextInt(3));
                        highestOffered.get(resource).accumulateAndGet(token, Math::max);
                        List<Long> history = histories.get(resource);
                        try {
                            guard.write(resource, token, () -> {
                                Thread.yield();
                                history.add(token);
                            });
                            accepted.incrementAndGet();
                        } catch (StaleTokenException stale) {
                            assertThat(stale.highestAccepted()).isGreaterThanOrEqualTo(token);
                            refused.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> holder : holders) {
                holder.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }

        assertThat(accepted.get() + refused.get()).isEqualTo(threads * offersPerThread);
        assertThat(refused.get()).as("stale offers were refused").isPositive();
        assertThat(histories.values().stream().mapToInt(List::size).sum()).isEqualTo(accepted.get());
        for (String resource : resources) {
            List<Long> history = List.copyOf(histories.get(resource));
            assertThat(history).as(resource).isNotEmpty();
            for (int i = 1; i < history.size(); i++) {
                if (guard.mode() == FenceGuard.Mode.AT_LEAST) {
                    assertThat(history.get(i)).as("%s accepted #%d", resource, i).isGreaterThanOrEqualTo(history.get(i - 1));
                } else {
                    assertThat(history.get(i)).as("%s accepted #%d", resource, i).isGreaterThan(history.get(i - 1));
                }
            }
            assertThat(guard.highestAccepted(resource)).isEqualTo(highestOffered.get(resource).get())
                    .isEqualTo(history.get(history.size() - 1));
        }
    }
}

package io.tenure.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.LeaseLostException;
import io.tenure.client.TenureClient;
import io.tenure.testing.Await;
import io.tenure.testing.TenureExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The registry against one real member, as two applications (two clients) use it. */
class TenureLockRegistryTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    @Test
    void twoRegistriesExcludeEachOtherAndTokensGrowOnEveryHandOff() throws Exception {
        TenureLockRegistry first = new TenureLockRegistry(tenure.cluster().newClient());
        TenureLockRegistry second = new TenureLockRegistry(tenure.cluster().newClient());
        TenureLockRegistry[] registries = {first, second, first, second};
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        ExecutorService workers = Executors.newFixedThreadPool(registries.length);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (TenureLockRegistry registry : registries) {
                done.add(workers.submit(() -> {
                    for (int i = 0; i < 8; i++) {
                        RegistryLock lock = registry.obtain("billing/close");
                        lock.lock();
                        try {
                            if (inside.incrementAndGet() > 1) {
                                overlaps.incrementAndGet();
                            }
                            tokens.add(lock.fencingToken());
                            inside.decrementAndGet();
                        } finally {
                            lock.unlock();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            workers.shutdownNow();
        }
        assertThat(overlaps).as("two holders at once").hasValue(0);
        assertThat(tokens).hasSize(32);
        for (int i = 1; i < tokens.size(); i++) {
            // A thread re-locking in the same JVM gets a new grant too: the last unlock released it.
            assertThat(tokens.get(i)).as("token %d after %d", i, i - 1).isGreaterThan(tokens.get(i - 1));
        }
        assertThat(tenure.client().describe("spring/billing/close").held()).isFalse();
    }

    @Test
    void tryLockWaitsAtMostItsTimeAndLeavesNoWaiter() throws Exception {
        TenureLockRegistry holderRegistry = new TenureLockRegistry(tenure.cluster().newClient());
        TenureLockRegistry otherRegistry = new TenureLockRegistry(tenure.cluster().newClient(), "jobs/");
        RegistryLock held = holderRegistry.obtain("nightly");
        assertThat(held.name()).isEqualTo("spring/nightly");
        held.lock();
        RegistryLock other = new TenureLockRegistry(tenure.cluster().newClient()).obtain("nightly");
        assertThat(other.tryLock()).isFalse();
        long start = System.nanoTime();
        assertThat(other.tryLock(200, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
        assertThat(tenure.client().describe("spring/nightly").waiters()).as("the timed-out wait was withdrawn").isEmpty();
        assertThat(otherRegistry.obtain("nightly").tryLock()).as("another prefix is another lock").isTrue();
        otherRegistry.obtain("nightly").unlock();

        CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return other.tryLock(WAIT.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Await.until("the other registry waits", WAIT, () -> tenure.client().describe("spring/nightly").waiters().size() == 1);
        long token = held.fencingToken();
        held.unlock();
        assertThat(waiting.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(tenure.client().describe("spring/nightly").fencingToken()).isGreaterThan(token);
    }

    @Test
    void withinOneJvmTheLockBelongsToAThread() throws Exception {
        TenureLockRegistry registry = new TenureLockRegistry(tenure.cluster().newClient());
        RegistryLock lock = registry.obtain("reports");
        lock.lock();
        lock.lock();
        long token = lock.fencingToken();
        assertThat(registry.obtain("reports").fencingToken()).as("every lock of a key is the same lock").isEqualTo(token);

        CompletableFuture<Boolean> otherThread = CompletableFuture.supplyAsync(() -> registry.obtain("reports").tryLock());
        assertThat(otherThread.get(WAIT.toSeconds(), TimeUnit.SECONDS)).as("held by another thread of this JVM").isFalse();
        assertThatThrownBy(() -> CompletableFuture.runAsync(lock::unlock).join())
                .hasCauseInstanceOf(IllegalMonitorStateException.class).hasMessageContaining("'spring/reports' is not held by the current thread");
        assertThatThrownBy(() -> CompletableFuture.supplyAsync(lock::fencingToken).join())
                .hasCauseInstanceOf(IllegalMonitorStateException.class);

        lock.unlock();
        assertThat(tenure.client().describe("spring/reports").held()).as("one hold left").isTrue();
        lock.unlock();
        assertThat(tenure.client().describe("spring/reports").held()).isFalse();
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
        assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void executeLockedReachesTheFencingToken() throws Exception {
        TenureLockRegistry registry = new TenureLockRegistry(tenure.cluster().newClient());
        long token = registry.executeLocked("ledger", () -> registry.obtain("ledger").fencingToken());
        assertThat(token).isPositive();
        long later = registry.executeLocked("ledger", Duration.ofSeconds(5), () -> registry.obtain("ledger").fencingToken());
        assertThat(later).isGreaterThan(token);
    }

    @Test
    void expiryForgetsOnlyLocksUnusedForTheAge() throws Exception {
        AtomicLong now = new AtomicLong();
        TenureLockRegistry registry = new TenureLockRegistry(tenure.cluster().newClient(), "spring/", now::get);
        RegistryLock held = registry.obtain("held");
        RegistryLock used = registry.obtain("used");
        held.lock();
        used.lock();
        used.unlock();
        assertThat(registry.size()).isEqualTo(2);

        now.addAndGet(TimeUnit.SECONDS.toNanos(4));
        registry.expireUnusedOlderThan(5_000);
        assertThat(registry.size()).as("both used within 5 s").isEqualTo(2);
        now.addAndGet(TimeUnit.SECONDS.toNanos(2));
        registry.expireUnusedOlderThan(5_000);
        assertThat(registry.size()).as("the unused one is forgotten, the held one kept").isOne();
        registry.expireUnusedOlderThan(0);
        assertThat(registry.size()).isOne();
        assertThat(held.fencingToken()).isPositive();

        assertThat(used.tryLock()).as("a lock obtained before still works").isTrue();
        assertThat(registry.size()).isEqualTo(2);
        used.unlock();
        held.unlock();
        registry.expireUnusedOlderThan(0);
        assertThat(registry.size()).isZero();
        assertThatThrownBy(() -> registry.expireUnusedOlderThan(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("age must be zero or more milliseconds, got -1");
    }

    @Test
    void aLostSessionLeaseIsReportedAndTheNextLockTakesANewOne() {
        TenureClient client = tenure.cluster().newClient();
        TenureLockRegistry registry = new TenureLockRegistry(client);
        RegistryLock lock = registry.obtain("lost");
        lock.lock();
        client.session().revoke(); // as if the lease had expired: the server lets the lock go
        assertThatThrownBy(lock::fencingToken).isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
        assertThat(lock.isHeldByCurrentThread()).as("let go all the same").isFalse();

        assertThat(lock.tryLock()).as("a new session lease").isTrue();
        assertThat(lock.handle().lease().id()).isEqualTo(client.session().id());
        lock.unlock();
    }

    @Test
    void badKeysAndArgumentsNameTheField() {
        TenureClient client = tenure.client();
        TenureLockRegistry registry = new TenureLockRegistry(client);
        assertThatThrownBy(() -> registry.obtain(null)).isInstanceOf(IllegalArgumentException.class).hasMessage("lockKey must not be null");
        assertThatThrownBy(() -> registry.obtain(" ")).isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("lockKey must not be blank");
        assertThatThrownBy(() -> registry.obtain("k".repeat(2000))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("lockKey 'kkkk").hasMessageContaining("over the limit of 1024");
        assertThatThrownBy(() -> new TenureLockRegistry(null)).isInstanceOf(IllegalArgumentException.class).hasMessage("client must not be null");
        assertThatThrownBy(() -> new TenureLockRegistry(client, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("prefix must not be null");
        assertThat(registry.obtain(42).name()).as("any key, as text").isEqualTo("spring/42");
    }
}

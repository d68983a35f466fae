package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.FencedLock;
import io.tenure.client.Lease;
import io.tenure.client.LeaseLostException;
import io.tenure.client.TenureClient;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A Tenure lock through the JDK's Lock interface ({@code TenureLock.asLock()}), against one real member. */
class FencedLockTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    @Test
    void itExcludesOtherClientsAndHandsOffWithALargerToken() throws Exception {
        TenureClient other = tenure.cluster().newClient();
        FencedLock mine = tenure.client().lock("view/handoff").asLock();
        FencedLock theirs = other.lock("view/handoff").asLock();

        mine.lock();
        long first = mine.fencingToken();
        assertThat(mine.isHeld()).isTrue();
        assertThat(theirs.tryLock()).as("held by another lease").isFalse();
        assertThat(theirs.tryLock(100, TimeUnit.MILLISECONDS)).as("the wait times out").isFalse();
        assertThat(tenure.client().describe("view/handoff").waiters()).as("the timed-out wait was withdrawn").isEmpty();
        assertThatThrownBy(theirs::fencingToken).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("'view/handoff' is not held by this view");

        CompletableFuture<Long> waiting = CompletableFuture.supplyAsync(() -> {
            theirs.lock();
            return theirs.fencingToken();
        });
        Await.until("the other client waits", WAIT, () -> tenure.client().describe("view/handoff").waiters().size() == 1);
        mine.unlock();
        long second = waiting.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(second).as("the waiter's grant is a later one").isGreaterThan(first);
        assertThat(mine.isHeld()).isFalse();
        assertThat(tenure.client().describe("view/handoff").fencingToken()).isEqualTo(second);
        theirs.unlock();
        assertThat(tenure.client().describe("view/handoff").held()).isFalse();
    }

    @Test
    void holdsAreCountedAndAnyThreadOfTheLeaseMayUnlock() throws Exception {
        FencedLock lock = tenure.client().lock("view/reentrant").asLock();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
        lock.lock();
        long token = lock.fencingToken();
        assertThat(lock.tryLock()).isTrue();
        assertThat(lock.tryLock(1, TimeUnit.SECONDS)).isTrue();
        assertThat(lock.holdCount()).isEqualTo(3);
        assertThat(lock.fencingToken()).as("one grant").isEqualTo(token);

        // Ownership is the lease, not the thread: another thread counts a hold down.
        CompletableFuture.runAsync(lock::unlock).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        lock.unlock();
        assertThat(lock.holdCount()).isOne();
        assertThat(tenure.client().describe("view/reentrant").held()).as("still held with one hold left").isTrue();
        lock.unlock();
        assertThat(lock.holdCount()).isZero();
        assertThat(tenure.client().describe("view/reentrant").held()).isFalse();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessage("lock 'view/reentrant' is not held by this view");
        assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("has no conditions");
    }

    /**
     * A lock() racing the last unlock() of the same view: sent while the release is under way,
     * the lease's acquire could be answered with the very grant being released. Unary calls: one
     * session stream would keep the two in order most of the time.
     */
    @Test
    void aLockRacingTheLastUnlockHoldsWhatTheServerHolds() throws Exception {
        TenureClient client = TenureClient.builder().endpoints(tenure.endpoints()).sessionStream(false).build();
        FencedLock lock = client.lock("view/race").asLock();
        for (int i = 0; i < 30; i++) {
            lock.lock();
            long before = lock.fencingToken();
            CompletableFuture<Void> unlocking = CompletableFuture.runAsync(lock::unlock);
            lock.lock();
            unlocking.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(lock.holdCount()).isOne();
            var described = client.describe("view/race");
            assertThat(described.held()).as("round %d: the view holds it, so the server must", i).isTrue();
            assertThat(described.fencingToken()).as("round %d", i).isEqualTo(lock.fencingToken());
            assertThat(lock.fencingToken()).isGreaterThanOrEqualTo(before);
            lock.unlock();
        }
        assertThat(client.describe("view/race").held()).isFalse();
        client.close();
    }

    @Test
    void anInterruptWithdrawsTheWaitFromTheQueue() throws Exception {
        TenureClient other = tenure.cluster().newClient();
        FencedLock holder = tenure.client().lock("view/interrupt").asLock();
        FencedLock waiter = other.lock("view/interrupt").asLock();
        holder.lock();

        AtomicReference<Throwable> outcome = new AtomicReference<>();
        Thread interruptible = new Thread(() -> {
            try {
                waiter.lockInterruptibly();
                outcome.set(new AssertionError("granted"));
            } catch (Throwable e) {
                outcome.set(e);
            }
        });
        interruptible.start();
        Await.until("lockInterruptibly waits", WAIT, () -> tenure.client().describe("view/interrupt").waiters().size() == 1);
        interruptible.interrupt();
        interruptible.join(WAIT.toMillis());
        assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
        Await.until("the interrupted wait leaves the queue", WAIT, () -> tenure.client().describe("view/interrupt").waiters().isEmpty());

        Thread timed = new Thread(() -> {
            try {
                outcome.set(waiter.tryLock(1, TimeUnit.HOURS) ? new AssertionError("granted") : null);
            } catch (Throwable e) {
                outcome.set(e);
            }
        });
        timed.start();
        Await.until("tryLock(time) waits", WAIT, () -> tenure.client().describe("view/interrupt").waiters().size() == 1);
        timed.interrupt();
        timed.join(WAIT.toMillis());
        assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
        Await.until("the interrupted timed wait leaves the queue", WAIT, () -> tenure.client().describe("view/interrupt").waiters().isEmpty());

        holder.unlock();
        assertThat(tenure.client().describe("view/interrupt").held()).as("no ghost waiter was granted").isFalse();
        assertThat(waiter.holdCount()).isZero();
        Thread.currentThread().interrupt();
        assertThatThrownBy(waiter::lockInterruptibly).as("interrupted before waiting").isInstanceOf(InterruptedException.class);
        assertThat(tenure.client().describe("view/interrupt").held()).isFalse();
    }

    @Test
    void lockIgnoresInterruptsAndKeepsTheFlag() throws Exception {
        TenureClient other = tenure.cluster().newClient();
        FencedLock holder = tenure.client().lock("view/uninterruptible").asLock();
        FencedLock waiter = other.lock("view/uninterruptible").asLock();
        holder.lock();
        AtomicBoolean flagAfterGrant = new AtomicBoolean();
        Thread locking = new Thread(() -> {
            waiter.lock();
            flagAfterGrant.set(Thread.currentThread().isInterrupted());
            waiter.unlock();
        });
        locking.start();
        Await.until("lock() waits", WAIT, () -> tenure.client().describe("view/uninterruptible").waiters().size() == 1);
        locking.interrupt();
        assertThat(tenure.client().describe("view/uninterruptible").waiters()).as("still waiting after the interrupt").hasSize(1);
        holder.unlock();
        locking.join(WAIT.toMillis());
        assertThat(locking.isAlive()).isFalse();
        assertThat(flagAfterGrant).as("granted, with the interrupt flag set again").isTrue();
    }

    @Test
    void aLostLeaseEndsTheHoldAndEveryUnlockSaysSo() {
        TenureClient client = tenure.client();
        Lease lease = client.grantLease(Duration.ofSeconds(10));
        FencedLock lock = client.lock("view/lost", lease).asLock();
        lock.lock();
        lock.lock();
        lease.revoke(); // the server releases the lock; the view learns it from the lease

        assertThat(lock.isHeld()).isFalse();
        assertThatThrownBy(lock::fencingToken).isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(lock::lock).as("a lock() under a lost hold").isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(lock::tryLock).isInstanceOf(LeaseLostException.class);
        assertThat(lock.holdCount()).isEqualTo(2);
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
        assertThat(lock.holdCount()).isZero();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);

        FencedLock fresh = client.lock("view/lost").asLock();
        assertThat(fresh.tryLock()).as("free again: the revoke released it").isTrue();
        fresh.unlock();
    }

    @Test
    void aLeaseLostWhileWaitingEndsTheWait() throws Exception {
        TenureClient client = tenure.client();
        FencedLock holder = client.lock("view/lost-wait").asLock();
        holder.lock();
        Lease lease = client.grantLease(Duration.ofSeconds(10));
        FencedLock waiter = client.lock("view/lost-wait", lease).asLock();
        CompletableFuture<Void> waiting = CompletableFuture.runAsync(waiter::lock);
        Await.until("the waiter queues", WAIT, () -> client.describe("view/lost-wait").waiters().size() == 1);
        lease.revoke();
        assertThat(waiting).failsWithin(WAIT).withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .withCauseInstanceOf(LeaseLostException.class);
        Await.until("the queue is empty", WAIT, () -> client.describe("view/lost-wait").waiters().isEmpty());
        holder.unlock();
    }
}

package io.tenure.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.LockDescription;
import io.tenure.client.TenureClient;
import io.tenure.testing.Await;
import io.tenure.testing.TenureExtension;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link TenureLockProvider} against a real member, with two nodes (a client and a provider each):
 * both bounds of a hold, the fencing token seen from the task, and refused configurations.
 */
class TenureLockProviderTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    private static TenureClient clientA;
    private static TenureClient clientB;
    private static TenureLockProvider nodeA;
    private static TenureLockProvider nodeB;

    @BeforeAll
    static void nodes() {
        clientA = TenureClient.builder().endpoints(tenure.endpoints()).clientId("node-a").build();
        clientB = TenureClient.builder().endpoints(tenure.endpoints()).clientId("node-b").build();
        nodeA = new TenureLockProvider(clientA, "jobs/");
        nodeB = new TenureLockProvider(clientB, "jobs/");
    }

    @AfterAll
    static void closeNodes() {
        nodeA.close();
        nodeB.close();
        clientA.close();
        clientB.close();
    }

    @Test
    void aHolderThatNeverUnlocksLosesTheLockAtLockAtMostFor() {
        long start = System.nanoTime();
        TenureSimpleLock hung = held(nodeA.lock(config("never-unlocks", Duration.ofSeconds(2), Duration.ZERO)));
        assertThat(nodeB.lock(config("never-unlocks", Duration.ofSeconds(10), Duration.ZERO))).as("held by node A").isEmpty();

        // Node A's client stays open and well, but nothing renews the lock's lease: a hung task loses it.
        assertThat(clientB.lock("jobs/never-unlocks").awaitFree(Duration.ofSeconds(5))).as("free after lockAtMostFor").isTrue();
        long freeAfterMs = Await.millisSince(start);
        assertThat(freeAfterMs).as("never before lockAtMostFor").isGreaterThanOrEqualTo(2_000).isLessThan(4_000);
        assertThat(hung.lease().isValid()).as("node A gave the lease up before the member ended it").isFalse();

        TenureSimpleLock next = held(nodeB.lock(config("never-unlocks", Duration.ofSeconds(10), Duration.ZERO)));
        assertThat(next.fencingToken()).isGreaterThan(hung.fencingToken());

        // The hung run's late unlock revokes only its own (gone) lease: the next run keeps the lock.
        hung.unlock();
        LockDescription now = clientB.describe("jobs/never-unlocks");
        assertThat(now.held()).isTrue();
        assertThat(now.fencingToken()).isEqualTo(next.fencingToken());
        next.unlock();
        assertThat(clientB.describe("jobs/never-unlocks").held()).isFalse();
    }

    @Test
    void anUnlockBeforeLockAtLeastForHoldsTheLockUntilThen() {
        long start = System.nanoTime();
        TenureSimpleLock early = held(nodeA.lock(config("at-least", Duration.ofSeconds(10), Duration.ofMillis(2_500))));
        early.unlock();

        assertThat(nodeB.lock(config("at-least", Duration.ofSeconds(10), Duration.ZERO))).as("still held after the unlock").isEmpty();
        assertThat(clientB.describe("jobs/at-least").fencingToken()).isEqualTo(early.fencingToken());

        assertThat(clientB.lock("jobs/at-least").awaitFree(Duration.ofSeconds(6))).as("released at lockAtLeastFor").isTrue();
        // Not before lockAtLeastFor, and long before the 10 s lockAtMostFor would have ended it.
        assertThat(Await.millisSince(start)).isGreaterThanOrEqualTo(2_500).isLessThan(6_000);
        TenureSimpleLock next = held(nodeB.lock(config("at-least", Duration.ofSeconds(10), Duration.ZERO)));
        assertThat(next.fencingToken()).isGreaterThan(early.fencingToken());
        next.unlock();
    }

    @Test
    void anUnlockAfterLockAtLeastForReleasesAtOnce() {
        TenureSimpleLock lock = held(nodeA.lock(config("at-least-passed", Duration.ofSeconds(10), Duration.ofMillis(300))));
        long locked = System.nanoTime(); // after the provider's own start, which it takes inside lock()
        Await.untilTime(locked + TimeUnit.MILLISECONDS.toNanos(300));
        lock.unlock();

        assertThat(clientB.describe("jobs/at-least-passed").held()).isFalse();
        held(nodeB.lock(config("at-least-passed", Duration.ofSeconds(10), Duration.ZERO))).unlock();
    }

    @Test
    void aNodeThatDiesAfterAnEarlyUnlockStillFreesTheLockAtLockAtMostFor() {
        long start = System.nanoTime();
        try (TenureClient dyingClient = tenure.cluster().newClient()) {
            TenureLockProvider dying = new TenureLockProvider(dyingClient, "jobs/");
            held(dying.lock(config("dies", Duration.ofSeconds(3), Duration.ofMillis(2_500)))).unlock();
            dying.close(); // the node dies: its timer never releases at lockAtLeastFor
        }
        assertThat(clientB.lock("jobs/dies").awaitFree(Duration.ofSeconds(6))).isTrue();
        // Not at lockAtLeastFor (nobody was left to release it then), and no later than lockAtMostFor and the member's expiry.
        assertThat(Await.millisSince(start)).as("ended by the lease's TTL").isGreaterThanOrEqualTo(3_000).isLessThan(5_000);
    }

    @Test
    void theTaskSeesItsFencingToken() {
        LockingTaskExecutor executor = new DefaultLockingTaskExecutor(nodeA);
        AtomicReference<String> seen = new AtomicReference<>();
        executor.executeWithLock((Runnable) () -> {
            long outer = TenureLockProvider.currentFencingToken().orElseThrow();
            assertThat(outer).isEqualTo(clientA.describe("jobs/outer").fencingToken());
            executor.executeWithLock((Runnable) () -> {
                long inner = TenureLockProvider.currentFencingToken().orElseThrow();
                assertThat(inner).isEqualTo(clientA.describe("jobs/inner").fencingToken()).isGreaterThan(outer);
                assertThat(TenureLockProvider.currentFencingToken("outer")).hasValue(outer);
                seen.set(outer + " " + inner);
            }, config("inner", Duration.ofSeconds(10), Duration.ZERO));
            assertThat(TenureLockProvider.currentFencingToken()).as("the outer run's again").hasValue(outer);
            assertThat(TenureLockProvider.currentFencingToken("inner")).isEmpty();
        }, config("outer", Duration.ofSeconds(10), Duration.ZERO));

        assertThat(seen.get()).as("the inner task ran").isNotNull();
        assertThat(TenureLockProvider.currentFencingToken()).as("outside a run").isEmpty();
        long firstOuter = Long.parseLong(seen.get().split(" ")[0]);
        AtomicReference<OptionalLong> again = new AtomicReference<>();
        new DefaultLockingTaskExecutor(nodeB).executeWithLock((Runnable) () -> again.set(TenureLockProvider.currentFencingToken()),
                config("outer", Duration.ofSeconds(10), Duration.ZERO));
        assertThat(again.get().orElseThrow()).as("the next run, on node B").isGreaterThan(firstOuter);
    }

    @Test
    void aFencingTokenIsTheLockOfTheThreadThatTookIt() throws Exception {
        TenureSimpleLock lock = held(nodeA.lock(config("other-thread", Duration.ofSeconds(10), Duration.ZERO)));
        AtomicReference<OptionalLong> elsewhere = new AtomicReference<>();
        Thread other = new Thread(() -> elsewhere.set(TenureLockProvider.currentFencingToken()));
        other.start();
        other.join(TimeUnit.SECONDS.toMillis(5));
        assertThat(elsewhere.get()).isEmpty();
        assertThat(TenureLockProvider.currentFencingToken()).hasValue(lock.fencingToken());

        Thread unlocker = new Thread(lock::unlock); // ShedLock unlocks on the same thread; another may too
        unlocker.start();
        unlocker.join(TimeUnit.SECONDS.toMillis(5));
        assertThat(TenureLockProvider.currentFencingToken()).isEmpty();
        assertThat(clientA.describe("jobs/other-thread").held()).isFalse();
    }

    @Test
    void unlockingTwiceIsRefused() {
        TenureSimpleLock lock = held(nodeA.lock(config("twice", Duration.ofSeconds(10), Duration.ZERO)));
        lock.unlock();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("lock 'twice'").hasMessageContaining("already unlocked");
    }

    @Test
    void aRefusedAttemptLeavesNoLeaseBehind() {
        TenureSimpleLock lock = held(nodeA.lock(config("contended", Duration.ofSeconds(10), Duration.ZERO)));
        for (int i = 0; i < 3; i++) {
            assertThat(nodeB.lock(config("contended", Duration.ofSeconds(10), Duration.ZERO))).isEmpty();
        }
        Await.until("node B's refused attempts revoked their leases", Duration.ofSeconds(5),
                () -> tenure.client().leases().stream().noneMatch(l -> l.getClientId().equals("node-b")));
        lock.unlock();
    }

    @Test
    void badConfigurationsAreRefusedNamingTheField() {
        assertThatThrownBy(() -> nodeA.lock(config("short", Duration.ofMillis(999), Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockAtMostFor of lock 'short' is 999 ms").hasMessageContaining("raise lockAtMostFor");
        assertThatThrownBy(() -> nodeA.lock(config("long", Duration.ofHours(25), Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lockAtMostFor of lock 'long' is PT25H");
        String longName = "n".repeat(TenureLockProvider.MAX_NAME_BYTES - "jobs/".length() + 1);
        assertThatThrownBy(() -> nodeA.lock(config(longName, Duration.ofSeconds(10), Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name '" + longName + "' is 1025 bytes");
        assertThatThrownBy(() -> nodeA.lock(config(" ", Duration.ofSeconds(10), Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name must not be blank");
        assertThatThrownBy(() -> nodeA.lock(null)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("configuration");
        assertThatThrownBy(() -> new TenureLockProvider(null)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("client");
        assertThatThrownBy(() -> new TenureLockProvider(clientA, null)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("prefix");
        assertThatThrownBy(() -> new TenureLockProvider(clientA, "p".repeat(1024)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("prefix must be shorter than 1024 bytes");
        assertThat(tenure.client().locks("jobs/", 100)).extracting(LockDescription::key)
                .doesNotContain("jobs/short", "jobs/long", "jobs/ ");
    }

    static TenureSimpleLock held(Optional<SimpleLock> lock) {
        assertThat(lock).as("the lock was free").isPresent();
        return (TenureSimpleLock) lock.get();
    }

    static LockConfiguration config(String name, Duration lockAtMostFor, Duration lockAtLeastFor) {
        return new LockConfiguration(ClockProvider.now(), name, lockAtMostFor, lockAtLeastFor);
    }
}

package io.tenure.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.testing.TenureExtension;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.test.support.AbstractLockProviderIntegrationTest;
import net.javacrumbs.shedlock.test.support.FuzzTester;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ShedLock's own test of a lock provider ({@code shedlock-test-support}), run against a real
 * member. Two of its tests rest on timings, and are adapted here:
 *
 * <ul>
 *   <li>{@code shouldTimeout} asks for a {@code lockAtMostFor} of 50 ms, below the 1 s a member
 *       grants at least: here it checks that such a lock is refused, naming {@code lockAtMostFor}
 *       (the timeout itself is {@link TenureLockProviderTest#aHolderThatNeverUnlocksLosesTheLockAtLockAtMostFor}).</li>
 *   <li>{@code shouldLockAtLeastFor} checks that the lock is free 100 ms after its
 *       {@code lockAtLeastFor} of 2 s ends; the release is a revoke through the log (an fsync), so
 *       it gets 1 s instead, still well before the 4 s {@code lockAtMostFor} that would free it otherwise.</li>
 * </ul>
 *
 * <p>The others run as ShedLock wrote them. The fuzz test (eight threads on two locks, each
 * incrementing a counter under the lock, so that two holders at once would lose an update) runs
 * 25 iterations a thread instead of 100, to keep within CI's time: about 6 s instead of 25.
 */
class ShedLockProviderContractTest extends AbstractLockProviderIntegrationTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    private static TenureLockProvider provider;

    @BeforeAll
    static void provider() {
        provider = new TenureLockProvider(tenure.client(), "shedlock/");
    }

    @AfterAll
    static void closeProvider() {
        provider.close();
    }

    @Override
    protected LockProvider getLockProvider() {
        return provider;
    }

    @Override
    protected void assertUnlocked(String lockName) {
        assertThat(tenure.client().describe("shedlock/" + lockName).held()).as("lock %s is free", lockName).isFalse();
    }

    @Override
    protected void assertLocked(String lockName) {
        assertThat(tenure.client().describe("shedlock/" + lockName).held()).as("lock %s is held", lockName).isTrue();
    }

    @Test
    @Override
    public void shouldTimeout() {
        assertThatThrownBy(() -> provider.lock(lockConfig(LOCK_NAME1, Duration.ofMillis(50), Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockAtMostFor of lock '" + LOCK_NAME1 + "' is 50 ms");
        assertUnlocked(LOCK_NAME1);
    }

    @Test
    @Override
    public void fuzzTestShouldPass() throws ExecutionException, InterruptedException {
        new FuzzTester(provider, Duration.ofMillis(1), Duration.ofMinutes(5), 25).doFuzzTest();
    }

    @Test
    @Override
    public void shouldLockAtLeastFor() throws InterruptedException {
        doTestShouldLockAtLeastFor(1_000);
    }
}

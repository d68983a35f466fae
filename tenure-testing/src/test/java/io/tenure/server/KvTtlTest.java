package io.tenure.server;

import io.tenure.client.Lease;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureKv;
import io.tenure.testing.Await;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keys with a time to live against one real member: a key goes after its TTL and never before
 * (measured from before its put was sent, so the member's apply is later still), a put refreshes
 * the TTL, a put without one keeps the key, and a key bound to a lease goes when the lease ends.
 */
class KvTtlTest {
    static final Duration TTL = Duration.ofMillis(1_500);
    /** Generous: the member expires at most one sweep (100 ms) after the TTL, plus a commit. */
    static final Duration LATE = Duration.ofSeconds(10);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    /**
     * Reads the key until it is gone, and checks that no read that ended before {@code sentAt + ttl}
     * found it gone, and that some read found it still there.
     *
     * @return the milliseconds from {@code sentAt} to the first read that found it gone
     */
    static long awaitGone(TenureKv kv, String key, long sentAt, Duration ttl) {
        return awaitGone(kv, key, sentAt, ttl, LATE);
    }

    /** {@link #awaitGone(TenureKv, String, long, Duration)}, failing when the key is not gone {@code late} after its TTL. */
    static long awaitGone(TenureKv kv, String key, long sentAt, Duration ttl, Duration late) {
        AtomicInteger present = new AtomicInteger();
        AtomicLong goneAfter = new AtomicLong(-1);
        Await.until(() -> "key '" + key + "' gone within " + ttl.plus(late), ttl.plus(late), () -> {
            boolean there = kv.get(key).isPresent();
            long ended = System.nanoTime();
            if (there) {
                present.incrementAndGet();
                return false;
            }
            goneAfter.set(TimeUnit.NANOSECONDS.toMillis(ended - sentAt));
            return true;
        });
        assertThat(goneAfter.get()).as("key '" + key + "' was not gone before its TTL").isGreaterThanOrEqualTo(ttl.toMillis());
        assertThat(present.get()).as("reads that found it before it went").isPositive();
        return goneAfter.get();
    }

    @Test
    void aKeyWithATtlGoesAfterItsTtlAndNotBefore() {
        TenureKv kv = tenure.client().kv();
        long sentAt = System.nanoTime();
        kv.put("ttl/a", "soon gone", TTL);
        assertThat(kv.get("ttl/a").orElseThrow().ttl()).isEqualTo(TTL);
        long gone = awaitGone(kv, "ttl/a", sentAt, TTL);
        assertThat(gone).as("gone about its TTL after the put").isLessThan(TTL.plus(LATE).toMillis());
    }

    @Test
    void aPutRefreshesTheTtl() {
        TenureKv kv = tenure.client().kv();
        long firstSent = System.nanoTime();
        kv.put("ttl/b", "one", TTL);
        Await.untilTime(firstSent + TTL.toNanos() * 2 / 3);
        long secondSent = System.nanoTime();
        kv.put("ttl/b", "two", TTL);
        Await.untilTime(firstSent + TTL.toNanos() + TimeUnit.MILLISECONDS.toNanos(300));
        assertThat(kv.get("ttl/b")).as("past the first put's TTL, within the second's").isPresent();
        awaitGone(kv, "ttl/b", secondSent, TTL);
    }

    @Test
    void aPutWithoutATtlLeavesTheKeyWithoutOne() {
        TenureKv kv = tenure.client().kv();
        long sentAt = System.nanoTime();
        kv.put("ttl/c", "one", Duration.ofMillis(300));
        kv.put("ttl/c", "kept");
        // Past the first TTL by many sweeps: had its deadline stayed, the key would have gone.
        Await.untilTime(sentAt + TimeUnit.MILLISECONDS.toNanos(300 + 1_500));
        TenureKv.Entry entry = kv.get("ttl/c").orElseThrow();
        assertThat(entry.valueAsString()).isEqualTo("kept");
        assertThat(entry.ttl()).isEqualTo(Duration.ZERO);
        assertThat(tenure.cluster().server(0).member().keyValues().expiry().known()).as("no deadline left for it").isZero();
    }

    @Test
    void aKeyBoundToALeaseGoesWhenTheLeaseIsRevoked() {
        TenureClient client = tenure.client();
        TenureKv kv = client.kv();
        Lease lease = client.grantLease(Duration.ofSeconds(30));
        kv.put("ttl/leased", "mine", lease);
        assertThat(kv.get("ttl/leased")).isPresent();
        lease.revoke();
        assertThat(kv.get("ttl/leased")).as("a linearizable read after the revoke").isEmpty();
    }
}

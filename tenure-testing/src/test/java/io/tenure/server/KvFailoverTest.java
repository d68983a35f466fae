package io.tenure.server;

import io.tenure.client.TenureClient;
import io.tenure.client.TenureKv;
import io.tenure.testing.TenureCluster;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The key-value store across a leader stop in a three-member cluster: a key with a TTL survives
 * the failover until its TTL (the new leader never counts from earlier than the put), then goes
 * (at most one TTL late: the new leader counts from its promotion a put it did not see applied);
 * and a compare-and-set on the mod revision read before the stop swaps exactly once after it.
 */
class KvFailoverTest {
    static final Duration TTL = Duration.ofSeconds(5);

    @RegisterExtension
    final TenureExtension tenure = TenureExtension.of(TenureCluster.builder().members(3).electionTimeout(ServerConfig.DEFAULT_ELECTION_TIMEOUT));

    @Test
    void aKeyWithATtlSurvivesALeaderStopUntilItsTtlAndThenGoes() {
        TenureCluster cluster = tenure.cluster();
        try (TenureClient client = cluster.newClient()) {
            ttlKeyOutlivesTheStop(cluster, client.kv());
        }
    }

    private static void ttlKeyOutlivesTheStop(TenureCluster cluster, TenureKv kv) {
        long sentAt = System.nanoTime();
        kv.put("failover/ttl", "until its TTL", TTL);
        kv.put("failover/kept", "no TTL");
        cluster.stop(cluster.leader());

        long gone = KvTtlTest.awaitGone(kv, "failover/ttl", sentAt, TTL, TTL.plus(Duration.ofSeconds(15)));
        assertThat(gone).as("at most one TTL and a failover late").isLessThan(TTL.multipliedBy(2).plus(Duration.ofSeconds(15)).toMillis());
        assertThat(kv.get("failover/kept")).as("a key without a TTL stays").isPresent();
        int leader = cluster.leader();
        assertThat(cluster.server(leader).member().keyValues().expiry().known()).as("the new leader keeps no deadline for it").isZero();
    }

    @Test
    void aCompareAndSetOnTheRevisionReadBeforeTheStopSwapsOnceAfterIt() {
        TenureCluster cluster = tenure.cluster();
        try (TenureClient client = cluster.newClient(); TenureClient reader = cluster.newClient()) {
            casAcrossTheStop(cluster, client.kv(), reader.kv());
        }
    }

    private static void casAcrossTheStop(TenureCluster cluster, TenureKv kv, TenureKv reader) {
        kv.put("failover/cas", "before");
        long revision = kv.get("failover/cas").orElseThrow().modRevision();
        cluster.stop(cluster.leader());

        assertThat(kv.compareAndSet("failover/cas", revision, "after".getBytes())).isTrue();
        assertThat(kv.compareAndSet("failover/cas", revision, "again".getBytes())).as("the revision moved on").isFalse();
        assertThat(kv.putIfAbsent("failover/cas", "absent?")).isFalse();
        TenureKv.Entry entry = reader.get("failover/cas").orElseThrow();
        assertThat(entry.valueAsString()).isEqualTo("after");
        assertThat(entry.version()).isEqualTo(2);
        assertThat(entry.modRevision()).isGreaterThan(revision);
    }
}

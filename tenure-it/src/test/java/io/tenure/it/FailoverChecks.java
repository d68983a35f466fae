package io.tenure.it;

import io.tenure.client.Lease;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Checks that the failover tests with load clients share: the order of the tokens told, and leases lost only for a reason. */
final class FailoverChecks {
    /** A grant (or leadership) a client was told of: what it was, its token, when it was asked for and when the answer came. */
    record Told(String description, long token, long sentNanos, long ackNanos) {
    }

    private FailoverChecks() {
    }

    /**
     * Every token was told once, and tokens are in real-time order: one told before another was
     * asked for is the smaller (so a writer's or a leader's token is above every one before it).
     */
    static void tokensInRealTimeOrder(Collection<Told> told, String what) {
        Set<Long> tokens = new HashSet<>();
        for (Told t : told) {
            assertThat(tokens.add(t.token())).as("token " + t.token() + " told once (" + t.description() + ")").isTrue();
        }
        List<Told> byAck = told.stream().sorted(Comparator.comparingLong(Told::ackNanos)).toList();
        long[] ackNanos = byAck.stream().mapToLong(Told::ackNanos).toArray();
        long[] highestBefore = new long[byAck.size()];
        long highest = Long.MIN_VALUE;
        for (int i = 0; i < byAck.size(); i++) {
            highest = Math.max(highest, byAck.get(i).token());
            highestBefore[i] = highest;
        }
        List<String> outOfOrder = new ArrayList<>();
        for (Told t : told) {
            int toldBefore = Arrays.binarySearch(ackNanos, t.sentNanos());
            toldBefore = toldBefore < 0 ? -toldBefore - 1 : toldBefore;
            if (toldBefore > 0 && highestBefore[toldBefore - 1] >= t.token()) {
                outOfOrder.add(t.description() + " has a token below one told before it was asked for (" + highestBefore[toldBefore - 1] + ")");
            }
        }
        assertThat(outOfOrder).as(what + " whose token is not above every one told before they were asked for").isEmpty();
    }

    /**
     * How long an outage must last to explain a lost lease of {@code ttl}: a lease is safe for its
     * safe window after its last acknowledged keep-alive, sent at most a keep-alive period (TTL/3)
     * before the outage began.
     */
    static long explainsLossMillis(Duration ttl) {
        return Lease.safeWindowFor(ttl).minus(ttl.dividedBy(3)).toMillis();
    }

    /** A lease may be lost only when a failover ({@code outages}, in ms) lasted long enough to explain it. */
    static void lostLeasesExplained(Collection<String> leasesLost, Duration ttl, List<Long> outages) {
        long explains = explainsLossMillis(ttl);
        long longest = outages.stream().mapToLong(Long::longValue).max().orElse(0);
        if (longest < explains) {
            assertThat(leasesLost).as("leases lost though no failover lasted " + explains + " ms (longest " + longest + " ms)").isEmpty();
        }
    }
}

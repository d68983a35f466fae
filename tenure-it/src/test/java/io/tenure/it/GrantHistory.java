package io.tenure.it;

import io.tenure.testing.Await;
import io.tenure.testing.MemberProcess;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The server's own record of the lock grants under a prefix: one member's watch history, replayed
 * from the first revision (or from its compaction horizon when it compacted). Every grant is a
 * PUT whose revision is the grant's fencing token, with the lease that holds it; a reader granted
 * beside other readers is a PUT of its own.
 */
final class GrantHistory {
    /** An acquisition a client saw acknowledged: the lock, the grant's token and the lease it was granted to. */
    record Grant(String key, long token, long leaseId, String description) {
    }

    private GrantHistory() {
    }

    /**
     * Checks that every acknowledged grant at or above the horizon is a PUT in {@code member}'s
     * history with its key, token and lease (I9), that the events come in revision order (I10),
     * and that each key's PUTs come in strictly increasing revision order (I2).
     *
     * @return what was checked, for the test's summary
     */
    static String check(MemberProcess member, String prefix, Collection<Grant> grants) {
        long maxToken = grants.stream().mapToLong(Grant::token).max().orElseThrow();
        List<Watcher.Seen> events;
        long horizon = 0;
        Watcher watcher = Watcher.open(member, prefix, true, 1);
        try {
            Await.PROCESSES.until("the watch replays up to revision " + maxToken, Duration.ofSeconds(60), () -> watcher.compactRevision() > 0
                    || watcher.ended() || watcher.events().stream().anyMatch(e -> e.revision() >= maxToken));
            if (watcher.compactRevision() > 0) {
                horizon = watcher.compactRevision();
            } else {
                assertThat(watcher.ended()).as(watcher + " still open: " + watcher.endReason()).isFalse();
            }
            events = watcher.events();
        } finally {
            watcher.close();
        }
        if (horizon > 0) {
            long from = horizon;
            Watcher again = Watcher.open(member, prefix, true, from);
            try {
                Await.PROCESSES.until("the watch replays from the horizon " + from + " up to revision " + maxToken, Duration.ofSeconds(60),
                        () -> again.ended() || again.events().stream().anyMatch(e -> e.revision() >= maxToken));
                assertThat(again.ended()).as(again + ": " + again.endReason()).isFalse();
                events = again.events();
            } finally {
                again.close();
            }
        }
        for (int i = 1; i < events.size(); i++) {
            assertThat(events.get(i).revision()).as("watch events in revision order (I10): " + events.get(i - 1) + " then " + events.get(i))
                    .isGreaterThanOrEqualTo(events.get(i - 1).revision());
        }
        Map<String, Long> lastPut = new LinkedHashMap<>();
        Map<Long, Watcher.Seen> putByToken = new HashMap<>();
        for (Watcher.Seen seen : events) {
            if (!seen.isPut()) {
                continue;
            }
            Long previous = lastPut.put(seen.key(), seen.revision());
            if (previous != null) {
                assertThat(seen.revision()).as(seen.key() + ": grants' tokens strictly increase").isGreaterThan(previous);
            }
            putByToken.put(seen.revision(), seen);
        }
        List<String> lost = new ArrayList<>();
        int checked = 0;
        for (Grant grant : grants) {
            if (grant.token() < horizon) {
                continue;
            }
            checked++;
            Watcher.Seen put = putByToken.get(grant.token());
            if (put == null || !put.key().equals(grant.key()) || put.event().getKv().getLease() != grant.leaseId()) {
                lost.add(grant.description() + " -> " + put);
            }
        }
        String summary = "checked " + checked + " of " + grants.size() + " acquisitions against " + member.name() + "'s watch history"
                + (horizon > 0 ? " (the rest are older than its horizon " + horizon + ")" : " (all of them)");
        assertThat(lost).as("acknowledged acquisitions not in the server's history (" + summary + ")").isEmpty();
        assertThat(checked).as("acquisitions checked against the server's history").isPositive();
        return summary;
    }
}

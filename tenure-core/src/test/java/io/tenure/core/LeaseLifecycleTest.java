package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.lock.LockResult.Granted;
import io.tenure.core.kernel.LeaseView;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.LeaseExpire;
import io.tenure.core.kernel.LeaseRenew;
import io.tenure.core.kernel.LeaseRetime;
import io.tenure.core.kernel.LeaseRevoke;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.LeaseResult.EndReason;
import io.tenure.core.kernel.LeaseResult.LeaseEnded;
import io.tenure.core.kernel.LeaseResult.LeasesRenewed;
import io.tenure.core.kernel.Result.Rejected;
import io.tenure.core.kernel.Result.Skipped;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.function.Consumer;

import static io.tenure.core.Replica.effects;
import static io.tenure.core.Replica.grantsToWaiters;
import static io.tenure.core.Replica.lockWait;
import static io.tenure.core.Replica.waitsEnded;
import static io.tenure.core.Replica.expect;
import static io.tenure.core.Replica.watched;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/** Leases: grant, renewal, conditional expiry and revocation, and what ending one does to its locks and waits. */
class LeaseLifecycleTest {
    private final Replica replica = new Replica();

    /** Lease 1 holds "a" (lease 2 waiting) and "b" (nobody waiting), and waits for "c" (held by 3) ahead of lease 4. */
    private static void leaseOneHoldsTwoAndWaitsForOne(Replica r) {
        for (long id = 1; id <= 4; id++) {
            r.grantLease(id);
        }
        r.acquire("a", 1);
        r.acquire("b", 1);
        r.acquire("c", 3);
        r.enqueue("a", 2);
        r.enqueue("c", 1);
        r.enqueue("c", 4);
    }

    @Test
    void grantRecordsTheLeaseAtItsPosition() {
        long position = replica.nextPosition();

        replica.grantLease(7, 5_000, "worker");

        assertThat(replica.lease(7)).isEqualTo(new LeaseView(7, 5_000, "worker", position, position, List.of(), List.of()));
        assertThat(replica.state.leaseCount()).isEqualTo(1);
    }

    /** The per-user quotas count a user's leases and what they hold and wait for, also after a snapshot. */
    @Test
    void leasesAreCountedByTheirOwner() throws java.io.IOException {
        replica.apply(new io.tenure.core.kernel.LeaseGrant(1, 5_000, "w1", "ops"));
        replica.apply(new io.tenure.core.kernel.LeaseGrant(2, 5_000, "w2", "ops"));
        replica.apply(new io.tenure.core.kernel.LeaseGrant(3, 5_000, "w3", ""));
        replica.apply(new io.tenure.core.lock.LockAcquire("a", 1, new byte[0], true));
        replica.apply(new io.tenure.core.lock.LockAcquire("a", 2, new byte[0], true));
        replica.apply(new io.tenure.core.lock.LockAcquire("b", 2, new byte[0], true));

        assertThat(replica.state.leaseCountOfOwner("ops")).isEqualTo(2);
        assertThat(replica.state.holdsAndWaitsOfOwner("ops")).isEqualTo(3);
        assertThat(replica.state.leaseCountOfOwner("")).as("leases without an owner are nobody's").isZero();
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        replica.state.writeSnapshot(bytes);
        TenureState restored = TenureState.readSnapshot(new java.io.ByteArrayInputStream(bytes.toByteArray()), 16);
        assertThat(restored.leaseCountOfOwner("ops")).isEqualTo(2);
        assertThat(restored.holdsAndWaitsOfOwner("ops")).isEqualTo(3);

        replica.apply(new LeaseRevoke(2));
        assertThat(replica.state.leaseCountOfOwner("ops")).isEqualTo(1);
        assertThat(replica.state.holdsAndWaitsOfOwner("ops")).isEqualTo(1);
    }

    /** I8: owners are state; replicas that apply the same grants, by many owners in any id order, agree byte for byte. */
    @Test
    void replicasAgreeOnLeaseOwnersByteForByte() throws java.io.IOException {
        java.util.List<io.tenure.core.kernel.Command> log = new java.util.ArrayList<>();
        java.util.Random random = new java.util.Random(20);
        for (int i = 0; i < 200; i++) {
            long id = 1 + random.nextInt(1_000_000_000);
            log.add(new io.tenure.core.kernel.LeaseGrant(id, 5_000, "c" + (i % 7), i % 3 == 0 ? "" : "user-" + (i % 11)));
            log.add(new io.tenure.core.lock.LockAcquire("k" + (i % 13), id, new byte[0], true));
            if (i % 5 == 0) {
                log.add(new LeaseRevoke(id));
            }
        }
        TenureState one = new TenureState(16);
        TenureState two = new TenureState(16);
        long position = 1;
        for (io.tenure.core.kernel.Command command : log) {
            one.apply(position << 16, command);
            two.apply(position << 16, command);
            position++;
        }
        java.io.ByteArrayOutputStream a = new java.io.ByteArrayOutputStream();
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        one.writeSnapshot(a);
        two.writeSnapshot(b);
        assertThat(a.toByteArray()).isEqualTo(b.toByteArray());
        TenureState restored = TenureState.readSnapshot(new java.io.ByteArrayInputStream(a.toByteArray()), 16);
        for (int u = 0; u < 11; u++) {
            assertThat(restored.leaseCountOfOwner("user-" + u)).isEqualTo(one.leaseCountOfOwner("user-" + u));
            assertThat(restored.holdsAndWaitsOfOwner("user-" + u)).isEqualTo(one.holdsAndWaitsOfOwner("user-" + u));
        }
    }

    @Test
    void expiryReleasesTheLeasesLocksAndEndsItsWaits() {
        leaseOneHoldsTwoAndWaitsForOne(replica);
        long renewedAt = replica.lease(1).renewedAt();
        long position = replica.nextPosition();

        Applied expiry = replica.apply(new LeaseExpire(1, renewedAt));

        assertThat(expiry.result()).isEqualTo(new LeaseEnded(1, EndReason.EXPIRED, List.of("a", "b")));
        assertThat(grantsToWaiters(expiry)).containsExactly(new Granted("a", 2, position, false));
        assertThat(waitsEnded(expiry)).containsExactly(lockWait("c", 1));
        assertThat(watched(expiry)).extracting(WatchEvent::key, WatchEvent::type)
                .containsExactly(tuple("a", WatchEvent.Type.PUT),
                        tuple("b", WatchEvent.Type.DELETE));

        assertThat(replica.lease(1)).isNull();
        assertThat(replica.state.leases()).extracting(LeaseView::leaseId).containsExactly(2L, 3L, 4L);
        assertThat(replica.lock("a").leaseId()).isEqualTo(2);
        assertThat(replica.lock("b")).isNull();
        assertThat(replica.waiters("c")).containsExactly(4L);
        assertThat(replica.lease(2).held()).containsExactly("a");
        assertThat(replica.lease(2).waiting()).isEmpty();
    }

    @Test
    void revokeEndsTheLeaseTheSameWayWithReasonRevoked() {
        leaseOneHoldsTwoAndWaitsForOne(replica);

        Applied revoke = replica.apply(new LeaseRevoke(1));

        assertThat(revoke.result()).isEqualTo(new LeaseEnded(1, EndReason.REVOKED, List.of("a", "b")));
        assertThat(grantsToWaiters(revoke)).extracting(Granted::leaseId).containsExactly(2L);
        assertThat(waitsEnded(revoke)).containsExactly(lockWait("c", 1));
        assertThat(replica.lease(1)).isNull();
        assertThat(replica.waiters("c")).containsExactly(4L);
    }

    @Test
    void expiryComputedAgainstAnOlderRenewalIsSkippedAndChangesNothing() {
        Consumer<Replica> setup = r -> {
            leaseOneHoldsTwoAndWaitsForOne(r);
            r.apply(new LeaseRenew(new long[] {1}));
        };
        Replica renewed = Replica.with(setup);
        Replica untouched = Replica.with(setup);
        long grantedAt = renewed.lease(1).grantedAt();
        assertThat(renewed.lease(1).renewedAt()).isGreaterThan(grantedAt);

        Applied stale = renewed.apply(new LeaseExpire(1, grantedAt));
        untouched.apply(Replica.HARMLESS);

        assertThat(stale.result()).isInstanceOf(Skipped.class);
        assertThat(((Skipped) stale.result()).why()).contains("renewed");
        assertThat(stale.effects()).isEmpty();
        assertThat(renewed.snapshot()).isEqualTo(untouched.snapshot());
        assertThat(renewed.view()).isEqualTo(untouched.view());

        // The expiry conditional on the latest renewal does end it.
        assertThat(renewed.expire(1).reason()).isEqualTo(EndReason.EXPIRED);
    }

    @Test
    void expiryConditionalOnALaterPointThanTheRenewalIsSkippedToo() {
        replica.grantLease(1);
        long renewedAt = replica.lease(1).renewedAt();

        assertThat(replica.run(new LeaseExpire(1, renewedAt + 1))).isInstanceOf(Skipped.class);
        assertThat(replica.lease(1)).isNotNull();
    }

    @Test
    void expiringAnUnknownOrEndedLeaseIsSkipped() {
        Consumer<Replica> setup = r -> {
            r.grantLease(1);
            r.grantLease(2);
            r.acquire("k", 2);
            r.revoke(1);
        };
        Replica touched = Replica.with(setup);
        Replica untouched = Replica.with(setup);

        Applied never = touched.apply(new LeaseExpire(99, 0));
        Applied ended = touched.apply(new LeaseExpire(1, Replica.position(1, 0)));
        untouched.apply(Replica.HARMLESS);
        untouched.apply(Replica.HARMLESS);

        assertThat(never.result()).isInstanceOf(Skipped.class);
        assertThat(ended.result()).isInstanceOf(Skipped.class);
        assertThat(never.effects()).isEmpty();
        assertThat(ended.effects()).isEmpty();
        assertThat(touched.snapshot()).isEqualTo(untouched.snapshot());
    }

    @Test
    void renewalMovesTheRenewalPointAndReportsEachTtlOrZeroForUnknownLeases() {
        replica.grantLease(1, 2_000, "a");
        replica.grantLease(2, 3_000, "b");
        long grantedAt = replica.lease(1).grantedAt();
        long position = replica.nextPosition();

        LeasesRenewed renewed = expect(replica.run(new LeaseRenew(new long[] {2, 99, 1})), LeasesRenewed.class);

        assertThat(renewed.leaseIds()).containsExactly(2, 99, 1);
        assertThat(renewed.ttlMillis()).containsExactly(3_000, 0, 2_000);
        assertThat(replica.lease(1).renewedAt()).isEqualTo(position);
        assertThat(replica.lease(2).renewedAt()).isEqualTo(position);
        assertThat(replica.lease(1).grantedAt()).isEqualTo(grantedAt);
        assertThat(replica.lease(99)).as("a renewal never creates a lease").isNull();
    }

    @Test
    void aRetimeRenewsToTheNewTtlAndAnswersZeroForAnUnknownLease() {
        replica.grantLease(1, 2_000, "a");
        long position = replica.nextPosition();

        LeasesRenewed retimed = expect(replica.run(new LeaseRetime(1, 33_000)), LeasesRenewed.class);

        assertThat(retimed.leaseIds()).containsExactly(1);
        assertThat(retimed.ttlMillis()).containsExactly(33_000);
        assertThat(replica.lease(1).ttlMillis()).isEqualTo(33_000);
        assertThat(replica.lease(1).renewedAt()).isEqualTo(position);
        assertThat(expect(replica.run(new LeaseRetime(99, 5_000)), LeasesRenewed.class).ttlMillis()).containsExactly(0);
        assertThat(replica.lease(99)).as("a retime never creates a lease").isNull();
        Rejected tooShort = expect(replica.run(new LeaseRetime(1, 10)), Rejected.class);
        assertThat(tooShort.code()).isEqualTo(Code.INVALID_ARGUMENT);
        assertThat(replica.lease(1).ttlMillis()).as("a refused retime changes nothing").isEqualTo(33_000);
    }

    @Test
    void renewedAtIsTheLatestRenewalPointOrMinusOneOnceTheLeaseIsGone() {
        replica.grantLease(1);
        assertThat(replica.state.renewedAt(1)).isEqualTo(replica.lease(1).grantedAt());
        long position = replica.nextPosition();
        replica.run(new LeaseRenew(new long[] {1}));

        assertThat(replica.state.renewedAt(1)).isEqualTo(position).isEqualTo(replica.lease(1).renewedAt());
        assertThat(replica.state.renewedAt(2)).isEqualTo(-1);
        replica.expire(1);
        assertThat(replica.state.renewedAt(1)).isEqualTo(-1);
    }

    @Test
    void anEndedLeaseCanNeitherAcquireNorBeRevokedAgain() {
        replica.grantLease(1);
        replica.revoke(1);

        Result acquire = replica.run(new LockAcquire("k", 1, null, true));
        Result revoke = replica.run(new LeaseRevoke(1));

        assertThat(acquire).isInstanceOf(Rejected.class);
        assertThat(((Rejected) acquire).code()).isEqualTo(Code.NOT_FOUND);
        assertThat(revoke).isInstanceOf(Rejected.class);
        assertThat(((Rejected) revoke).code()).isEqualTo(Code.NOT_FOUND);
        assertThat(replica.lock("k")).isNull();
    }

    @Test
    void aWaiterWhoseLeaseEndsIsNeverGranted() {
        for (long id = 1; id <= 3; id++) {
            replica.grantLease(id);
        }
        long token = replica.acquire("k", 1).fencingToken();
        replica.enqueue("k", 2);
        replica.enqueue("k", 3);
        replica.expire(2);

        Applied release = replica.apply(new LockRelease("k", 1, token));

        assertThat(grantsToWaiters(release)).extracting(Granted::leaseId).containsExactly(3L);
        assertThat(replica.lock("k").leaseId()).isEqualTo(3);
    }
}

package io.tenure.core;

import io.tenure.core.kernel.LeaseView;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.lock.LockResult;
import io.tenure.core.lock.LockResult.Released;
import io.tenure.core.lock.LockTable;
import io.tenure.core.lock.LockView;
import io.tenure.core.member.MemberEndpoints;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Snapshots written by earlier builds load, and the sections of this build's format are checked:
 * a data directory from the last release must load after an upgrade.
 */
class SnapshotCompatibilityTest {
    /**
     * Written by the release of 2026-11-26 (format version 2) at Raft index 199 of a single
     * member: leases 1001 (alice), 1002 (bob), 1003 (carol) with a TTL of one day; jobs/a held by
     * 1001 with metadata "batch 7" and waited for by 1002; jobs/b released by 1001; carol in
     * the middle of one of her 130 lock cycles on "churn". The same data directory is tenure-testing's old-data fixture.
     */
    private static final String RELEASE_2026_11_26 = "/snapshots/v2-release-2026-11-26.snap";
    private static final long JOBS_A_TOKEN = 393216;
    /**
     * Written by the build of 2026-11-27 (format version 3, sections per primitive, before acquire
     * request ids) from an in-memory state at Raft index 86: leases 1001 (alice), 1002 (bob), 1003
     * (carol) with a TTL of one day; jobs/a held by 1001 ("batch 7") and waited for by 1002 ("bob
     * waits"); jobs/b released by 1001 with token 393216; churn held by 1003 after 39 cycles.
     */
    private static final String RELEASE_2026_11_27 = "/snapshots/v3-release-2026-11-27.snap";
    private static final long JOBS_B_RELEASED_TOKEN = 589824;
    /**
     * Written by the build of 2026-11-27 evening (format version 4: acquire request ids and
     * semaphores, before read mode) at Raft index 10: leases 1001 (alice), 1002 (bob), 1003
     * (carol) with a TTL of one day; jobs/a held by 1001 ("batch 7", request 11, token 262144)
     * and waited for by 1002 ("bob waits", request 21); jobs/b released by 1001 (token 393216);
     * semaphore "pool" of limit 3 with 2 permits held by 1001 (token 524288) and 1 by 1003, and
     * 1002 waiting for 2.
     */
    private static final String RELEASE_2026_11_27_EVENING = "/snapshots/v4-release-2026-11-27.snap";
    /**
     * Written by the build of 2026-11-27 night (format version 5: read mode, elections and
     * barriers, before idle semaphores) at Raft index 13: leases 1001 (alice), 1002 (bob), 1003
     * (carol) with a TTL of one day; "catalog" read by 1001 ("report 1", token 262144) and 1003
     * (token 327680) with 1002 waiting to write; semaphore "pool" of limit 3 with 2 permits held
     * by 1001 (token 458752) and 1002 waiting for 2; election "scheduler" led by 1003 ("n3:9000",
     * token 589824) with 1001 next; barrier "start" of 3 parties with 1002 waiting; semaphore
     * "spare" acquired and released by 1003 (gone, as that build deleted an unused semaphore).
     */
    private static final String RELEASE_2026_11_27_NIGHT = "/snapshots/v5-release-2026-11-27.snap";
    /**
     * Written by the release of 2026-11-28 (format version 6: users and roles, before lease
     * owners) at Raft index 11: leases 1001 (alice) and 1002 (bob) with a TTL of one day; jobs/a
     * held by 1001 ("batch 7", request 11) and waited for by 1002; users admin (root) and worker
     * (role jobs: write on locks under "jobs/"); authentication on.
     */
    private static final String RELEASE_2026_11_28 = "/snapshots/v6-release-2026-11-28.snap";

    /** Leases from before owners load with none: only a user with admin on what they hold may release or revoke them. */
    @Test
    void aVersion6SnapshotLoadsItsLeasesWithoutOwnersAndItsUsers() throws IOException {
        TenureState state = read(RELEASE_2026_11_28);

        assertThat(state.appliedPosition() >>> 16).isEqualTo(11);
        assertThat(state.leases()).extracting(LeaseView::leaseId, LeaseView::clientId)
                .containsExactly(org.assertj.core.api.Assertions.tuple(1001L, "alice"), org.assertj.core.api.Assertions.tuple(1002L, "bob"));
        assertThat(state.leaseOwner(1001)).isEmpty();
        LockView a = state.primitive(LockTable.class).lock("jobs/a");
        assertThat(a.leaseId()).isEqualTo(1001);
        assertThat(a.waiters()).extracting(LockView.Waiter::leaseId).containsExactly(1002L);
        io.tenure.core.access.AccessTable access = state.primitive(io.tenure.core.access.AccessTable.class);
        assertThat(access.enabled()).isTrue();
        assertThat(access.isRoot("admin")).isTrue();
        assertThat(access.permits("worker", "lock", "jobs/a", io.tenure.core.access.Level.WRITE)).isTrue();
        assertThat(access.permits("worker", "lock", "other", io.tenure.core.access.Level.READ)).isFalse();

        state.apply(12L << 16, new io.tenure.core.kernel.LeaseGrant(1003, 60_000, "carol", "worker"));
        byte[] rewritten = bytes(state);
        assertThat(ByteBuffer.wrap(rewritten, 4, 4).getInt()).as("format version").isEqualTo(7);
        TenureState again = TenureState.readSnapshot(new ByteArrayInputStream(rewritten), 16);
        assertThat(again.leaseOwner(1003)).contains("worker");
        assertThat(again.leaseOwner(1001)).isEmpty();
        assertThat(bytes(again)).isEqualTo(rewritten);
    }

    @Test
    void aVersion2SnapshotOfTheLastReleaseLoads() throws IOException {
        TenureState state = read(RELEASE_2026_11_26);

        assertThat(state.appliedPosition() >>> 16).isEqualTo(199);
        assertThat(state.leases()).extracting(LeaseView::leaseId, LeaseView::clientId, LeaseView::ttlMillis)
                .containsExactly(org.assertj.core.api.Assertions.tuple(1001L, "alice", 86_400_000L),
                        org.assertj.core.api.Assertions.tuple(1002L, "bob", 86_400_000L),
                        org.assertj.core.api.Assertions.tuple(1003L, "carol", 86_400_000L));
        LockView a = state.primitive(LockTable.class).lock("jobs/a");
        assertThat(a.leaseId()).isEqualTo(1001);
        assertThat(a.fencingToken()).isEqualTo(JOBS_A_TOKEN);
        assertThat(new String(a.metadata(), StandardCharsets.UTF_8)).isEqualTo("batch 7");
        assertThat(a.waiters()).extracting(LockView.Waiter::leaseId).containsExactly(1002L);
        assertThat(state.lease(1002).waiting()).containsExactly("jobs/a");
        assertThat(state.lease(1001).held()).containsExactly("jobs/a");
        // The snapshot fell inside one of carol's cycles on "churn".
        assertThat(state.primitive(LockTable.class).lock("churn").leaseId()).isEqualTo(1003);
        assertThat(state.primitive(MemberEndpoints.class).endpoints()).containsKey("n1");

        // The remembered release answers a retry; a release hands jobs/a to its waiter with a larger token.
        long next = (state.appliedPosition() >>> 16) + 1;
        Released retried = (Released) state.apply(next << 16, new LockRelease("jobs/b", 1001, JOBS_B_RELEASED_TOKEN)).result();
        assertThat(retried.nextFencingToken()).isZero();
        Released handedOver = (Released) state.apply((next + 1) << 16, new LockRelease("jobs/a", 1001, JOBS_A_TOKEN)).result();
        assertThat(handedOver.nextFencingToken()).isGreaterThan(state.revision() - 1).isGreaterThan(JOBS_A_TOKEN);
        assertThat(state.primitive(LockTable.class).lock("jobs/a").leaseId()).isEqualTo(1002);
    }

    @Test
    void aVersion2SnapshotIsRewrittenInTheCurrentFormatWithTheSameState() throws IOException {
        TenureState old = read(RELEASE_2026_11_26);
        byte[] rewritten = bytes(old);
        TenureState again = TenureState.readSnapshot(new ByteArrayInputStream(rewritten), TenureState.DEFAULT_EVENT_LOG_CAPACITY);

        assertThat(ByteBuffer.wrap(rewritten, 4, 4).getInt()).as("format version").isEqualTo(7);
        assertThat(bytes(again)).isEqualTo(rewritten);
        assertThat(Rendering.of(again.leases())).isEqualTo(Rendering.of(old.leases()));
        assertThat(Rendering.of(again.primitive(LockTable.class).locks("", 100)))
                .isEqualTo(Rendering.of(old.primitive(LockTable.class).locks("", 100)));
        assertThat(again.primitive(LockTable.class).recentReleaseCount()).isEqualTo(old.primitive(LockTable.class).recentReleaseCount());
        assertThat(again.revision()).isEqualTo(old.revision());
    }

    @Test
    void aVersion3SnapshotLoadsWithNoAcquireRequestsAndGoesOnWithThem() throws IOException {
        TenureState state = read(RELEASE_2026_11_27);

        assertThat(state.appliedPosition() >>> 16).isEqualTo(86);
        LockView a = state.primitive(LockTable.class).lock("jobs/a");
        assertThat(a.leaseId()).isEqualTo(1001);
        assertThat(a.fencingToken()).isEqualTo(262144);
        assertThat(new String(a.metadata(), StandardCharsets.UTF_8)).isEqualTo("batch 7");
        assertThat(a.waiters()).extracting(LockView.Waiter::leaseId).containsExactly(1002L);
        assertThat(state.primitive(LockTable.class).lock("churn").leaseId()).isEqualTo(1003);
        assertThat(state.primitive(LockTable.class).endedAcquireCount()).isZero();

        long next = (state.appliedPosition() >>> 16) + 1;
        Released retried = (Released) state.apply(next << 16, new LockRelease("jobs/b", 1001, 393216)).result();
        assertThat(retried.nextFencingToken()).isZero();
        // Bob's wait predates request ids: releasing his grant ends no request, and the table goes on.
        long bobs = ((Released) state.apply((next + 1) << 16, new LockRelease("jobs/a", 1001, 262144)).result()).nextFencingToken();
        state.apply((next + 2) << 16, new LockRelease("jobs/a", 1002, bobs));
        assertThat(state.primitive(LockTable.class).endedAcquireCount()).isZero();
        LockResult.Granted named = (LockResult.Granted) state.apply((next + 3) << 16,
                new LockAcquire("jobs/a", 1002, null, true, 42)).result();
        state.apply((next + 4) << 16, new LockRelease("jobs/a", 1002, named.fencingToken()));
        assertThat(state.apply((next + 5) << 16, new LockAcquire("jobs/a", 1002, null, true, 42)).result())
                .isInstanceOf(io.tenure.core.kernel.Result.Rejected.class);
    }

    @Test
    void aVersion4SnapshotLoadsItsLocksInWriteModeAndGoesOnWithReadMode() throws IOException {
        TenureState state = read(RELEASE_2026_11_27_EVENING);

        assertThat(state.appliedPosition() >>> 16).isEqualTo(10);
        LockView a = state.primitive(LockTable.class).lock("jobs/a");
        assertThat(a.leaseId()).isEqualTo(1001);
        assertThat(a.fencingToken()).isEqualTo(262144);
        assertThat(a.shared()).isFalse();
        assertThat(a.holders()).extracting(LockView.Holder::leaseId).containsExactly(1001L);
        assertThat(a.waiters()).extracting(LockView.Waiter::leaseId, LockView.Waiter::shared)
                .containsExactly(org.assertj.core.api.Assertions.tuple(1002L, false));
        io.tenure.core.semaphore.SemaphoreView pool = state.primitive(io.tenure.core.semaphore.SemaphoreTable.class).semaphore("pool");
        assertThat(pool.limit()).isEqualTo(3);
        assertThat(pool.holders()).extracting(io.tenure.core.semaphore.SemaphoreView.Holder::leaseId).containsExactly(1001L, 1003L);
        assertThat(pool.waiters()).extracting(io.tenure.core.semaphore.SemaphoreView.Waiter::leaseId).containsExactly(1002L);

        long next = (state.appliedPosition() >>> 16) + 1;
        assertThat(((Released) state.apply(next << 16, new LockRelease("jobs/b", 1001, 393216)).result()).nextFencingToken())
                .as("a retried release of the old build's grant").isZero();
        assertThat(state.apply((next + 1) << 16, new LockAcquire("jobs/a", 1001, null, true, 11)).result())
                .as("a retry of alice's acquire").isInstanceOf(LockResult.Granted.class);
        long bobs = ((Released) state.apply((next + 2) << 16, new LockRelease("jobs/a", 1001, 262144)).result()).nextFencingToken();
        assertThat(bobs).isGreaterThan(262144);
        assertThat(state.apply((next + 3) << 16, new LockAcquire("jobs/a", 1001, null, true, 11)).result())
                .as("a late copy of alice's ended acquire").isInstanceOf(io.tenure.core.kernel.Result.Rejected.class);
        // Read mode on the loaded state: bob downgrades, and carol reads beside him.
        state.apply((next + 4) << 16, new io.tenure.core.lock.LockDowngrade("jobs/a", 1002, bobs));
        assertThat(state.apply((next + 5) << 16, new LockAcquire("jobs/a", 1003, null, true, 31, true)).result())
                .isInstanceOf(LockResult.Granted.class);
        assertThat(state.primitive(LockTable.class).lock("jobs/a").holders()).extracting(LockView.Holder::leaseId)
                .containsExactly(1002L, 1003L);

        byte[] rewritten = bytes(state);
        assertThat(ByteBuffer.wrap(rewritten, 4, 4).getInt()).as("format version").isEqualTo(7);
        assertThat(bytes(TenureState.readSnapshot(new ByteArrayInputStream(rewritten), 16))).isEqualTo(rewritten);
    }

    @Test
    void aVersion5SnapshotLoadsEveryKindWithNoIdleSemaphoreAndGoesOnWithThem() throws IOException {
        TenureState state = read(RELEASE_2026_11_27_NIGHT);

        assertThat(state.appliedPosition() >>> 16).isEqualTo(13);
        LockView catalog = state.primitive(LockTable.class).lock("catalog");
        assertThat(catalog.shared()).isTrue();
        assertThat(catalog.holders()).extracting(LockView.Holder::leaseId, LockView.Holder::fencingToken)
                .containsExactly(org.assertj.core.api.Assertions.tuple(1001L, 262144L), org.assertj.core.api.Assertions.tuple(1003L, 327680L));
        assertThat(catalog.waiters()).extracting(LockView.Waiter::leaseId, LockView.Waiter::shared)
                .containsExactly(org.assertj.core.api.Assertions.tuple(1002L, false));
        io.tenure.core.semaphore.SemaphoreTable semaphores = state.primitive(io.tenure.core.semaphore.SemaphoreTable.class);
        assertThat(semaphores.semaphore("pool").holders()).extracting(io.tenure.core.semaphore.SemaphoreView.Holder::fencingToken)
                .containsExactly(458752L);
        assertThat(semaphores.idleSince("pool")).isZero();
        assertThat(semaphores.semaphore("spare")).isNull();
        io.tenure.core.election.ElectionView scheduler = state.primitive(io.tenure.core.election.ElectionTable.class).election("scheduler");
        assertThat(scheduler.leaderLeaseId()).isEqualTo(1003);
        assertThat(scheduler.fencingToken()).isEqualTo(589824);
        assertThat(new String(scheduler.value(), StandardCharsets.UTF_8)).isEqualTo("n3:9000");
        assertThat(state.primitive(io.tenure.core.barrier.BarrierTable.class).barrier("start").parties()).isEqualTo(3);

        // Alice lets go of her permits: "pool" is idle now, keeps its limit, and is written so.
        long next = (state.appliedPosition() >>> 16) + 1;
        state.apply(next << 16, new io.tenure.core.kernel.LeaseRevoke(1002));
        state.apply((next + 1) << 16, new io.tenure.core.semaphore.SemaphoreRelease("pool", 1001, 458752));
        assertThat(semaphores.idleSince("pool")).isEqualTo((next + 1) << 16);
        byte[] rewritten = bytes(state);
        assertThat(ByteBuffer.wrap(rewritten, 4, 4).getInt()).as("format version").isEqualTo(7);
        TenureState again = TenureState.readSnapshot(new ByteArrayInputStream(rewritten), 16);
        assertThat(again.primitive(io.tenure.core.semaphore.SemaphoreTable.class).semaphore("pool").limit()).isEqualTo(3);
        assertThat(bytes(again)).isEqualTo(rewritten);
    }

    /** Format version 1 had no member endpoints: leases, locks and recent releases only. */
    @Test
    void aVersion1SnapshotLoads() throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(body);
        out.writeInt(0x544E5253);
        out.writeInt(1);
        out.writeLong(5L << 16);   // applied position
        out.writeLong(4L << 16);   // last stamp
        out.writeInt(1);           // one lease
        out.writeLong(7);
        out.writeLong(10_000);
        writeString(out, "old");
        out.writeLong(2L << 16);
        out.writeLong(3L << 16);
        out.writeInt(1);           // one lock, no waiters
        writeString(out, "k");
        out.writeLong(4L << 16);
        out.writeLong(7);
        writeString(out, "m");
        out.writeLong(4L << 16);
        out.writeLong(1);
        out.writeInt(0);
        out.writeInt(0);           // no remembered release
        out.flush();
        CRC32C crc = new CRC32C();
        crc.update(body.toByteArray());
        out.writeInt((int) crc.getValue());

        TenureState state = TenureState.readSnapshot(new ByteArrayInputStream(body.toByteArray()), 16);

        assertThat(state.lease(7).renewedAt()).isEqualTo(3L << 16);
        assertThat(state.primitive(LockTable.class).lock("k").fencingToken()).isEqualTo(4L << 16);
        assertThat(state.primitive(MemberEndpoints.class).endpoints()).isEmpty();
        assertThat(state.revision()).isEqualTo(5L << 16);
    }

    @Test
    void aSectionThisBuildDoesNotKnowIsRefused() throws IOException {
        byte[] snapshot = bytes(SnapshotTest.richState().state);
        byte[] renamed = withCrc(replaceOnce(snapshot, "member".getBytes(StandardCharsets.UTF_8), "future".getBytes(StandardCharsets.UTF_8)));

        assertThatThrownBy(() -> TenureState.readSnapshot(new ByteArrayInputStream(renamed), 16))
                .isInstanceOf(SnapshotFormatException.class)
                .hasMessageContaining("section 'future'");
    }

    private static TenureState read(String resource) throws IOException {
        try (InputStream in = SnapshotCompatibilityTest.class.getResourceAsStream(resource)) {
            assertThat(in).as(resource).isNotNull();
            return TenureState.readSnapshot(in, TenureState.DEFAULT_EVENT_LOG_CAPACITY);
        }
    }

    private static byte[] bytes(TenureState state) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        state.writeSnapshot(out);
        return out.toByteArray();
    }

    private static void writeString(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    private static byte[] replaceOnce(byte[] in, byte[] from, byte[] to) {
        for (int i = 0; i + from.length <= in.length; i++) {
            if (java.util.Arrays.equals(in, i, i + from.length, from, 0, from.length)) {
                byte[] out = in.clone();
                System.arraycopy(to, 0, out, i, to.length);
                return out;
            }
        }
        throw new AssertionError("not found");
    }

    /** The snapshot's body with a fresh checksum, so only the change under test is wrong. */
    private static byte[] withCrc(byte[] snapshot) {
        CRC32C crc = new CRC32C();
        crc.update(snapshot, 0, snapshot.length - 4);
        ByteBuffer.wrap(snapshot, snapshot.length - 4, 4).putInt((int) crc.getValue());
        return snapshot;
    }
}

package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.lock.LockResult;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.LeaseExpire;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.kernel.LeaseRenew;
import io.tenure.core.kernel.LeaseRevoke;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockCancel;
import io.tenure.core.lock.LockRelease;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Snapshots: a restored state is the same state (same bytes, same views, same future), and a
 * damaged snapshot is refused with a {@link SnapshotFormatException} that says why.
 */
class SnapshotTest {

    /**
     * A state with something in every part of the snapshot: leases of several TTLs and client
     * ids (one empty, one not ASCII), renewals, held locks with metadata, queues whose waiters
     * carry their own metadata, recent releases, an expiry, a revoke, and several commands
     * coalesced into one log entry.
     */
    static Replica richState() {
        Replica r = new Replica();
        r.grantLease(1, 5_000, "alice");
        r.grantLease(2, 7_000, "b\u00f6b");
        r.grantLease(3, 9_000, null);
        r.grantLease(4);
        r.grantLease(5);
        r.grantLease(6);
        r.run(new LockAcquire("jobs/a", 1, bytes("alice owns a"), false));
        r.run(new LockAcquire("jobs/b", 2, bytes("bob owns b"), false));
        r.applyInSameEntry(new LockAcquire("jobs/a", 2, bytes("bob wants a"), true));
        r.applyInSameEntry(new LockAcquire("jobs/a", 3, null, true));
        r.applyInSameEntry(new LockAcquire("jobs/b", 4, bytes("4 wants b"), true));
        r.run(new LeaseRenew(new long[] {1, 2, 99}));
        long released = r.acquire("tmp", 5).fencingToken();
        assertThat(released).isEqualTo(RELEASED_TMP_TOKEN);
        r.release("tmp", 5, released);
        long c = r.acquire("c", 6).fencingToken();
        r.enqueue("c", 5);
        r.release("c", 6, c);
        r.acquire("d", 6);
        r.enqueue("d", 4);
        r.run(new LockAcquire("\u9396", 4, new byte[] {0, -1, 127}, false));
        r.expire(3);
        r.grantLease(7, 3_000, "late");
        r.enqueue("jobs/b", 7);
        return r;
    }

    /** The token of lease 5's hold on "tmp" in {@link #richState}, released there: the tenth entry. */
    static final long RELEASED_TMP_TOKEN = Replica.position(10, 0);

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void richStateCoversEveryPartOfTheSnapshot() {
        Replica r = richState();
        assertThat(r.state.leaseCount()).isGreaterThanOrEqualTo(5);
        assertThat(r.locks().locks("", 100)).filteredOn(l -> !l.waiters().isEmpty()).hasSizeGreaterThanOrEqualTo(2);
        assertThat(r.locks().locks("", 100)).filteredOn(l -> l.metadata().length > 0).isNotEmpty();
        assertThat(r.state.revision()).isGreaterThan(0);
        // A retried release only succeeds through the recent releases, so this proves some were recorded.
        assertThat(r.run(new LockRelease("tmp", 5, RELEASED_TMP_TOKEN))).isEqualTo(new LockResult.Released("tmp", 0));
    }

    @Test
    void roundTripGivesIdenticalBytesAndEqualViews() {
        Replica original = richState();
        byte[] written = original.snapshot();

        Replica restored = Replica.restore(written);

        assertThat(restored.snapshot()).isEqualTo(written);
        assertThat(restored.state.leases()).isEqualTo(original.state.leases());
        assertThat(Rendering.of(restored.locks().locks("", Integer.MAX_VALUE)))
                .isEqualTo(Rendering.of(original.locks().locks("", Integer.MAX_VALUE)));
        assertThat(restored.state.appliedPosition()).isEqualTo(original.state.appliedPosition());
        assertThat(restored.state.revision()).isEqualTo(original.state.revision());
        assertThat(restored.state.leaseCount()).isEqualTo(original.state.leaseCount());
        assertThat(restored.locks().lockCount()).isEqualTo(original.locks().lockCount());
    }

    @Test
    void writingTheSameStateTwiceGivesTheSameBytes() {
        assertThat(richState().snapshot()).isEqualTo(richState().snapshot());
    }

    @Test
    void emptyStateRoundTrips() {
        Replica empty = new Replica();
        byte[] written = empty.snapshot();

        Replica restored = Replica.restore(written);

        assertThat(restored.snapshot()).isEqualTo(written);
        assertThat(restored.state.leases()).isEmpty();
        assertThat(restored.state.revision()).isZero();
    }

    @Test
    void restoredStateContinuesExactlyLikeTheOriginal() {
        Replica original = richState();
        Replica restored = Replica.restore(original.snapshot());
        List<Function<Replica, Command>> next = List.of(
                r -> new LockRelease("tmp", 5, RELEASED_TMP_TOKEN),                 // retried release
                r -> new LockRelease("jobs/a", 1, r.lock("jobs/a").fencingToken()),     // hand-off to lease 2
                r -> new LockAcquire("jobs/a", 2, null, false),                          // re-entrant
                r -> new LeaseExpire(1, r.lease(1).grantedAt()),                         // stale: renewed since
                r -> new LeaseExpire(2, r.lease(2).renewedAt()),                         // hands a to nobody, b to 4
                r -> new LockCancel("jobs/b", 7),
                r -> new LeaseRevoke(6),                                                 // d to 4
                r -> new LeaseGrant(7, 4_000, "late"),                                   // ALREADY_EXISTS
                r -> new LeaseGrant(8, 4_000, "new"),
                r -> new LockAcquire("jobs/a", 8, null, true),
                r -> new LockRelease("\u9396", 4, r.lock("\u9396").fencingToken()),
                r -> new LeaseRenew(new long[] {4, 8}),
                r -> new LeaseExpire(4, r.lease(4).renewedAt()));

        List<Result> results = new ArrayList<>();
        for (Function<Replica, Command> step : next) {
            Command command = step.apply(original);
            Applied a = original.apply(command);
            Applied b = restored.apply(command);
            assertThat(Rendering.of(b)).as("applying %s", Rendering.of(command)).isEqualTo(Rendering.of(a));
            results.add(a.result());
        }
        assertThat(results.get(0)).as("the recent releases survived").isEqualTo(new LockResult.Released("tmp", 0));
        assertThat(results.get(3)).as("renewal points survived").isInstanceOf(Result.Skipped.class);
        assertThat(restored.snapshot()).isEqualTo(original.snapshot());
        assertThat(restored.state.leases()).isEqualTo(original.state.leases());
        assertThat(original.lease(4)).as("the script really ended things").isNull();
    }

    /**
     * A Java string with a lone surrogate has no UTF-8 form; the snapshot stores names as UTF-8.
     * Either such a name is refused as a lock name, or a replica restored from a snapshot must
     * still know the lock by it (I8: a member that installed a snapshot agrees with one that
     * replayed the log).
     */
    @Test
    void aNameWithoutAUtf8FormIsRefusedOrSurvivesASnapshot() {
        String loneSurrogate = "jobs/\uD800";
        Replica original = new Replica();
        original.grantLease(1);
        Result acquired = original.run(new LockAcquire(loneSurrogate, 1, null, false));
        if (acquired instanceof Result.Rejected rejected) {
            assertThat(rejected.code()).isEqualTo(Result.Code.INVALID_ARGUMENT);
            return;
        }
        long token = Replica.expect(acquired, LockResult.Granted.class).fencingToken();
        Replica restored = Replica.restore(original.snapshot());

        assertThat(restored.state.leases()).isEqualTo(original.state.leases());
        LockRelease release = new LockRelease(loneSurrogate, 1, token);
        assertThat(Rendering.of(restored.apply(release))).isEqualTo(Rendering.of(original.apply(release)));
    }

    // ---- damaged snapshots -------------------------------------------------------------------

    @Test
    void aFlippedByteFailsTheChecksum() {
        byte[] damaged = richState().snapshot();
        damaged[8 + 7] ^= 0x01; // the low byte of the applied position: still a well-formed snapshot

        assertThatThrownBy(() -> read(damaged))
                .isInstanceOf(SnapshotFormatException.class)
                .hasMessageContaining("checksum");
    }

    @Test
    void aFlippedByteAnywhereIsRefused() {
        byte[] good = richState().snapshot();
        for (int i = 0; i < good.length; i++) {
            byte[] damaged = good.clone();
            damaged[i] ^= (byte) 0x40;
            int at = i;
            assertThatThrownBy(() -> read(damaged)).as("byte %d of %d flipped", at, good.length)
                    .isInstanceOf(SnapshotFormatException.class);
        }
    }

    @Test
    void aTruncatedSnapshotIsReportedAsTruncated() {
        byte[] good = richState().snapshot();
        for (int length = 0; length < good.length; length++) {
            byte[] cut = Arrays.copyOf(good, length);
            int at = length;
            assertThatThrownBy(() -> read(cut)).as("cut to %d of %d bytes", at, good.length)
                    .isInstanceOf(SnapshotFormatException.class)
                    .hasMessageContaining("truncated");
        }
    }

    @Test
    void bytesAfterTheChecksumAreRefused() {
        byte[] good = richState().snapshot();
        byte[] longer = Arrays.copyOf(good, good.length + 1);

        assertThatThrownBy(() -> read(longer)).isInstanceOf(SnapshotFormatException.class).hasMessageContaining("after the checksum");
    }

    @Test
    void aBadMagicNumberIsNotASnapshot() {
        byte[] damaged = richState().snapshot();
        damaged[0] = 'X';

        assertThatThrownBy(() -> read(damaged)).isInstanceOf(SnapshotFormatException.class).hasMessageContaining("not a Tenure snapshot");
    }

    @Test
    void anUnknownFormatVersionIsNamedInTheError() {
        byte[] newer = richState().snapshot();
        ByteBuffer.wrap(newer).putInt(4, 8);

        assertThatThrownBy(() -> read(newer))
                .isInstanceOf(SnapshotFormatException.class)
                .hasMessageContaining("version 8");
    }

    private static TenureState read(byte[] bytes) throws IOException {
        return TenureState.readSnapshot(new ByteArrayInputStream(bytes), 16);
    }
}

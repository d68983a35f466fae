package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Effect;
import io.tenure.core.kernel.WaitKey;
import io.tenure.core.barrier.BarrierTable;
import io.tenure.core.barrier.DoubleBarrierTable;
import io.tenure.core.barrier.BarrierView;
import io.tenure.core.election.ElectionTable;
import io.tenure.core.lock.LockTable;
import io.tenure.core.semaphore.SemaphoreTable;
import io.tenure.core.kernel.LeaseView;
import io.tenure.core.lock.LockView;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.LeaseExpire;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.kernel.LeaseRenew;
import io.tenure.core.kernel.LeaseRevoke;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockCancel;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.lock.LockResult.Granted;
import io.tenure.core.kernel.LeaseResult.LeaseEnded;
import io.tenure.core.kernel.LeaseResult.LeaseGranted;
import io.tenure.core.lock.LockResult.Queued;
import io.tenure.core.lock.LockResult.Released;
import io.tenure.core.watch.WatchEvent;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@link TenureState} fed commands the way a member applies its log: each command at a log
 * position {@code raftIndex * 65536 + slot}, the index growing by one per entry, and the slot
 * growing by one for each further command coalesced into the same entry.
 *
 * <p>The shortcuts ({@link #grantLease}, {@link #acquire}, ...) assert the expected kind of
 * result, so a scenario stops at the first step that went differently.
 */
final class Replica {
    /** The TTL of leases granted by the shortcuts. */
    static final long TTL_MILLIS = 10_000;
    /** A command that changes nothing but the applied position: a renewal batch with no lease in it. */
    static final Command HARMLESS = new LeaseRenew(new long[0]);

    final TenureState state;
    private long index;
    private int slot;

    Replica() {
        this(new TenureState(), 0);
    }

    private Replica(TenureState state, long appliedPosition) {
        this.state = state;
        this.index = appliedPosition >>> 16;
        this.slot = (int) (appliedPosition & 0xFFFF);
    }

    /** A replica restored from snapshot bytes; it goes on from the snapshot's position (same entry or next). */
    static Replica restore(byte[] snapshot) {
        try {
            TenureState state = TenureState.readSnapshot(new ByteArrayInputStream(snapshot), TenureState.DEFAULT_EVENT_LOG_CAPACITY);
            return new Replica(state, state.appliedPosition());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A fresh replica on which {@code setup} has run. */
    static Replica with(Consumer<Replica> setup) {
        Replica replica = new Replica();
        setup.accept(replica);
        return replica;
    }

    static long position(long raftIndex, int slot) {
        return (raftIndex << 16) + slot;
    }

    /** The position the next {@link #apply} will use. */
    long nextPosition() {
        return position(index + 1, 0);
    }

    /** The position the next {@link #applyInSameEntry} will use. */
    long nextSlotPosition() {
        return position(index, slot + 1);
    }

    /** The position of the latest applied command. */
    long lastPosition() {
        return position(index, slot);
    }

    /** Applies the command as the first one of a new log entry. */
    Applied apply(Command command) {
        index++;
        slot = 0;
        return state.apply(lastPosition(), command);
    }

    /** Applies the command in the same log entry as the previous one, at the next slot. */
    Applied applyInSameEntry(Command command) {
        slot++;
        return state.apply(lastPosition(), command);
    }

    Result run(Command command) {
        return apply(command).result();
    }

    // ---- shortcuts that assert the kind of result ---------------------------------------------

    LeaseGranted grantLease(long leaseId) {
        return grantLease(leaseId, TTL_MILLIS, clientOf(leaseId));
    }

    LeaseGranted grantLease(long leaseId, long ttlMillis, String clientId) {
        return expect(run(new LeaseGrant(leaseId, ttlMillis, clientId)), LeaseGranted.class);
    }

    static String clientOf(long leaseId) {
        return "client-" + leaseId;
    }

    Granted acquire(String key, long leaseId) {
        return expect(run(new LockAcquire(key, leaseId, null, false)), Granted.class);
    }

    Queued enqueue(String key, long leaseId) {
        return expect(run(new LockAcquire(key, leaseId, null, true)), Queued.class);
    }

    Queued enqueue(String key, long leaseId, byte[] metadata) {
        return expect(run(new LockAcquire(key, leaseId, metadata, true)), Queued.class);
    }

    Released release(String key, long leaseId, long token) {
        return expect(run(new LockRelease(key, leaseId, token)), Released.class);
    }

    LeaseEnded revoke(long leaseId) {
        return expect(run(new LeaseRevoke(leaseId)), LeaseEnded.class);
    }

    /** Expires the lease conditional on its current renewal point, as the leader would. */
    LeaseEnded expire(long leaseId) {
        LeaseView lease = state.lease(leaseId);
        assertThat(lease).as("lease %d to expire", leaseId).isNotNull();
        return expect(run(new LeaseExpire(leaseId, lease.renewedAt())), LeaseEnded.class);
    }

    Result cancel(String key, long leaseId) {
        return run(new LockCancel(key, leaseId));
    }

    /** The effects of one kind, in the order apply produced them. */
    static <E extends Effect> List<E> effects(Applied applied, Class<E> kind) {
        return applied.effects().stream().filter(kind::isInstance).map(kind::cast).toList();
    }

    /** The grants a command handed to waiters (its wake-ups that carry a grant), in order. */
    static List<Granted> grantsToWaiters(Applied applied) {
        return effects(applied, Effect.Wake.class).stream().map(Effect.Wake::result)
                .filter(Granted.class::isInstance).map(Granted.class::cast).toList();
    }

    /** The waits a command ended because their lease ended (wake-ups that carry a refusal), in order. */
    static List<WaitKey> waitsEnded(Applied applied) {
        return effects(applied, Effect.Wake.class).stream().filter(w -> w.result() instanceof Result.Rejected)
                .map(Effect.Wake::key).toList();
    }

    /** The wait of a lease on lock {@code key}. */
    static WaitKey lockWait(String key, long leaseId) {
        return new WaitKey(LockTable.NAME, key, leaseId);
    }

    /** The watch events a command produced, in order. */
    static List<WatchEvent> watched(Applied applied) {
        return effects(applied, Effect.Watched.class).stream().map(Effect.Watched::event).toList();
    }

    static <R extends Result> R expect(Result result, Class<R> kind) {
        assertThat(result).as("result %s", Rendering.of(result)).isInstanceOf(kind);
        return kind.cast(result);
    }

    // ---- reads --------------------------------------------------------------------------------

    byte[] snapshot() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            state.writeSnapshot(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /** Everything a reader can see of the state, as comparable text (leases, locks, queues, positions, event log). */
    String view() {
        List<WatchEvent> events = new ArrayList<>();
        state.events().replay(state.events().horizon(), key -> true, events::add);
        return "applied=" + state.appliedPosition() + " revision=" + state.revision()
                + "\nleases=" + Rendering.of(state.leases())
                + "\nlocks=" + Rendering.of(locks().locks("", Integer.MAX_VALUE))
                + "\nsemaphores=" + Rendering.of(state.primitive(SemaphoreTable.class).semaphores("", Integer.MAX_VALUE))
                + "\nelections=" + Rendering.of(state.primitive(ElectionTable.class).elections("", Integer.MAX_VALUE))
                + "\nbarriers=" + Rendering.of(barriers())
                + "\ndouble barriers=" + Rendering.of(state.primitive(DoubleBarrierTable.class).barriers("", Integer.MAX_VALUE))
                + "\nlatches=" + Rendering.of(state.primitive(io.tenure.core.latch.LatchTable.class).latches("", Integer.MAX_VALUE))
                + "\ncounters=" + Rendering.of(state.primitive(io.tenure.core.counter.CounterTable.class).counters("", Integer.MAX_VALUE))
                + "\nlists=" + Rendering.of(state.primitive(io.tenure.core.list.ListTable.class).lists("", Integer.MAX_VALUE))
                + "\nscopes held=" + Rendering.of(state.primitive(io.tenure.core.scope.ScopeTable.class).holders())
                + " waiting=" + Rendering.of(state.primitive(io.tenure.core.scope.ScopeTable.class).waiters())
                + "\nhorizon=" + state.events().horizon() + " events=" + Rendering.of(events);
    }

    /** The barriers anyone waits at, in name order. */
    List<BarrierView> barriers() {
        return state.primitive(BarrierTable.class).barriers("", Integer.MAX_VALUE);
    }

    LockTable locks() {
        return state.primitive(LockTable.class);
    }

    LockView lock(String key) {
        return locks().lock(key);
    }

    LeaseView lease(long leaseId) {
        return state.lease(leaseId);
    }

    /** The lease ids of the lock's waiters, in queue order. */
    List<Long> waiters(String key) {
        LockView lock = locks().lock(key);
        assertThat(lock).as("lock %s", key).isNotNull();
        return lock.waiters().stream().map(LockView.Waiter::leaseId).toList();
    }
}

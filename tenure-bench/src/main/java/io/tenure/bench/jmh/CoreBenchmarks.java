package io.tenure.bench.jmh;

import io.tenure.core.lock.LockResult;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.LeaseExpire;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.TenureState;
import io.tenure.core.watch.EventLog;
import io.tenure.core.watch.KeyValue;
import io.tenure.core.watch.WatchEvent;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The pure core, {@link TenureState#apply}, one command at a time, inputs generated in setup.
 * Run with {@code -prof gc} for allocation per operation ({@code gc.alloc.rate.norm}).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class CoreBenchmarks {
    static final long TTL_MILLIS = 10_000;
    static final int FRESH_KEYS = 1_000;
    static final int EXPIRING_LEASES = 10_000;

    /** A state with one lease and {@link #FRESH_KEYS} never-held key names; the state is new for every invocation. */
    @State(Scope.Thread)
    public static class Fresh {
        final String[] keys = new String[FRESH_KEYS];
        TenureState state;
        long position;

        @Setup(Level.Trial)
        public void keys() {
            for (int i = 0; i < keys.length; i++) {
                keys[i] = "bench/fresh/" + i;
            }
        }

        @Setup(Level.Invocation)
        public void state() {
            state = new TenureState();
            position = 1;
            state.apply(position++, new LeaseGrant(1, TTL_MILLIS, "bench"));
        }
    }

    /** A fresh grant: LockAcquire of a key nobody holds (a batch of 1,000 distinct keys per invocation). */
    @Benchmark
    @OperationsPerInvocation(FRESH_KEYS)
    public void acquireFresh(Fresh f, Blackhole bh) {
        for (String key : f.keys) {
            bh.consume(f.state.apply(f.position++, new LockAcquire(key, 1, null, true)));
        }
    }

    /** One key, two leases: one holds, the other waits; each op releases and the releaser queues again. */
    @State(Scope.Thread)
    public static class HandOff {
        static final String KEY = "bench/handoff";
        TenureState state;
        long position;
        long holder;
        long waiter;
        long token;

        @Setup(Level.Trial)
        public void state() {
            state = new TenureState();
            position = 1;
            state.apply(position++, new LeaseGrant(1, TTL_MILLIS, "a"));
            state.apply(position++, new LeaseGrant(2, TTL_MILLIS, "b"));
            token = ((LockResult.Granted) state.apply(position++, new LockAcquire(KEY, 1, null, true)).result()).fencingToken();
            state.apply(position++, new LockAcquire(KEY, 2, null, true));
            holder = 1;
            waiter = 2;
        }
    }

    /** LockRelease handing the lock to the waiter (one WaiterGranted effect), plus the LockAcquire that re-queues the releaser. */
    @Benchmark
    public Applied releaseWithHandOff(HandOff h) {
        Applied released = h.state.apply(h.position++, new LockRelease(HandOff.KEY, h.holder, h.token));
        h.token = ((LockResult.Released) released.result()).nextFencingToken();
        Applied requeued = h.state.apply(h.position++, new LockAcquire(HandOff.KEY, h.holder, null, true));
        long t = h.holder;
        h.holder = h.waiter;
        h.waiter = t;
        return requeued;
    }

    /** 10,000 leases, each holding one lock; all expire in one invocation. */
    @State(Scope.Thread)
    public static class Expiring {
        TenureState state;
        long position;
        final long[] renewedAt = new long[EXPIRING_LEASES];

        @Setup(Level.Invocation)
        public void state() {
            state = new TenureState();
            position = 1;
            for (int i = 0; i < EXPIRING_LEASES; i++) {
                long id = i + 1;
                state.apply(position++, new LeaseGrant(id, TTL_MILLIS, "bench-" + (i % 16)));
                state.apply(position++, new LockAcquire("bench/expire/" + i, id, null, true));
                renewedAt[i] = state.renewedAt(id);
            }
        }
    }

    /** LeaseExpire of 10,000 leases (each releases its lock, with a DELETE watch event); time per expiry. */
    @Benchmark
    @OperationsPerInvocation(EXPIRING_LEASES)
    public void expire10kLeases(Expiring e, Blackhole bh) {
        for (int i = 0; i < EXPIRING_LEASES; i++) {
            bh.consume(e.state.apply(e.position++, new LeaseExpire(i + 1, e.renewedAt[i])));
        }
    }

    /** A full event log (65,536 events) over 1,024 keys; new events are appended and the tail read back. */
    @State(Scope.Thread)
    public static class Events {
        static final int KEYS = 1_024;
        final KeyValue[] values = new KeyValue[KEYS];
        EventLog log;
        long revision;

        @Setup(Level.Trial)
        public void log() {
            log = new EventLog(TenureState.DEFAULT_EVENT_LOG_CAPACITY);
            for (int i = 0; i < KEYS; i++) {
                values[i] = new KeyValue("bench/watch/" + (i % 8) + "/" + i, "bench", new byte[0], 1, 1, 1, 1);
            }
            for (int i = 0; i < log.capacity(); i++) {
                log.append(new WatchEvent(++revision, WatchEvent.Type.PUT, values[i % KEYS], null, "lock"));
            }
        }
    }

    /** Watch dispatch: append one event, then replay the last 16 revisions to a prefix watcher. */
    @Benchmark
    public void watchDispatch(Events e, Blackhole bh) {
        long rev = ++e.revision;
        e.log.append(new WatchEvent(rev, WatchEvent.Type.PUT, e.values[(int) (rev % Events.KEYS)], null, "lock"));
        e.log.replay(rev - 15, key -> key.startsWith("bench/watch/3/"), bh::consume);
    }
}

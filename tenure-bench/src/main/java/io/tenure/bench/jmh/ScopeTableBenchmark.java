package io.tenure.bench.jmh;

import io.tenure.core.TenureState;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.scope.LockScope;
import io.tenure.core.scope.ScopeAcquire;
import io.tenure.core.scope.ScopeRelease;
import io.tenure.core.scope.ScopeRequest;
import io.tenure.core.scope.ScopeResult;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Lock scopes in the core, through {@link TenureState#apply} as a member applies them: a
 * {@link ScopeAcquire} that is granted and the {@link ScopeRelease} of it, beside 100,000 held
 * sets (4 KiB ranges of one 1 GiB inode, every tenth exclusive, held by 1,000 leases; or paths
 * {@code /data/D/F} of one tree). Each operation is one acquire and one release at a free place,
 * with the log codec left out (as {@code ApplyPathBenchmark} measures it separately).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ScopeTableBenchmark {
    static final int HELD = 100_000;
    static final int LEASES = 1_000;
    static final long PAGE = 4096;

    @State(Scope.Thread)
    public static class Held {
        @org.openjdk.jmh.annotations.Param({"range", "path"})
        public String kind;
        final TenureState state = new TenureState();
        final Random random = new Random(1);
        long position = 1;
        long request = 1;

        @Setup(Level.Trial)
        public void fill() {
            for (long lease = 1; lease <= LEASES; lease++) {
                state.apply(next(), new LeaseGrant(lease, 60_000, "bench-" + lease));
            }
            for (long i = 0; i < HELD; i++) {
                ScopeRequest part = kind.equals("range")
                        ? new ScopeRequest(new LockScope.ByteRange(1, 2 * i * PAGE, (2 * i + 1) * PAGE), i % 10 == 0)
                        : new ScopeRequest(new LockScope.Path("/data/" + (i % 100) + "/" + i), i % 7 == 0);
                Object result = state.apply(next(), new ScopeAcquire(1 + i % LEASES, List.of(part), null, false, request++)).result();
                if (!(result instanceof ScopeResult.Granted)) {
                    throw new IllegalStateException("set-up acquire " + i + " was not granted: " + result);
                }
            }
        }

        long next() {
            return (position++) << 16;
        }

        ScopeRequest free() {
            if (kind.equals("range")) {
                long page = 2L * random.nextInt(HELD) + 1;
                return new ScopeRequest(new LockScope.ByteRange(1, page * PAGE, (page + 1) * PAGE), random.nextBoolean());
            }
            return new ScopeRequest(new LockScope.Path("/data/" + random.nextInt(100) + "/new-" + random.nextInt(HELD)),
                    random.nextBoolean());
        }
    }

    /** One acquire granted at a free place among 100,000 held sets, and its release. */
    @Benchmark
    public Object acquireAndRelease(Held h) {
        long lease = 1 + h.random.nextInt(LEASES);
        ScopeResult.Granted granted = (ScopeResult.Granted) h.state.apply(h.next(),
                new ScopeAcquire(lease, List.of(h.free()), null, true, h.request++)).result();
        return h.state.apply(h.next(), new ScopeRelease(lease, granted.fencingToken())).result();
    }
}

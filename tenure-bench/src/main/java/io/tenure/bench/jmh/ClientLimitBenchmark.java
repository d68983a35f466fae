package io.tenure.bench.jmh;

import io.tenure.core.TenureState;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.semaphore.SemaphoreAcquire;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What every acquire's limit checks ask of the state before it is proposed, for a client whose
 * id many leases share (an application that keeps one lease per job, say): how many names the
 * client's leases hold and wait for ({@link TenureState#holdsAndWaits}), and the same for a user
 * ({@link TenureState#holdsAndWaitsOfOwner}). The member asks under the state's read lock, which
 * the apply thread waits for.
 *
 * <pre>
 * java -cp "tenure-bench/target/classes:$(cat tenure-bench/target/classpath.txt)" org.openjdk.jmh.Main ClientLimitBenchmark -wi 3 -w 1s -i 5 -r 1s -f 1
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ClientLimitBenchmark {

    /**
     * One client id and one owner over {@link #leases} leases, each holding one lock of its own and
     * every eighth also a semaphore permit; a second client with 16 leases beside them.
     */
    @State(Scope.Benchmark)
    public static class ManyLeases {
        @Param({"16", "1000", "100000"})
        public int leases;

        TenureState state;

        @Setup(Level.Trial)
        public void fill() {
            state = new TenureState();
            long position = 1;
            for (int i = 1; i <= leases; i++) {
                state.apply(position++, new LeaseGrant(i, 60_000, "jobs", "ops"));
                state.apply(position++, new LockAcquire("job/" + i, i, null, true));
                if (i % 8 == 0) {
                    state.apply(position++, new SemaphoreAcquire("slots", i, 1_000_000, 1, true, 0));
                }
            }
            for (int i = 1; i <= 16; i++) {
                long id = 1_000_000L + i;
                state.apply(position++, new LeaseGrant(id, 60_000, "other", ""));
                state.apply(position++, new LockAcquire("other/" + i, id, null, true));
            }
            int expected = leases + leases / 8;
            if (state.holdsAndWaits("jobs") != expected || state.holdsAndWaitsOfOwner("ops") != expected) {
                throw new IllegalStateException("the client's leases hold " + state.holdsAndWaits("jobs") + ", not " + expected);
            }
        }
    }

    /** The per-client count, as the acquire of one of the client's leases asks it. */
    @Benchmark
    public int perClient(ManyLeases s) {
        return s.state.holdsAndWaits("jobs");
    }

    /** The per-user count, as the recount of the user's quota asks it. */
    @Benchmark
    public int perUser(ManyLeases s) {
        return s.state.holdsAndWaitsOfOwner("ops");
    }
}

package io.tenure.bench.jmh;

import io.tenure.core.lock.LockResult;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.TenureState;
import io.tenure.server.raft.Entry;
import io.tenure.server.raft.EntryCodec;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
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
 * The member's apply path without Ratis: {@link EntryCodec#decode} of a coalesced entry of 64
 * commands, then {@link TenureState#apply} of each at {@link Entry#position}, as
 * {@code TenureStateMachine.applyTransaction} does (its lock, metrics and lease-time records
 * are not included). One invocation applies two entries so the state stays steady: 64
 * LockAcquire of 64 keys by 64 leases (pre-encoded), then the 64 LockRelease of those grants
 * (encoded in the invocation, since the tokens come from the grants). Time is per command.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Thread)
public class ApplyPathBenchmark {
    static final int COMMANDS = 64;

    TenureState state;
    byte[] acquireEntry;
    long index;
    final String[] keys = new String[COMMANDS];

    @Setup(Level.Trial)
    public void setup() {
        state = new TenureState();
        List<Command> acquires = new ArrayList<>();
        index = 1;
        for (int i = 0; i < COMMANDS; i++) {
            keys[i] = "bench/apply/" + i;
            state.apply(Entry.position(index++, 0), new LeaseGrant(i + 1, 10_000, "bench-" + i));
            acquires.add(new LockAcquire(keys[i], i + 1, null, true));
        }
        acquireEntry = EntryCodec.encode(new Entry(1, 1, 1, acquires));
    }

    @Benchmark
    @OperationsPerInvocation(2 * COMMANDS)
    public void decodeAndApply64(Blackhole bh) throws IOException {
        long at = index++;
        Entry acquire = EntryCodec.decode(acquireEntry);
        List<Command> releases = new ArrayList<>(COMMANDS);
        for (int slot = 0; slot < COMMANDS; slot++) {
            Applied applied = state.apply(Entry.position(at, slot), acquire.commands().get(slot));
            LockResult.Granted granted = (LockResult.Granted) applied.result();
            releases.add(new LockRelease(granted.key(), granted.leaseId(), granted.fencingToken()));
        }
        long at2 = index++;
        Entry release = EntryCodec.decode(EntryCodec.encode(new Entry(1, at2, 1, releases)));
        for (int slot = 0; slot < COMMANDS; slot++) {
            bh.consume(state.apply(Entry.position(at2, slot), release.commands().get(slot)));
        }
    }
}

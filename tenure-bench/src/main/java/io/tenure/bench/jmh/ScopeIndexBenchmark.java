package io.tenure.bench.jmh;

import io.tenure.core.scope.PathIndex;
import io.tenure.core.scope.RangeIndex;
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
 * The lock scopes' conflict indexes (issue 21) with 100,000 holds in place: byte ranges of one
 * inode ({@link RangeIndex}: 4 KiB ranges of a 1 GiB file, every tenth exclusive) and paths of
 * one tree ({@link PathIndex}: {@code /data/D/F}, 100 directories, every seventh exclusive). Each
 * operation is what an acquire and a release of one more scope cost the index: the conflict
 * check, the add, and the remove, at a random place.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ScopeIndexBenchmark {
    static final int HELD = 100_000;
    static final long PAGE = 4096;

    @State(Scope.Thread)
    public static class Ranges {
        final RangeIndex index = new RangeIndex();
        final Random random = new Random(1);

        @Setup(Level.Trial)
        public void fill() {
            // Held: every other page of the first 200,000 (the gaps are where the benchmark claims).
            for (long i = 0; i < HELD; i++) {
                index.add(i, 2 * i * PAGE, (2 * i + 1) * PAGE, i % 10 == 0);
            }
        }
    }

    /** Check, hold and let go of one 4 KiB range among 100,000 held: a free page, so the check finds nothing. */
    @Benchmark
    public boolean rangeAcquireAndRelease(Ranges r) {
        long page = 2L * r.random.nextInt(HELD) + 1;
        boolean exclusive = r.random.nextBoolean();
        boolean conflict = r.index.conflictsWithAny(page * PAGE, (page + 1) * PAGE, exclusive);
        r.index.add(-1, page * PAGE, (page + 1) * PAGE, exclusive);
        r.index.remove(-1);
        return conflict;
    }

    /** The conflicts of a 64 KiB claim over 8 held ranges (a writer's "who blocks me"). */
    @Benchmark
    public int rangeConflictsOfAWideWriter(Ranges r) {
        long page = 2L * r.random.nextInt(HELD - 16);
        return r.index.conflicts(page * PAGE, (page + 16) * PAGE, true).size();
    }

    @State(Scope.Thread)
    public static class Paths {
        final PathIndex index = new PathIndex();
        final Random random = new Random(1);

        @Setup(Level.Trial)
        public void fill() {
            for (long i = 0; i < HELD; i++) {
                index.add(i, "/data/" + (i % 100) + "/" + i, i % 7 == 0);
            }
        }
    }

    /** Check, hold and let go of one new file's path beside 100,000 held paths of the same tree. */
    @Benchmark
    public boolean pathAcquireAndRelease(Paths p) {
        String path = "/data/" + p.random.nextInt(100) + "/new-" + p.random.nextInt(HELD);
        boolean exclusive = p.random.nextBoolean();
        boolean conflict = p.index.conflictsWithAny(path, exclusive);
        p.index.add(-1, path, exclusive);
        p.index.remove(-1);
        return conflict;
    }
}

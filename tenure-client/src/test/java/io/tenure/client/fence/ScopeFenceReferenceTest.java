package io.tenure.client.fence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.tenure.client.Scope;
import io.tenure.client.fence.FenceGuard.Mode;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * {@link InMemoryScopeFenceGuard} against a brute-force reference over thousands of seeded
 * sequences: the reference keeps the list of every accepted write and decides each new one
 * pairwise with {@link Scope#overlaps}, and decides coverage byte by byte (or by walking a path's
 * ancestors), sharing no code with the guard.
 */
class ScopeFenceReferenceTest {
    private static final int SEQUENCES = 1_500;
    private static final int STEPS = 60;

    /** A write as the reference saw it accepted. */
    private record Write(Scope region, long token) {
    }

    @Test
    void byteRangesAgreeWithThePairwiseReference() {
        long accepted = 0;
        long stale = 0;
        long mismatched = 0;
        for (long seed = 1; seed <= SEQUENCES; seed++) {
            Random random = new Random(seed);
            Mode mode = seed % 2 == 0 ? Mode.AT_LEAST : Mode.STRICTLY_GREATER;
            InMemoryScopeFenceGuard guard = InMemoryScopeFenceGuard.of(mode);
            List<Write> writes = new ArrayList<>();
            int span = seed % 3 == 0 ? 8 : 64;
            long granted = 0;
            for (int step = 0; step < STEPS; step++) {
                long token = granted == 0 || random.nextInt(3) == 0 ? ++granted : 1 + random.nextInt((int) granted);
                List<Scope> held = new ArrayList<>();
                int parts = random.nextInt(4);
                for (int p = 0; p < parts; p++) {
                    held.add(randomRange(random, span, 0.05));
                }
                Scope region = randomRange(random, span, 0.1);
                if (random.nextInt(3) > 0) {
                    held.add(random.nextInt(8) == 0 ? Scope.inode(inodeOf(region)) : region); // usually covered
                }
                ScopedToken scoped = new ScopedToken(token, held);
                String where = "seed " + seed + " step " + step + ": " + scoped + " writes " + region;

                boolean covered = coveredBytewise(held, region);
                long highest = 0;
                for (Write write : writes) {
                    if (write.region().overlaps(region)) {
                        highest = Math.max(highest, write.token());
                    }
                }
                boolean admitted = mode == Mode.AT_LEAST ? token >= highest : token > highest;
                assertThat(guard.highestAccepted(region)).as(where).isEqualTo(highest);
                try {
                    guard.check(scoped, region);
                    if (!covered || !admitted) {
                        fail(where + ": accepted, but covered=" + covered + ", highest overlapping=" + highest);
                    }
                    writes.add(new Write(region, token));
                    accepted++;
                } catch (LockScopeMismatchException mismatch) {
                    assertThat(covered).as(where).isFalse();
                    mismatched++;
                } catch (StaleTokenException refused) {
                    assertThat(covered).as(where).isTrue();
                    assertThat(admitted).as(where).isFalse();
                    assertThat(refused.highestAccepted()).as(where).isEqualTo(highest);
                    stale++;
                }
                for (long inode = 0; step % 10 == 9 && inode < 3; inode++) { // the reference's runs are slow to count
                    assertThat(guard.segments(inode)).as(where + ": the segments of inode " + inode)
                            .isEqualTo(canonicalRuns(writes, inode, span));
                }
            }
        }
        assertThat(accepted).isGreaterThan(SEQUENCES * 10L);
        assertThat(stale).isGreaterThan(SEQUENCES * 5L);
        assertThat(mismatched).isGreaterThan(SEQUENCES * 5L);
    }

    @Test
    void pathsAgreeWithThePairwiseReference() {
        List<String> tree = new ArrayList<>(List.of("/"));
        for (String a : List.of("a", "b", "ab")) {
            tree.add("/" + a);
            for (String b : List.of("a", "b")) {
                tree.add("/" + a + "/" + b);
                tree.add("/" + a + "/" + b + "/c");
            }
        }
        for (long seed = 1; seed <= SEQUENCES; seed++) {
            Random random = new Random(seed);
            Mode mode = seed % 2 == 0 ? Mode.AT_LEAST : Mode.STRICTLY_GREATER;
            InMemoryScopeFenceGuard guard = InMemoryScopeFenceGuard.of(mode);
            List<Write> writes = new ArrayList<>();
            long granted = 0;
            for (int step = 0; step < STEPS; step++) {
                long token = granted == 0 || random.nextInt(3) == 0 ? ++granted : 1 + random.nextInt((int) granted);
                Scope region = Scope.path(tree.get(random.nextInt(tree.size())));
                Scope heldPath = Scope.path(tree.get(random.nextInt(tree.size())));
                ScopedToken scoped = ScopedToken.of(token, heldPath);
                String where = "seed " + seed + " step " + step + ": " + scoped + " writes " + region;

                boolean covered = ancestorsOrSelf(((Scope.Path) region).path()).contains(((Scope.Path) heldPath).path());
                long highest = 0;
                for (Write write : writes) {
                    if (write.region().overlaps(region)) {
                        highest = Math.max(highest, write.token());
                    }
                }
                boolean admitted = mode == Mode.AT_LEAST ? token >= highest : token > highest;
                assertThat(guard.highestAccepted(region)).as(where).isEqualTo(highest);
                try {
                    guard.check(scoped, region);
                    if (!covered || !admitted) {
                        fail(where + ": accepted, but covered=" + covered + ", highest overlapping=" + highest);
                    }
                    writes.add(new Write(region, token));
                } catch (LockScopeMismatchException mismatch) {
                    assertThat(covered).as(where).isFalse();
                } catch (StaleTokenException refused) {
                    assertThat(covered && !admitted).as(where).isTrue();
                    assertThat(refused.highestAccepted()).as(where).isEqualTo(highest);
                }
                assertThat(guard.paths()).as(where).isLessThanOrEqualTo(tree.size());
            }
        }
    }

    /** A range of inode 0, 1 or 2 inside {@code [0, span)}, or now and then the inode whole. */
    private static Scope randomRange(Random random, int span, double wholeInode) {
        long inode = random.nextInt(3);
        if (random.nextDouble() < wholeInode) {
            return Scope.inode(inode);
        }
        long start = random.nextInt(span);
        long end = start + 1 + random.nextInt(Math.max(1, (int) (span - start) / 2));
        return Scope.byteRange(inode, start, end);
    }

    private static long inodeOf(Scope region) {
        return region instanceof Scope.Inode i ? i.inode() : ((Scope.ByteRange) region).inode();
    }

    /** Covered if the inode is held whole, or (for a range) each byte lies in some held range. */
    private static boolean coveredBytewise(List<Scope> held, Scope region) {
        long inode = inodeOf(region);
        if (held.contains(Scope.inode(inode))) {
            return true;
        }
        if (!(region instanceof Scope.ByteRange range)) {
            return false;
        }
        for (long b = range.start(); b < range.end(); b++) {
            boolean byteHeld = false;
            for (Scope scope : held) {
                if (scope instanceof Scope.ByteRange h && h.inode() == inode && h.start() <= b && b < h.end()) {
                    byteHeld = true;
                }
            }
            if (!byteHeld) {
                return false;
            }
        }
        return true;
    }

    /**
     * The number of maximal runs of bytes of {@code inode} whose highest accepted token is one
     * non-zero value: the elementary intervals between all write boundaries, each with the highest
     * token of the writes covering it, adjacent ones of equal token counted once.
     */
    private static int canonicalRuns(List<Write> writes, long inode, int span) {
        TreeSet<Long> points = new TreeSet<>(List.of(0L, (long) span, Long.MAX_VALUE));
        for (Write write : writes) {
            if (write.region() instanceof Scope.ByteRange r && r.inode() == inode) {
                points.add(r.start());
                points.add(r.end());
            }
        }
        int runs = 0;
        long previous = 0;
        Long from = points.first();
        for (Long to : points.tailSet(from, false)) {
            long highest = 0;
            for (Write write : writes) {
                if (write.region().overlaps(Scope.byteRange(inode, from, to))) {
                    highest = Math.max(highest, write.token());
                }
            }
            if (highest != 0 && highest != previous) {
                runs++;
            }
            previous = highest;
            from = to;
        }
        return runs;
    }

    private static List<String> ancestorsOrSelf(String path) {
        List<String> paths = new ArrayList<>();
        String p = path;
        while (true) {
            paths.add(p);
            if (p.equals("/")) {
                return paths;
            }
            int slash = p.lastIndexOf('/');
            p = slash == 0 ? "/" : p.substring(0, slash);
        }
    }
}

package io.tenure.core.scope;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Scopes of every kind in one index: conflicts as seed 003 says, against a pairwise reference. */
class ScopeIndexTest {

    @Test
    void seed003sConflicts() {
        ScopeIndex index = new ScopeIndex();
        index.add(1, new LockScope.ByteRange(42, 0, 100), true);
        index.add(2, new LockScope.Path("/a/b"), false);
        index.add(3, new LockScope.Named("job"), true);

        assertThat(index.conflicts(new LockScope.Inode(42), false)).as("an inode-wide lock meets every range of it").containsExactly(1L);
        assertThat(index.conflicts(new LockScope.ByteRange(42, 200, 300), true)).as("a writer to [200,300)").isEmpty();
        assertThat(index.conflicts(new LockScope.ByteRange(43, 0, 100), true)).as("another inode").isEmpty();
        assertThat(index.conflicts(new LockScope.Path("/a"), true)).as("an ancestor, exclusive").containsExactly(2L);
        assertThat(index.conflicts(new LockScope.Path("/a/b/c"), false)).as("a descendant, both shared").isEmpty();
        assertThat(index.conflicts(new LockScope.Named("job"), false)).containsExactly(3L);
        assertThat(index.conflicts(new LockScope.Named("other"), true)).isEmpty();

        index.add(4, new LockScope.Inode(42), false);
        assertThat(index.conflicts(new LockScope.ByteRange(42, 500, 600), true)).as("a range under an inode-wide reader").containsExactly(4L);
        assertThat(index.scopeOf(4)).isEqualTo(new LockScope.Inode(42));
        assertThat(index.remove(1)).isTrue();
        assertThat(index.remove(1)).isFalse();
        assertThat(index.conflicts(new LockScope.Inode(42), true)).containsExactly(4L);
        assertThatThrownBy(() -> index.add(4, new LockScope.Named("x"), true)).hasMessageContaining("hold 4 already holds inode 42");
    }

    @Test
    void badScopesAreRefusedNamingTheField() {
        assertThatThrownBy(() -> new LockScope.ByteRange(1, 100, 100)).hasMessageContaining("end must be above its start");
        assertThatThrownBy(() -> new LockScope.ByteRange(1, -5, 100)).hasMessageContaining("start must not be negative");
        assertThatThrownBy(() -> new LockScope.ByteRange(-1, 0, 100)).hasMessageContaining("inode must not be negative");
        assertThatThrownBy(() -> new LockScope.Inode(-7)).hasMessageContaining("inode must not be negative");
        assertThatThrownBy(() -> new LockScope.Path("/a/\u0000")).hasMessageContaining("control characters");
        assertThatThrownBy(() -> new LockScope.Named("")).hasMessageContaining("name must not be empty");
        assertThat(new LockScope.Path("//a/./b/")).isEqualTo(new LockScope.Path("/a/b"));
    }

    @Test
    void agreesWithAPairwiseCheckOverThousandsOfSeededSequences() {
        for (long seed = 1; seed <= 2_000; seed++) {
            Random random = new Random(seed);
            ScopeIndex index = new ScopeIndex();
            Map<Long, Object[]> held = new LinkedHashMap<>(); // hold → {scope, exclusive}
            long nextHold = 1;
            for (int step = 0; step < 40; step++) {
                if (!held.isEmpty() && random.nextInt(3) == 0) {
                    List<Long> ids = new ArrayList<>(held.keySet());
                    long gone = ids.get(random.nextInt(ids.size()));
                    held.remove(gone);
                    assertThat(index.remove(gone)).isTrue();
                } else {
                    LockScope scope = randomScope(random);
                    boolean exclusive = random.nextBoolean();
                    index.add(nextHold, scope, exclusive);
                    held.put(nextHold++, new Object[] {scope, exclusive});
                }
                LockScope claim = randomScope(random);
                boolean exclusive = random.nextBoolean();
                List<Long> expected = held.entrySet().stream()
                        .filter(e -> LockScope.conflicts((LockScope) e.getValue()[0], (Boolean) e.getValue()[1], claim, exclusive))
                        .map(Map.Entry::getKey).sorted().toList();
                assertThat(index.conflicts(claim, exclusive)).as("seed %d step %d: %s %s", seed, step, claim,
                        exclusive ? "exclusive" : "shared").isEqualTo(expected);
                assertThat(index.size()).isEqualTo(held.size());
            }
        }
    }

    private static LockScope randomScope(Random random) {
        long inode = random.nextInt(3);
        switch (random.nextInt(4)) {
            case 0:
                return new LockScope.Named("n" + random.nextInt(3));
            case 1:
                return new LockScope.Inode(inode);
            case 2: {
                long start = random.nextInt(100);
                return new LockScope.ByteRange(inode, start, start + 1 + random.nextInt(40));
            }
            default: {
                StringBuilder path = new StringBuilder();
                for (int i = random.nextInt(4); i > 0; i--) {
                    path.append('/').append((char) ('a' + random.nextInt(3)));
                }
                return new LockScope.Path(path.length() == 0 ? "/" : path.toString());
            }
        }
    }
}

package io.tenure.core.scope;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Paths of one tree: conflicts with ancestors and descendants, not siblings, against a brute-force reference. */
class PathIndexTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
            "/, /",
            "/a, /a",
            "/a/, /a",
            "//a//b///, /a/b",
            "/a/./b/., /a/b",
            "/a/b/.., /a",
            "/a/b/../../c, /c",
            "/a/.., /",
            "/.../b, /.../b",
            "/a b/c, /a b/c",
    })
    void pathsAreNormalized(String given, String normal) {
        assertThat(PathIndex.normalize(given)).isEqualTo(normal);
    }

    @Test
    void badPathsAreRefusedNamingWhatIsWrong() {
        assertThatThrownBy(() -> PathIndex.normalize("")).hasMessageContaining("must not be empty");
        assertThatThrownBy(() -> PathIndex.normalize(null)).hasMessageContaining("must not be empty");
        assertThatThrownBy(() -> PathIndex.normalize("a/b")).hasMessageContaining("must be absolute");
        assertThatThrownBy(() -> PathIndex.normalize("/a\u0000b")).hasMessageContaining("control characters").hasMessageContaining("\\u0000");
        assertThatThrownBy(() -> PathIndex.normalize("/..")).hasMessageContaining("above the root");
        assertThatThrownBy(() -> PathIndex.normalize("/a/../..")).hasMessageContaining("above the root");
        assertThatThrownBy(() -> PathIndex.normalize("/" + "x".repeat(PathIndex.MAX_PATH_LENGTH))).hasMessageContaining("longer than");
        PathIndex index = new PathIndex();
        index.add(1, "/a", true);
        assertThatThrownBy(() -> index.add(2, "/a\u0000", true)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> index.add(1, "/b", true)).hasMessageContaining("hold 1 already holds");
        assertThat(index.size()).isEqualTo(1);
    }

    @Test
    void aPathConflictsWithItsAncestorsAndDescendantsNotItsSiblings() {
        PathIndex index = new PathIndex();
        index.add(1, "/a/b", true);
        assertThat(holds(index.conflicts("/a", true))).as("an ancestor").containsExactly(1L);
        assertThat(holds(index.conflicts("/a/b/c", false))).as("a descendant").containsExactly(1L);
        assertThat(holds(index.conflicts("/a/c", true))).as("a sibling").isEmpty();
        assertThat(holds(index.conflicts("/a/bc", true))).as("a name that only starts alike").isEmpty();
        assertThat(holds(index.conflicts("//a/./b/", true))).as("the same path, written otherwise").containsExactly(1L);
        assertThat(holds(index.conflicts("/", true))).as("the root is everyone's ancestor").containsExactly(1L);

        index.add(2, "/a", false);
        index.add(3, "/a/b/c/d", false);
        assertThat(holds(index.conflicts("/a/b/c", false))).as("a reader meets only writers").containsExactly(1L);
        assertThat(index.conflicts("/a/b/c", true)).as("a writer meets everyone on its line, root down")
                .extracting(PathIndex.Held::path).containsExactly("/a", "/a/b", "/a/b/c/d");
        assertThat(index.remove(1)).isTrue();
        assertThat(holds(index.conflicts("/a/b/c", false))).isEmpty();
        assertThat(index.remove(3)).isTrue();
        assertThat(index.remove(2)).isTrue();
        assertThat(index.isEmpty()).isTrue();
        assertThat(holds(index.conflicts("/a", true))).isEmpty();
    }

    @Test
    void agreesWithAPairwiseCheckOverThousandsOfSeededSequences() {
        String[] names = {"a", "b", "c"};
        for (long seed = 1; seed <= 2_000; seed++) {
            Random random = new Random(seed);
            PathIndex index = new PathIndex();
            Map<Long, Object[]> held = new LinkedHashMap<>(); // hold → {path, exclusive}
            long nextHold = 0;
            for (int step = 0; step < 50; step++) {
                if (!held.isEmpty() && random.nextInt(3) == 0) {
                    List<Long> ids = new ArrayList<>(held.keySet());
                    long gone = ids.get(random.nextInt(ids.size()));
                    held.remove(gone);
                    assertThat(index.remove(gone)).isTrue();
                } else {
                    String path = randomPath(random, names);
                    boolean exclusive = random.nextBoolean();
                    index.add(nextHold, path, exclusive);
                    held.put(nextHold++, new Object[] {path, exclusive});
                }
                String claim = randomPath(random, names);
                boolean exclusive = random.nextBoolean();
                List<Long> expected = held.entrySet().stream()
                        .filter(e -> related((String) e.getValue()[0], claim) && (exclusive || (Boolean) e.getValue()[1]))
                        .map(Map.Entry::getKey).sorted().toList();
                List<Long> actual = new ArrayList<>(holds(index.conflicts(claim, exclusive)));
                actual.sort(null);
                assertThat(actual).as("seed %d step %d: %s %s", seed, step, claim, exclusive ? "exclusive" : "shared")
                        .isEqualTo(expected);
                assertThat(index.conflictsWithAny(claim, exclusive)).isEqualTo(!expected.isEmpty());
            }
        }
    }

    @Test
    void aHundredThousandPathsUnderOneTree() {
        PathIndex index = new PathIndex();
        for (long i = 0; i < 100_000; i++) {
            index.add(i, "/data/" + (i % 100) + "/" + i, i % 7 == 0);
        }
        assertThat(holds(index.conflicts("/data/42/4242", true))).containsExactly(4242L);
        assertThat(holds(index.conflicts("/data/43/4242", true))).isEmpty();
        assertThat(index.conflicts("/data/1", false)).as("the writers under /data/1").hasSize(143)
                .allSatisfy(h -> assertThat(h.exclusive()).isTrue());
        assertThat(index.conflictsWithAny("/data", true)).isTrue();
    }

    /** Whether one path is the other, or an ancestor of it. */
    private static boolean related(String a, String b) {
        return a.equals(b) || a.equals("/") || b.equals("/") || a.startsWith(b + "/") || b.startsWith(a + "/");
    }

    private static String randomPath(Random random, String[] names) {
        int depth = random.nextInt(4);
        StringBuilder path = new StringBuilder();
        for (int i = 0; i < depth; i++) {
            path.append('/').append(names[random.nextInt(names.length)]);
        }
        return path.length() == 0 ? "/" : path.toString();
    }

    private static List<Long> holds(List<PathIndex.Held> held) {
        return held.stream().map(PathIndex.Held::hold).toList();
    }
}

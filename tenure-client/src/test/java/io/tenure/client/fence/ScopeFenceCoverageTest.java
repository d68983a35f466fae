package io.tenure.client.fence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.Scope;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which regions a {@link ScopedToken} covers: the scope half of the fence (seed 003's LockScopeMismatch). */
class ScopeFenceCoverageTest {

    @Test
    void aByteRangeIsCoveredInsideAHeldRangeOrAHeldInode() {
        ScopedToken ranges = ScopedToken.of(7, Scope.byteRange(42, 100, 200));

        assertThat(ranges.covers(Scope.byteRange(42, 100, 200))).isTrue();
        assertThat(ranges.covers(Scope.byteRange(42, 150, 160))).isTrue();
        assertThat(ranges.covers(Scope.byteRange(42, 50, 150))).as("starts before the held range").isFalse();
        assertThat(ranges.covers(Scope.byteRange(42, 150, 250))).as("ends after it").isFalse();
        assertThat(ranges.covers(Scope.byteRange(42, 200, 201))).as("the end is exclusive").isFalse();
        assertThat(ranges.covers(Scope.byteRange(43, 100, 200))).as("another inode").isFalse();
        assertThat(ranges.covers(Scope.inode(42))).as("a range is not the inode").isFalse();

        ScopedToken inode = ScopedToken.of(7, Scope.inode(42));
        assertThat(inode.covers(Scope.byteRange(42, 0, Long.MAX_VALUE))).isTrue();
        assertThat(inode.covers(Scope.inode(42))).isTrue();
        assertThat(inode.covers(Scope.byteRange(43, 0, 1))).isFalse();
        assertThat(inode.covers(Scope.inode(43))).isFalse();
    }

    @Test
    void adjacentHeldRangesCoverAWriteAcrossTheirBoundaryButAGapDoesNot() {
        ScopedToken adjacent = ScopedToken.of(7, Scope.byteRange(42, 100, 200), Scope.byteRange(42, 0, 100));
        assertThat(adjacent.covers(Scope.byteRange(42, 50, 150))).isTrue();
        assertThat(adjacent.covers(Scope.byteRange(42, 0, 200))).isTrue();

        ScopedToken gap = ScopedToken.of(7, Scope.byteRange(42, 0, 100), Scope.byteRange(42, 101, 200));
        assertThat(gap.covers(Scope.byteRange(42, 50, 150))).isFalse();
        assertThat(gap.covers(Scope.byteRange(42, 101, 150))).isTrue();

        ScopedToken otherInode = ScopedToken.of(7, Scope.byteRange(42, 0, 100), Scope.byteRange(43, 100, 200));
        assertThat(otherInode.covers(Scope.byteRange(42, 50, 150))).isFalse();
    }

    @Test
    void aPathIsCoveredByItselfOrAHeldAncestorNotBySiblingsOrDescendants() {
        ScopedToken dir = ScopedToken.of(7, Scope.path("/data/a"));

        assertThat(dir.covers(Scope.path("/data/a"))).isTrue();
        assertThat(dir.covers(Scope.path("/data/a/b/c"))).isTrue();
        assertThat(dir.covers(Scope.path("/data/a/./b/../c/"))).as("normalized by Scope").isTrue();
        assertThat(dir.covers(Scope.path("/data"))).as("an ancestor").isFalse();
        assertThat(dir.covers(Scope.path("/data/b"))).as("a sibling").isFalse();
        assertThat(dir.covers(Scope.path("/data/ab"))).as("a sibling sharing the prefix").isFalse();
        assertThat(dir.covers(Scope.path("/"))).isFalse();

        ScopedToken root = ScopedToken.of(7, Scope.path("/"));
        assertThat(root.covers(Scope.path("/"))).isTrue();
        assertThat(root.covers(Scope.path("/any/thing"))).isTrue();
    }

    @Test
    void pathsInodesAndNamesNeverCoverEachOther() {
        ScopedToken everything = ScopedToken.of(7, Scope.path("/"), Scope.inode(1), Scope.named("invoices"));

        assertThat(everything.covers(Scope.inode(2))).isFalse();
        assertThat(everything.covers(Scope.byteRange(2, 0, 10))).isFalse();
        assertThat(everything.covers(Scope.named("payroll"))).isFalse();
        assertThat(everything.covers(Scope.named("invoices"))).isTrue();
        assertThat(ScopedToken.of(7, Scope.inode(1)).covers(Scope.path("/1"))).isFalse();
        assertThat(ScopedToken.of(7, Scope.named("/a")).covers(Scope.path("/a"))).isFalse();
        assertThat(ScopedToken.of(7).covers(Scope.byteRange(1, 0, 1))).as("a token of no scopes covers nothing").isFalse();
    }

    @Test
    void aTokenIsPositiveAndItsScopesAreCopied() {
        List<Scope> scopes = new ArrayList<>(List.of(Scope.byteRange(42, 0, 10)));
        ScopedToken token = new ScopedToken(7, scopes);
        scopes.add(Scope.inode(42));

        assertThat(token.scopes()).containsExactly(Scope.byteRange(42, 0, 10));
        assertThatThrownBy(() -> token.scopes().add(Scope.inode(1))).isInstanceOf(UnsupportedOperationException.class);
        assertThat(token).isEqualTo(ScopedToken.of(7, Scope.byteRange(42, 0, 10)))
                .hasToString("token 7 for [range 42:0-10]");

        assertThatThrownBy(() -> ScopedToken.of(0, Scope.inode(1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("token").hasMessageContaining("0");
        assertThatThrownBy(() -> ScopedToken.of(-3, Scope.inode(1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("token").hasMessageContaining("-3");
        assertThatThrownBy(() -> new ScopedToken(1, null)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("scopes");
        assertThatThrownBy(() -> ScopedToken.of(1, (Scope[]) null)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("scopes");
        assertThatThrownBy(() -> new ScopedToken(1, Arrays.asList(Scope.inode(1), null))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("scopes");
        assertThatThrownBy(() -> token.covers(null)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("region");
    }
}

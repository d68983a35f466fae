package io.tenure.client;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One part of a set of scopes asked for together ({@link TenureClient#lockAll(java.util.List)}):
 * a {@link Scope} and how it is to be held. Two parts of different leases
 * {@linkplain #conflicts conflict} when their scopes overlap and at least one is exclusive.
 *
 * @param scope what the part covers
 * @param mode  alone ({@link ScopeMode#EXCLUSIVE}) or beside other shared holders ({@link ScopeMode#SHARED})
 */
public record ScopePart(Scope scope, ScopeMode mode) {
    /** The most parts one set may have. */
    public static final int MAX_PARTS = 64;

    public ScopePart {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(mode, "mode");
    }

    /** {@code scope}, held alone. */
    public static ScopePart exclusive(Scope scope) {
        return new ScopePart(scope, ScopeMode.EXCLUSIVE);
    }

    /** {@code scope}, held beside other shared holders. */
    public static ScopePart shared(Scope scope) {
        return new ScopePart(scope, ScopeMode.SHARED);
    }

    /**
     * Checks {@code parts} as one set, as the member takes them, and returns them copied: 1 to
     * {@value #MAX_PARTS} parts, no named scope (a name is a plain lock, taken alone), none twice,
     * no two overlapping (a set holds each byte, path or inode once). The SDK's set calls check
     * this before anything is sent; a tool reading a set from its user can check it early.
     *
     * @throws IllegalArgumentException naming the offending parts
     */
    public static List<ScopePart> checkSet(List<ScopePart> parts) {
        Objects.requireNonNull(parts, "parts");
        if (parts.isEmpty() || parts.size() > MAX_PARTS) {
            throw new IllegalArgumentException("a set of scopes has 1 to " + MAX_PARTS + " parts, got " + parts.size());
        }
        Set<Scope> seen = new HashSet<>();
        for (int i = 0; i < parts.size(); i++) {
            ScopePart part = parts.get(i);
            if (part == null) {
                throw new IllegalArgumentException("part " + (i + 1) + " of " + parts.size() + " is null");
            }
            if (part.scope() instanceof Scope.Named named) {
                throw new IllegalArgumentException("a named scope ('" + named.name() + "') cannot be part of a set: a set holds inodes, "
                        + "paths and byte ranges; a name is a plain lock, taken alone with lock(Scope.named(...), mode) or lock(String)");
            }
            if (!seen.add(part.scope())) {
                throw new IllegalArgumentException("the set names " + part.scope() + " twice (parts " + (indexOf(parts, part.scope()) + 1)
                        + " and " + (i + 1) + ")");
            }
            for (int j = 0; j < i; j++) {
                if (parts.get(j).scope().overlaps(part.scope())) {
                    throw new IllegalArgumentException("parts " + (j + 1) + " (" + parts.get(j).scope() + ") and " + (i + 1) + " ("
                            + part.scope() + ") overlap: a set holds each byte, path or inode once; ask for one part that covers both");
                }
            }
        }
        return List.copyOf(parts);
    }

    private static int indexOf(List<ScopePart> parts, Scope scope) {
        for (int i = 0; i < parts.size(); i++) {
            if (parts.get(i).scope().equals(scope)) {
                return i;
            }
        }
        return -1;
    }

    /** Whether a lease holding this part keeps another lease from holding {@code other}. */
    public boolean conflicts(ScopePart other) {
        return ScopeMode.conflicts(scope, mode, other.scope, other.mode);
    }

    /** The scope and the mode, as in {@code range 42:0-4096 exclusive}. */
    @Override
    public String toString() {
        return scope + " " + mode.name().toLowerCase(java.util.Locale.ROOT);
    }
}

package io.tenure.core.access;

/**
 * {@code level} on the names of primitive {@code kind} ({@code "*"}: every kind) that start with
 * {@code prefix} ({@code ""}: every name).
 */
public record Permission(String kind, String prefix, Level level) implements Comparable<Permission> {
    /** Whether it covers name {@code name} of kind {@code kind} at {@code needed}. */
    public boolean covers(String kind, String name, Level needed) {
        return (this.kind.equals("*") || this.kind.equals(kind)) && name.startsWith(prefix) && level.allows(needed);
    }

    /** By kind, then prefix: a role's permissions in a fixed order. */
    @Override
    public int compareTo(Permission other) {
        int byKind = kind.compareTo(other.kind);
        return byKind != 0 ? byKind : prefix.compareTo(other.prefix);
    }
}

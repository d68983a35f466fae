package io.tenure.core.access;

/** What a permission allows, each level including the ones before it. */
public enum Level {
    /** Describe, list, get, watch. */
    READ,
    /** Acquire, release, put, push, publish: changing what one holds or owns. */
    WRITE,
    /** Release or revoke what another principal holds. */
    ADMIN;

    /** Whether this level allows what {@code needed} asks. */
    public boolean allows(Level needed) {
        return compareTo(needed) >= 0;
    }
}

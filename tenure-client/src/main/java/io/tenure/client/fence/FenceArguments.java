package io.tenure.client.fence;

import io.tenure.client.Scope;

/** The argument checks every guard makes before it reads or stores anything. */
final class FenceArguments {
    private FenceArguments() {
    }

    static void requireResource(String resource) {
        if (resource == null || resource.isBlank()) {
            throw new IllegalArgumentException("resource must not be null or blank, got "
                    + (resource == null ? "null" : "'" + resource + "'"));
        }
    }

    static void requireToken(long token) {
        if (token <= 0) {
            throw new IllegalArgumentException("token must be positive (fencing tokens start at 1), got " + token);
        }
    }

    static void requireScopedToken(ScopedToken token) {
        if (token == null) {
            throw new IllegalArgumentException("token must not be null: give the ScopedToken of the grant the write is made under");
        }
    }

    /** A region a {@link ScopeFenceGuard} fences: an inode, a path or a byte range. */
    static void requireRegion(Scope region) {
        if (region == null) {
            throw new IllegalArgumentException("region must not be null: give the inode, path or byte range the write touches");
        }
        if (region instanceof Scope.Named) {
            throw new IllegalArgumentException("region must be an inode, a path or a byte range, got " + region
                    + ": fence a named lock's writes per resource with FenceGuard");
        }
    }
}

package io.tenure.client.fence;

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
}

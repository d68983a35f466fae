package io.tenure.core;

import java.io.IOException;

/** A snapshot that cannot be read: not a snapshot, an unknown format version, truncated, or corrupt. */
public final class SnapshotFormatException extends IOException {
    public SnapshotFormatException(String message) {
        super(message);
    }

    public SnapshotFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}

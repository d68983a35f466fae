package io.tenure.core.kernel;

import java.io.IOException;

/**
 * Bytes that are not a command this build knows: an unknown type tag (written by a newer build)
 * or a damaged field. Applying a guess would make members diverge, so the reader stops.
 */
public final class CommandFormatException extends IOException {
    public CommandFormatException(String message) {
        super(message);
    }
}

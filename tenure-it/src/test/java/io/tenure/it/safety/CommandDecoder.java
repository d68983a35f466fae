package io.tenure.it.safety;

import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.core.TenureState;
import io.tenure.core.kernel.Command;

import java.io.IOException;
import java.util.Base64;

/**
 * Rebuilds a core command from the audit log's JSON ({@code io.tenure.server.raft.AuditLog#command}):
 * from its log encoding ({@code bytes}), with the core's own codec, so that every primitive's
 * commands are read without a line here.
 */
final class CommandDecoder {
    private CommandDecoder() {
    }

    /** @throws IllegalArgumentException for a command this build cannot read */
    static Command decode(JsonNode n) {
        if (!n.hasNonNull("bytes")) {
            throw new IllegalArgumentException("command has no bytes in " + n);
        }
        try {
            return TenureState.CODEC.decode(Base64.getDecoder().decode(n.get("bytes").asText()));
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalArgumentException("cannot read command " + n + ": " + e.getMessage(), e);
        }
    }
}

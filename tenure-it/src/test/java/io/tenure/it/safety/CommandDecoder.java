package io.tenure.it.safety;

import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.core.Command;
import java.util.Base64;

/** Rebuilds core commands from the audit log's JSON ({@code io.tenure.server.raft.AuditLog#command}). */
final class CommandDecoder {
    private CommandDecoder() {
    }

    /** @throws IllegalArgumentException for a command type this checker does not know */
    static Command decode(JsonNode n) {
        String type = n.path("type").asText();
        return switch (type) {
            case "LeaseGrant" -> new Command.LeaseGrant(n.path("leaseId").asLong(), n.path("ttlMillis").asLong(), text(n, "clientId"));
            case "LeaseRenew" -> {
                JsonNode ids = n.path("leaseIds");
                long[] leaseIds = new long[ids.size()];
                for (int i = 0; i < leaseIds.length; i++) {
                    leaseIds[i] = ids.get(i).asLong();
                }
                yield new Command.LeaseRenew(leaseIds);
            }
            case "LeaseRevoke" -> new Command.LeaseRevoke(n.path("leaseId").asLong());
            case "LeaseExpire" -> new Command.LeaseExpire(n.path("leaseId").asLong(), n.path("renewedAt").asLong());
            case "LockAcquire" -> new Command.LockAcquire(text(n, "key"), n.path("leaseId").asLong(),
                    n.hasNonNull("metadata") ? Base64.getDecoder().decode(n.get("metadata").asText()) : null,
                    n.path("queue").asBoolean());
            case "LockCancel" -> new Command.LockCancel(text(n, "key"), n.path("leaseId").asLong());
            case "LockRelease" -> new Command.LockRelease(text(n, "key"), n.path("leaseId").asLong(), n.path("token").asLong());
            case "MemberEndpoint" -> new Command.MemberEndpoint(text(n, "member"), text(n, "clientEndpoint"));
            case "ReadBarrier" -> new Command.ReadBarrier();
            default -> throw new IllegalArgumentException("unknown command type '" + type + "' in " + n);
        };
    }

    private static String text(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }
}

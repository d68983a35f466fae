package io.tenure.client;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Who leads an election: the leader's lease and client id, its fencing token (the revision of its
 * election; a resource fenced with it refuses a deposed leader), its value, and the revision of
 * that value (its election, or its last proclaim).
 */
public record LeaderInfo(String name, long leaseId, String clientId, long fencingToken, byte[] value, long revision) {

    public LeaderInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(clientId, "clientId");
        value = value == null ? new byte[0] : value.clone();
    }

    /** A copy: the record's array is not handed out. */
    @Override
    public byte[] value() {
        return value.clone();
    }

    /** The value as UTF-8 text. */
    public String valueAsString() {
        return new String(value, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "LeaderInfo{name='" + name + "', lease=" + leaseId + ", client='" + clientId + "', fencingToken=" + fencingToken
                + ", value=" + value.length + " bytes, revision=" + revision + "}";
    }
}

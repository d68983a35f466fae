package io.tenure.core.member;

import io.tenure.core.kernel.ApplyContext;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.CommandType;
import io.tenure.core.kernel.Leases;
import io.tenure.core.kernel.Primitive;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Wire;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Member name → the client endpoint it announced: how any member names the leader's endpoint. */
public final class MemberEndpoints implements Primitive {
    static final int MAX_MEMBER_CHARS = 64;
    static final int MAX_ENDPOINT_CHARS = 256;
    private static final int MAX_FIELD_BYTES = 1 << 20;

    public static final Kind KIND = new Kind("member", List.of(
            new CommandType<>(8, MemberEndpoint.class, (c, out) -> {
                Wire.writeString(out, c.member());
                Wire.writeString(out, c.clientEndpoint());
            }, in -> new MemberEndpoint(Wire.readString(in, MAX_FIELD_BYTES), Wire.readString(in, MAX_FIELD_BYTES)))));

    private final TreeMap<String, String> endpoints = new TreeMap<>();

    /** Member endpoints are the cluster's own bookkeeping, not a resource to watch. */
    @Override
    public boolean watched() {
        return false;
    }

    @Override
    public Kind kind() {
        return KIND;
    }

    @Override
    public Result apply(ApplyContext context, Command command) {
        MemberEndpoint c = (MemberEndpoint) command;
        if (c.member() == null || c.member().isEmpty() || c.clientEndpoint() == null
                || c.member().length() > MAX_MEMBER_CHARS || c.clientEndpoint().length() > MAX_ENDPOINT_CHARS) {
            return new Result.Rejected(Result.Code.INVALID_ARGUMENT, "member endpoint needs a member name (at most "
                    + MAX_MEMBER_CHARS + " characters) and an endpoint (at most " + MAX_ENDPOINT_CHARS + ")");
        }
        endpoints.put(c.member(), c.clientEndpoint());
        return new EndpointRecorded(c.member(), c.clientEndpoint());
    }

    /** Member name → client endpoint, as announced, in name order. */
    public Map<String, String> endpoints() {
        return Collections.unmodifiableMap(endpoints);
    }

    @Override
    public void writeSnapshot(DataOutputStream out) throws IOException {
        out.writeInt(endpoints.size());
        for (Map.Entry<String, String> e : endpoints.entrySet()) {
            Wire.writeString(out, e.getKey());
            Wire.writeString(out, e.getValue());
        }
    }

    /** Snapshots of format version 1 had no endpoints. */
    @Override
    public void readSnapshot(DataInputStream in, int formatVersion, Leases leases) throws IOException {
        if (formatVersion < 2) {
            return;
        }
        int count = Wire.count(in, "member endpoint");
        for (int i = 0; i < count; i++) {
            endpoints.put(Wire.readString(in, io.tenure.core.Limits.MAX_METADATA_BYTES),
                    Wire.readString(in, io.tenure.core.Limits.MAX_METADATA_BYTES));
        }
    }
}

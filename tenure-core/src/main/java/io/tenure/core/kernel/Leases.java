package io.tenure.core.kernel;

import io.tenure.core.Limits;
import io.tenure.core.kernel.LeaseResult.EndReason;
import io.tenure.core.kernel.Result.Code;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The lease table: every live lease, and the lease commands. A lease that ends is handed to every
 * primitive in their fixed order ({@link Primitive#leaseEnded}), which release what it holds and
 * withdraw its waits; the primitives never learn of each other.
 *
 * <p>Looked up by id and by client id, never iterated unordered: reads that list leases sort
 * them by id (I8).
 */
public final class Leases {
    private final Map<Long, Lease> byId = new HashMap<>();
    /** Client id → its leases' ids: for the per-client limits. Looked up, never iterated. */
    private final Map<String, Set<Long>> byClient = new HashMap<>();
    /** Owner → its leases' ids, for the per-user quotas; leases without an owner are not in it. Looked up, never iterated. */
    private final Map<String, Set<Long>> byOwner = new HashMap<>();
    /**
     * Client id → how many names its leases hold plus how many they wait for, in the primitives
     * built on {@link Ties} (each tells {@link #tied}). Derived: kept as ties come and go, never
     * written to a snapshot (reading one makes the ties again). Looked up, never iterated.
     */
    private final Map<String, int[]> tiesByClient = new HashMap<>();
    /** As {@link #tiesByClient}, by owner; leases without an owner are not counted. */
    private final Map<String, int[]> tiesByOwner = new HashMap<>();

    /** The live lease with this id, or null. */
    public Lease get(long leaseId) {
        return byId.get(leaseId);
    }

    public int size() {
        return byId.size();
    }

    /** The live leases of client id {@code clientId}. */
    public int countOf(String clientId) {
        Set<Long> ids = byClient.get(clientId);
        return ids == null ? 0 : ids.size();
    }

    /**
     * How many names the leases of client id {@code clientId} hold plus how many they wait for, in
     * the primitives built on {@link Ties}: the sum of {@link Ties#heldCount} and {@link Ties#waitCount}
     * over those leases, without visiting them.
     */
    public int tiesOfClient(String clientId) {
        int[] count = tiesByClient.get(clientId);
        return count == null ? 0 : count[0];
    }

    /** As {@link #tiesOfClient}, for the leases owned by user {@code owner}. */
    public int tiesOfOwner(String owner) {
        int[] count = tiesByOwner.get(owner);
        return count == null ? 0 : count[0];
    }

    /**
     * Lease {@code leaseId} began ({@code delta} 1) or stopped (-1) holding, or waiting for, one
     * name in a primitive built on {@link Ties}. A lease ties names only while it lives, and its
     * end unties them before it is removed, so the lease is always found.
     */
    void tied(long leaseId, int delta) {
        Lease lease = byId.get(leaseId);
        if (lease == null) {
            return;
        }
        count(tiesByClient, lease.clientId(), delta);
        if (!lease.owner().isEmpty()) {
            count(tiesByOwner, lease.owner(), delta);
        }
    }

    private static void count(Map<String, int[]> counts, String name, int delta) {
        int[] count = counts.computeIfAbsent(name, k -> new int[1]);
        count[0] += delta;
        if (count[0] == 0) {
            counts.remove(name);
        }
    }

    /** The ids of the live leases of client id {@code clientId}, unordered (for counting only). */
    public Set<Long> idsOf(String clientId) {
        Set<Long> ids = byClient.get(clientId);
        return ids == null ? Set.of() : java.util.Collections.unmodifiableSet(ids);
    }

    /** The ids of the live leases owned by user {@code owner}, unordered (for counting only). */
    public Set<Long> idsOwnedBy(String owner) {
        Set<Long> ids = byOwner.get(owner);
        return ids == null ? Set.of() : java.util.Collections.unmodifiableSet(ids);
    }

    /** Every live lease, ordered by id. */
    public List<Lease> inIdOrder() {
        List<Lease> all = new ArrayList<>(byId.values());
        all.sort((a, b) -> Long.compare(a.id(), b.id()));
        return all;
    }

    /** The lease's not-found rejection message, in the words every primitive uses. */
    public static String notFound(long leaseId) {
        return "lease " + leaseId + " not found (never granted, expired or revoked)";
    }

    // ---- the lease commands ---------------------------------------------------------------------

    Result apply(ApplyContext context, LeaseCommand command, List<Primitive> primitives) {
        if (command instanceof LeaseRenew c) {
            return renew(context, c);
        } else if (command instanceof LeaseGrant c) {
            return grant(context, c);
        } else if (command instanceof LeaseRevoke c) {
            return revoke(context, c, primitives);
        } else if (command instanceof LeaseExpire c) {
            return expire(context, c, primitives);
        } else if (command instanceof LeaseRetime c) {
            return retime(context, c);
        }
        throw new IllegalArgumentException("unknown lease command " + command.getClass().getName());
    }

    private Result grant(ApplyContext context, LeaseGrant c) {
        String problem = firstProblem(
                c.leaseId() == 0 ? "lease id must not be 0" : null,
                Limits.checkTtl("ttl", c.ttlMillis()),
                Limits.checkClientId("client_id", c.clientId()),
                c.owner().length() > 256 ? "owner must be at most 256 characters" : null);
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        String clientId = c.clientId() == null ? "" : c.clientId();
        Lease existing = byId.get(c.leaseId());
        if (existing != null) {
            if (existing.ttlMillis() == c.ttlMillis() && existing.clientId().equals(clientId) && existing.owner().equals(c.owner())) {
                return new LeaseResult.LeaseGranted(c.leaseId(), c.ttlMillis());
            }
            return new Result.Rejected(Code.ALREADY_EXISTS, "lease " + c.leaseId() + " already exists for another client or TTL");
        }
        add(new Lease(c.leaseId(), c.ttlMillis(), clientId, c.owner(), context.position(), context.position()));
        return new LeaseResult.LeaseGranted(c.leaseId(), c.ttlMillis());
    }

    private Result renew(ApplyContext context, LeaseRenew c) {
        long[] ids = c.leaseIds();
        long[] ttls = new long[ids.length];
        for (int i = 0; i < ids.length; i++) {
            Lease lease = byId.get(ids[i]);
            if (lease != null) {
                lease.renewedAt(context.position());
                ttls[i] = lease.ttlMillis();
            }
        }
        return new LeaseResult.LeasesRenewed(ids, ttls);
    }

    private Result retime(ApplyContext context, LeaseRetime c) {
        String problem = Limits.checkTtl("ttl", c.ttlMillis());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        Lease lease = byId.get(c.leaseId());
        if (lease == null) {
            return new LeaseResult.LeasesRenewed(new long[] {c.leaseId()}, new long[] {0});
        }
        lease.ttlMillis(c.ttlMillis());
        lease.renewedAt(context.position());
        return new LeaseResult.LeasesRenewed(new long[] {c.leaseId()}, new long[] {c.ttlMillis()});
    }

    private Result revoke(ApplyContext context, LeaseRevoke c, List<Primitive> primitives) {
        Lease lease = byId.get(c.leaseId());
        if (lease == null) {
            return new Result.Rejected(Code.NOT_FOUND, notFound(c.leaseId()));
        }
        return end(context, lease, EndReason.REVOKED, primitives);
    }

    private Result expire(ApplyContext context, LeaseExpire c, List<Primitive> primitives) {
        Lease lease = byId.get(c.leaseId());
        if (lease == null) {
            return new Result.Skipped("lease " + c.leaseId() + " already ended");
        }
        if (lease.renewedAt() != c.renewedAt()) {
            return new Result.Skipped("lease " + c.leaseId() + " was renewed at " + lease.renewedAt()
                    + " after the expiry was computed against " + c.renewedAt());
        }
        return end(context, lease, EndReason.EXPIRED, primitives);
    }

    /** Every primitive, in order, releases what the lease holds and withdraws its waits; then it is gone. */
    private Result end(ApplyContext context, Lease lease, EndReason reason, List<Primitive> primitives) {
        List<String> released = new ArrayList<>();
        for (Primitive primitive : primitives) {
            primitive.leaseEnded(context, lease.id(), released);
        }
        remove(lease);
        return new LeaseResult.LeaseEnded(lease.id(), reason, List.copyOf(released));
    }

    private void add(Lease lease) {
        byId.put(lease.id(), lease);
        byClient.computeIfAbsent(lease.clientId(), k -> new HashSet<>()).add(lease.id());
        if (!lease.owner().isEmpty()) {
            byOwner.computeIfAbsent(lease.owner(), k -> new HashSet<>()).add(lease.id());
        }
    }

    private void remove(Lease lease) {
        byId.remove(lease.id());
        Set<Long> ofClient = byClient.get(lease.clientId());
        if (ofClient != null && ofClient.remove(lease.id()) && ofClient.isEmpty()) {
            byClient.remove(lease.clientId());
        }
        Set<Long> ofOwner = byOwner.get(lease.owner());
        if (ofOwner != null && ofOwner.remove(lease.id()) && ofOwner.isEmpty()) {
            byOwner.remove(lease.owner());
        }
    }

    private static String firstProblem(String... problems) {
        for (String p : problems) {
            if (p != null) {
                return p;
            }
        }
        return null;
    }

    // ---- snapshot -------------------------------------------------------------------------------

    /** The leases in id order: id, TTL, client id, owner, grant and renewal positions. */
    void write(DataOutputStream out) throws IOException {
        List<Lease> leases = inIdOrder();
        out.writeInt(leases.size());
        for (Lease lease : leases) {
            out.writeLong(lease.id());
            out.writeLong(lease.ttlMillis());
            Wire.writeString(out, lease.clientId());
            Wire.writeString(out, lease.owner());
            out.writeLong(lease.grantedAt());
            out.writeLong(lease.renewedAt());
        }
    }

    /** Reads what {@link #write} wrote at snapshot format {@code version} (owners since 7). */
    void read(DataInputStream in, int version) throws IOException {
        int count = Wire.count(in, "lease");
        for (int i = 0; i < count; i++) {
            long id = in.readLong();
            long ttl = in.readLong();
            String clientId = Wire.readString(in, Limits.MAX_METADATA_BYTES);
            String owner = version >= 7 ? Wire.readString(in, 256) : "";
            long grantedAt = in.readLong();
            add(new Lease(id, ttl, clientId, owner, grantedAt, in.readLong()));
        }
    }
}

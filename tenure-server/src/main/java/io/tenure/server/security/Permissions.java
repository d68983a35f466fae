package io.tenure.server.security;

import io.tenure.core.TenureState;
import io.tenure.core.access.AccessTable;
import io.tenure.core.access.Level;
import io.tenure.core.access.Permission;
import io.tenure.core.access.Role;
import io.tenure.core.access.User;
import io.tenure.server.PermissionDenied;
import io.tenure.server.raft.TenureStateMachine;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a principal may do: every service checks each call here, on the member that receives it,
 * against the users and roles as this member last applied them, before it proposes or reads
 * anything. A change of a role counts on each member as soon as that member applies it.
 *
 * <p>With authentication off every call is allowed, at the cost of one volatile read. With it
 * on: {@code read} shows a name (its holders, their lease ids and fencing tokens), {@code write}
 * changes it (acquire, release, put, push, publish) with the caller's own leases, and
 * {@code admin} on a name also acts with other principals' leases on it. A lease belongs to the
 * user whose call granted it; a lease granted while authentication was off belongs to nobody and
 * only {@code admin} may use it once authentication is on.
 */
public final class Permissions {
    /** The kind a permission names for leases themselves (keep-alive, revoke, list). */
    public static final String LEASE = "lease";
    /** The kind a watch needs: its events come from every kind of primitive on its keys. */
    public static final String EVERY_KIND = "*";

    /** The kinds a permission may name: every primitive's, leases', and every kind ({@value #EVERY_KIND}). */
    public static final java.util.List<String> KINDS = java.util.List.of(EVERY_KIND, "lock", "semaphore", "election", "barrier",
            "double_barrier", "latch", "counter", "kv", "list", "signal", "scope", LEASE);

    private final TenureStateMachine stateMachine;
    private final AuditTrail trail;
    private final UserHolds userHolds = new UserHolds(System::nanoTime);

    public Permissions(TenureStateMachine stateMachine, AuditTrail trail) {
        this.stateMachine = stateMachine;
        this.trail = trail;
    }

    /** What each user's leases hold and wait for on this member's count, for {@code --max-locks-per-user}. */
    public UserHolds userHolds() {
        return userHolds;
    }

    /** This member's audit trail, where the services record grants, releases and revocations. */
    public AuditTrail trail() {
        return trail;
    }

    /** The permission kind of a primitive named {@code name} in the core (its spaces become underscores). */
    public static String kind(String primitiveName) {
        return primitiveName.replace(' ', '_');
    }

    /** The owner to record for a lease {@code caller} grants: its user, or none. */
    public static String owner(Principal caller) {
        return caller.user();
    }

    /**
     * Checks that {@code caller} may do what {@code level} allows on {@code name} of {@code kind};
     * for a listing or a watch, {@code name} is its prefix, and a permission covers it when the
     * permission's prefix starts it.
     *
     * @throws PermissionDenied naming the user, the level, the kind and the name
     */
    public void require(Principal caller, String kind, String name, Level level) {
        if (!permits(caller, kind, name, level)) {
            throw refused(caller, kind, name, denied(caller, kind, name, level));
        }
    }

    /**
     * Whether {@code caller} may do what {@code level} allows on {@code name} of {@code kind}: the
     * rule {@link #require} checks, without refusing and without a line in the audit trail, for a
     * view that leaves out what may not be read (the dashboard).
     */
    public boolean permits(Principal caller, String kind, String name, Level level) {
        return !stateMachine.accessEnabled() || caller.isMember() || grants().permits(caller, kind, name, level);
    }

    /** Whether {@code caller} may read every name of every kind: authentication off, a member, or a root user. */
    public boolean readsEverything(Principal caller) {
        return !stateMachine.accessEnabled() || caller.isMember() || (!caller.isNobody() && grants().roots().contains(caller.user()));
    }

    /**
     * Checks that {@code caller} may act with lease {@code leaseId} on {@code name} of
     * {@code kind} (acquire, release, cancel, resign): {@code write} on the name and the lease is
     * its own, or {@code admin} on the name. A lease that does not exist passes here: the
     * service's own check answers for it.
     */
    public void requireWithLease(Principal caller, long leaseId, String kind, String name) {
        if (!stateMachine.accessEnabled() || caller.isMember()) {
            return;
        }
        Grants grants = grants();
        if (!grants.permits(caller, kind, name, Level.WRITE)) {
            throw refused(caller, kind, name, denied(caller, kind, name, Level.WRITE));
        }
        if (grants.permits(caller, kind, name, Level.ADMIN)) {
            return;
        }
        String refusal = notOwned(caller, new long[] {leaseId});
        if (refusal != null) {
            throw refused(caller, kind, name, new PermissionDenied(refusal + ", and it has no admin permission on " + kind + " '" + name + "'"));
        }
    }

    /**
     * Checks that {@code caller} may keep alive, revoke or look at lease {@code leaseId}: it is
     * its own, or it has {@code admin} on leases ({@value #LEASE} or every kind). A lease that
     * does not exist passes here: the lease service answers for it.
     */
    public void requireLease(Principal caller, long leaseId) {
        requireLeases(caller, new long[] {leaseId});
    }

    /** {@link #requireLease} for each of {@code leaseIds}, read from one state (a keep-alive of many). */
    public void requireLeases(Principal caller, long[] leaseIds) {
        if (!stateMachine.accessEnabled() || caller.isMember() || grants().permits(caller, LEASE, "", Level.ADMIN)) {
            return;
        }
        String refusal = notOwned(caller, leaseIds);
        if (refusal != null) {
            throw refused(caller, LEASE, leaseIds.length == 1 ? Long.toString(leaseIds[0]) : "",
                    new PermissionDenied(refusal + ", and it has no admin permission on leases"));
        }
    }

    /** Why {@code caller} does not own one of {@code leaseIds} that exists, or null when it owns them all: one read of the state. */
    private String notOwned(Principal caller, long[] leaseIds) {
        return stateMachine.read(s -> {
            for (long leaseId : leaseIds) {
                if (s.renewedAt(leaseId) >= 0 && !ownedBy(s, leaseId, caller)) {
                    return leaseRefusal(s, leaseId, caller);
                }
            }
            return null;
        });
    }

    /** {@link #require} as a future: completed when allowed, failed with {@link PermissionDenied} when not. */
    public java.util.concurrent.CompletableFuture<Void> allowed(Principal caller, String kind, String name, Level level) {
        return asFuture(() -> require(caller, kind, name, level));
    }

    /** {@link #requireWithLease} as a future. */
    public java.util.concurrent.CompletableFuture<Void> allowedWithLease(Principal caller, long leaseId, String kind, String name) {
        return asFuture(() -> requireWithLease(caller, leaseId, kind, name));
    }

    /** {@link #requireLease} as a future. */
    public java.util.concurrent.CompletableFuture<Void> allowedLease(Principal caller, long leaseId) {
        return asFuture(() -> requireLease(caller, leaseId));
    }

    private static java.util.concurrent.CompletableFuture<Void> asFuture(Runnable check) {
        try {
            check.run();
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        } catch (PermissionDenied e) {
            return java.util.concurrent.CompletableFuture.failedFuture(e);
        }
    }

    /**
     * What each user's roles allow, as applied at {@code version} ({@link TenureStateMachine#accessVersion}):
     * read once from the state after each change, so that a check takes no lock. Immutable.
     */
    private record Grants(long version, Map<String, List<Permission>> byUser, Set<String> roots) {
        boolean permits(Principal caller, String kind, String name, Level level) {
            if (caller.isNobody()) {
                return false;
            }
            if (roots.contains(caller.user())) {
                return true;
            }
            for (Permission p : byUser.getOrDefault(caller.user(), List.of())) {
                if (p.covers(kind, name, level)) {
                    return true;
                }
            }
            return false;
        }

        static Grants of(TenureState state, long version) {
            AccessTable access = state.primitive(AccessTable.class);
            Map<String, List<Permission>> byUser = new HashMap<>();
            Set<String> roots = new HashSet<>();
            for (User user : access.users().values()) {
                if (user.roles().contains(AccessTable.ROOT)) {
                    roots.add(user.name());
                }
                List<Permission> granted = new ArrayList<>();
                for (String roleName : user.roles()) {
                    Role role = access.roles().get(roleName);
                    if (role != null) {
                        granted.addAll(role.permissions());
                    }
                }
                byUser.put(user.name(), List.copyOf(granted));
            }
            return new Grants(version, Map.copyOf(byUser), Set.copyOf(roots));
        }
    }

    private volatile Grants grants;

    /** The grants as last applied: the cached ones while no access change was applied since, else read again. */
    private Grants grants() {
        Grants cached = grants;
        if (cached != null && cached.version() == stateMachine.accessVersion()) {
            return cached;
        }
        // Read with the version under the state's lock, so the two agree.
        Grants fresh = stateMachine.read(s -> Grants.of(s, stateMachine.accessVersion()));
        grants = fresh;
        return fresh;
    }

    private static boolean ownedBy(TenureState state, long leaseId, Principal caller) {
        return !caller.isNobody() && state.leaseOwner(leaseId).map(caller.user()::equals).orElse(false);
    }

    private static String leaseRefusal(TenureState state, long leaseId, Principal caller) {
        return who(caller) + " may not use lease " + leaseId + ": it belongs to "
                + state.leaseOwner(leaseId).map(owner -> "user '" + owner + "'").orElse("no user (it was granted while authentication was off)");
    }

    private PermissionDenied refused(Principal caller, String kind, String name, PermissionDenied denied) {
        trail.record(caller, "request", kind, name, 0, 0, "permission_denied", denied.getMessage());
        return denied;
    }

    private static PermissionDenied denied(Principal caller, String kind, String name, Level level) {
        String what = kind.equals(EVERY_KIND) ? "every kind" : kind;
        return new PermissionDenied(who(caller) + " has no " + level.name().toLowerCase(java.util.Locale.ROOT) + " permission on "
                + what + " '" + name + "': grant one of its roles that, e.g. `tenure role grant ROLE "
                + level.name().toLowerCase(java.util.Locale.ROOT) + " --kind " + kind + " --prefix '" + name + "'`");
    }

    private static String who(Principal caller) {
        return caller.isNobody() ? "a call without a user" : "user '" + caller.user() + "'";
    }
}

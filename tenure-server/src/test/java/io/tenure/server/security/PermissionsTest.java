package io.tenure.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.core.access.AuthEnable;
import io.tenure.core.access.Level;
import io.tenure.core.access.RoleAdd;
import io.tenure.core.access.RoleGrant;
import io.tenure.core.access.UserAdd;
import io.tenure.core.access.UserGrantRole;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.server.PermissionDenied;
import io.tenure.server.raft.Entry;
import io.tenure.server.raft.EntryCodec;
import io.tenure.server.raft.TenureStateMachine;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The checks every service makes, against the access state as applied: levels, prefixes, kinds and lease owners. */
class PermissionsTest {
    private static final String HASH = "pbkdf2-sha256$120000$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g";
    private final TenureStateMachine stateMachine = new TenureStateMachine(() -> 0L, 1_000);
    private final Permissions permissions = new Permissions(stateMachine, AuditTrail.OFF);
    private long index;
    private final Principal reader = new Principal("reader", "token");
    private final Principal writer = new Principal("writer", "token");
    private final Principal admin = new Principal("admin", "token");
    private final Principal root = new Principal("root", "token");

    private void apply(Command command) {
        index++;
        stateMachine.apply(1, index, EntryCodec.encode(new Entry(1, index, 1, List.of(command))));
    }

    private void users() {
        apply(new UserAdd("root", HASH));
        apply(new UserGrantRole("root", "root"));
        apply(new RoleAdd("readers"));
        apply(new RoleGrant("readers", "lock", "jobs/", Level.READ));
        apply(new RoleAdd("writers"));
        apply(new RoleGrant("writers", "*", "jobs/", Level.WRITE));
        apply(new RoleAdd("admins"));
        apply(new RoleGrant("admins", "lock", "jobs/", Level.ADMIN));
        apply(new RoleGrant("admins", "lease", "", Level.ADMIN));
        for (String user : List.of("reader", "writer", "admin")) {
            apply(new UserAdd(user, HASH));
            apply(new UserGrantRole(user, user + "s"));
        }
    }

    @Test
    void withAuthenticationOffEveryCallIsAllowed() {
        users();
        apply(new LeaseGrant(1, 10_000, "c", "writer"));
        assertThatCode(() -> {
            permissions.require(Principal.NOBODY, "kv", "anything", Level.ADMIN);
            permissions.requireWithLease(reader, 1, "lock", "other/x");
            permissions.requireLease(Principal.NOBODY, 1);
        }).doesNotThrowAnyException();
    }

    @Test
    void levelsKindsAndPrefixesDecide() {
        users();
        apply(AuthEnable.INSTANCE);

        permissions.require(reader, "lock", "jobs/nightly", Level.READ);
        permissions.require(reader, "lock", "jobs/", Level.READ); // a listing of the whole prefix
        assertThatThrownBy(() -> permissions.require(reader, "lock", "jobs/nightly", Level.WRITE)).isInstanceOf(PermissionDenied.class)
                .hasMessageContaining("user 'reader' has no write permission on lock 'jobs/nightly'");
        assertThatThrownBy(() -> permissions.require(reader, "kv", "jobs/a", Level.READ)).as("another kind")
                .isInstanceOf(PermissionDenied.class);
        assertThatThrownBy(() -> permissions.require(reader, "lock", "job", Level.READ)).as("a listing wider than the prefix")
                .isInstanceOf(PermissionDenied.class);
        permissions.require(writer, "kv", "jobs/a", Level.READ);
        permissions.require(writer, "counter", "jobs/a", Level.WRITE);
        assertThatThrownBy(() -> permissions.require(writer, "lock", "jobs/a", Level.ADMIN)).isInstanceOf(PermissionDenied.class);
        permissions.require(writer, Permissions.EVERY_KIND, "jobs/", Level.READ); // a watch: every kind
        assertThatThrownBy(() -> permissions.require(reader, Permissions.EVERY_KIND, "jobs/", Level.READ)).as("read on locks only")
                .isInstanceOf(PermissionDenied.class);
        permissions.require(root, "signal", "anything", Level.ADMIN);
        assertThatThrownBy(() -> permissions.require(Principal.NOBODY, "lock", "jobs/a", Level.READ)).isInstanceOf(PermissionDenied.class)
                .hasMessageContaining("a call without a user");
        permissions.require(Principal.MEMBER, "lock", "jobs/a", Level.ADMIN);
    }

    @Test
    void aLeaseIsItsOwnersUnlessAnAdminActsOnTheName() {
        users();
        apply(new LeaseGrant(1, 10_000, "c", "writer"));
        apply(new LeaseGrant(2, 10_000, "c", "")); // granted while authentication was off
        apply(new UserAdd("writer2", HASH));
        apply(new UserGrantRole("writer2", "writers"));
        apply(AuthEnable.INSTANCE);
        Principal other = new Principal("writer2", "token");

        permissions.requireWithLease(writer, 1, "lock", "jobs/a");
        permissions.requireLease(writer, 1);
        assertThatThrownBy(() -> permissions.requireWithLease(other, 1, "lock", "jobs/a")).isInstanceOf(PermissionDenied.class)
                .hasMessageContaining("user 'writer2' may not use lease 1: it belongs to user 'writer'");
        assertThatThrownBy(() -> permissions.requireLease(other, 1)).isInstanceOf(PermissionDenied.class);
        assertThatThrownBy(() -> permissions.requireLeases(other, new long[] {3, 1})).isInstanceOf(PermissionDenied.class);
        permissions.requireWithLease(admin, 1, "lock", "jobs/a");
        permissions.requireLease(admin, 1);
        assertThatThrownBy(() -> permissions.requireWithLease(admin, 1, "kv", "jobs/a")).as("admin on locks only")
                .isInstanceOf(PermissionDenied.class);
        assertThatThrownBy(() -> permissions.requireWithLease(writer, 2, "lock", "jobs/a")).isInstanceOf(PermissionDenied.class)
                .hasMessageContaining("it belongs to no user (it was granted while authentication was off)");
        permissions.requireWithLease(admin, 2, "lock", "jobs/a");
        // A lease that does not exist is the service's to answer (NOT_FOUND), not a refusal here.
        permissions.requireWithLease(writer, 99, "lock", "jobs/a");
        permissions.requireLease(writer, 99);
    }

    @Test
    void everyPrimitiveKindCanBeNamedInAPermission() {
        for (String name : List.of(io.tenure.core.lock.LockTable.NAME, io.tenure.core.semaphore.SemaphoreTable.NAME,
                io.tenure.core.election.ElectionTable.NAME, io.tenure.core.barrier.BarrierTable.NAME,
                io.tenure.core.barrier.DoubleBarrierTable.NAME, io.tenure.core.latch.LatchTable.NAME, io.tenure.core.counter.CounterTable.NAME,
                io.tenure.core.kv.KvTable.NAME, io.tenure.core.list.ListTable.NAME, io.tenure.core.signal.SignalTable.NAME)) {
            assertThat(Permissions.KINDS).contains(Permissions.kind(name));
        }
    }
}

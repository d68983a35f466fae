package io.tenure.core;

import static io.tenure.core.Replica.expect;
import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.core.access.AccessChanged;
import io.tenure.core.access.AccessTable;
import io.tenure.core.access.AuthDisable;
import io.tenure.core.access.AuthEnable;
import io.tenure.core.access.Level;
import io.tenure.core.access.Permission;
import io.tenure.core.access.RoleAdd;
import io.tenure.core.access.RoleDelete;
import io.tenure.core.access.RoleGrant;
import io.tenure.core.access.RoleRevoke;
import io.tenure.core.access.TokenIssue;
import io.tenure.core.access.TokenRevoke;
import io.tenure.core.access.UserAdd;
import io.tenure.core.access.UserDelete;
import io.tenure.core.access.UserGrantRole;
import io.tenure.core.access.UserPassword;
import io.tenure.core.access.UserRevokeRole;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.Result.Rejected;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Users, roles, tokens and the authentication switch, case by case: each command and each of its
 * refusals (which change nothing), permission matching, the rules that keep a root user while
 * authentication is on, the token index, and a snapshot's round trip.
 */
class AccessTest {
    private static final String HASH = "pbkdf2-sha256$120000$c2FsdA==$aGFzaA==";
    private static final String TOKEN_A = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    private static final String TOKEN_B = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    private final Replica replica = new Replica();

    private AccessTable access() {
        return replica.state.primitive(AccessTable.class);
    }

    private void ok(Command command) {
        expect(replica.run(command), AccessChanged.class);
    }

    /** Applies {@code command}, expects it refused with {@code code} and a message naming {@code named}, and the state unchanged. */
    private void refused(Command command, Code code, String named) {
        byte[] before = snapshot(replica);
        Rejected rejected = expect(replica.run(command), Rejected.class);
        assertThat(rejected.code()).as(rejected.message()).isEqualTo(code);
        assertThat(rejected.message()).contains(named);
        assertThat(snapshot(replica)).as("a refusal changes nothing").isEqualTo(before);
    }

    private static byte[] snapshot(Replica replica) {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            replica.state.primitive(AccessTable.class).writeSnapshot(new java.io.DataOutputStream(out));
            return out.toByteArray();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void aFreshStateHasTheRootRoleNoUsersAndAuthenticationOff() {
        assertThat(access().enabled()).isFalse();
        assertThat(access().users()).isEmpty();
        assertThat(access().roles()).containsOnlyKeys("root");
    }

    @Test
    void usersAreAddedGivenRolesAndDeleted() {
        ok(new UserAdd("ops", HASH));
        assertThat(access().user("ops")).hasValueSatisfying(u -> {
            assertThat(u.passwordHash()).isEqualTo(HASH);
            assertThat(u.roles()).isEmpty();
        });
        refused(new UserAdd("ops", HASH), Code.ALREADY_EXISTS, "'ops'");
        refused(new UserAdd("ops two", HASH), Code.INVALID_ARGUMENT, "name");
        refused(new UserAdd("", HASH), Code.INVALID_ARGUMENT, "name");
        refused(new UserAdd("bob", ""), Code.INVALID_ARGUMENT, "password");
        refused(new UserAdd("bob", null), Code.INVALID_ARGUMENT, "password");

        ok(new RoleAdd("readers"));
        ok(new UserGrantRole("ops", "readers"));
        assertThat(access().user("ops").orElseThrow().roles()).containsExactly("readers");
        refused(new UserGrantRole("ops", "writers"), Code.NOT_FOUND, "role 'writers'");
        refused(new UserGrantRole("nobody", "readers"), Code.NOT_FOUND, "user 'nobody'");
        ok(new UserRevokeRole("ops", "readers"));
        refused(new UserRevokeRole("ops", "readers"), Code.NOT_FOUND, "does not have the role");

        ok(new UserDelete("ops"));
        assertThat(access().user("ops")).isEmpty();
        refused(new UserDelete("ops"), Code.NOT_FOUND, "user 'ops'");
    }

    @Test
    void permissionsMatchKindPrefixAndLevel() {
        ok(new UserAdd("reports", HASH));
        ok(new RoleAdd("readers"));
        ok(new RoleAdd("writers"));
        ok(new RoleGrant("readers", "*", "reports/", Level.READ));
        ok(new RoleGrant("writers", "lock", "reports/nightly/", Level.WRITE));
        ok(new UserGrantRole("reports", "readers"));

        assertThat(access().permits("reports", "kv", "reports/a", Level.READ)).isTrue();
        assertThat(access().permits("reports", "lock", "reports/nightly/x", Level.READ)).isTrue();
        assertThat(access().permits("reports", "lock", "reports/nightly/x", Level.WRITE)).as("only read, until writers").isFalse();
        assertThat(access().permits("reports", "kv", "other/a", Level.READ)).as("another prefix").isFalse();
        ok(new UserGrantRole("reports", "writers"));
        assertThat(access().permits("reports", "lock", "reports/nightly/x", Level.WRITE)).isTrue();
        assertThat(access().permits("reports", "lock", "reports/nightly/x", Level.ADMIN)).as("write is not admin").isFalse();
        assertThat(access().permits("reports", "semaphore", "reports/nightly/x", Level.WRITE)).as("another kind").isFalse();

        // The same kind and prefix again replaces the level; a revoke takes it away.
        ok(new RoleGrant("readers", "*", "reports/", Level.ADMIN));
        assertThat(access().roles().get("readers").permissions()).containsExactly(new Permission("*", "reports/", Level.ADMIN));
        assertThat(access().permits("reports", "counter", "reports/seq", Level.ADMIN)).isTrue();
        ok(new RoleRevoke("readers", "*", "reports/"));
        assertThat(access().permits("reports", "counter", "reports/seq", Level.READ)).isFalse();
        refused(new RoleRevoke("readers", "*", "reports/"), Code.NOT_FOUND, "no permission");

        refused(new RoleGrant("writers", "Lock!", "", Level.READ), Code.INVALID_ARGUMENT, "kind");
        refused(new RoleGrant("writers", "lock", null, Level.READ), Code.INVALID_ARGUMENT, "prefix");
        refused(new RoleGrant("writers", "lock", "", null), Code.INVALID_ARGUMENT, "level");
        refused(new RoleGrant("nobody", "lock", "", Level.READ), Code.NOT_FOUND, "role 'nobody'");
        refused(new RoleGrant("root", "lock", "", Level.READ), Code.FAILED_PRECONDITION, "root");
        assertThat(access().permits("nobody", "lock", "a", Level.READ)).as("a user that does not exist").isFalse();

        // Deleting a role takes it from its users.
        ok(new RoleDelete("writers"));
        assertThat(access().user("reports").orElseThrow().roles()).containsExactly("readers");
        refused(new RoleDelete("root"), Code.FAILED_PRECONDITION, "root");
        refused(new RoleAdd("root"), Code.ALREADY_EXISTS, "root");
    }

    @Test
    void rootAllowsEverythingAndAuthenticationNeedsARootUserToStayManageable() {
        ok(new UserAdd("admin", HASH));
        refused(AuthEnable.INSTANCE, Code.FAILED_PRECONDITION, "root");
        assertThat(access().enabled()).isFalse();

        ok(new UserGrantRole("admin", "root"));
        assertThat(access().isRoot("admin")).isTrue();
        assertThat(access().permits("admin", "kv", "anything", Level.ADMIN)).isTrue();
        ok(AuthEnable.INSTANCE);
        assertThat(access().enabled()).isTrue();

        refused(new UserRevokeRole("admin", "root"), Code.FAILED_PRECONDITION, "last user with the role root");
        refused(new UserDelete("admin"), Code.FAILED_PRECONDITION, "last user with the role root");
        ok(new UserAdd("second", HASH));
        ok(new UserGrantRole("second", "root"));
        ok(new UserRevokeRole("admin", "root"));
        ok(new UserDelete("admin"));

        ok(AuthDisable.INSTANCE);
        assertThat(access().enabled()).isFalse();
        ok(new UserDelete("second"));
    }

    @Test
    void tokensNameTheirUserUntilTheyExpireAreRevokedOrThePasswordChanges() {
        ok(new UserAdd("ops", HASH));
        ok(new TokenIssue("ops", TOKEN_A, 1_000));
        ok(new TokenIssue("ops", TOKEN_B, 0));
        assertThat(access().userOfToken(TOKEN_A, 999)).contains("ops");
        assertThat(access().userOfToken(TOKEN_A, 1_000)).as("expired at its time").isEmpty();
        assertThat(access().userOfToken(TOKEN_B, Long.MAX_VALUE)).as("0 never expires").contains("ops");
        assertThat(access().userOfToken("cccccccccccccccc", 0)).isEmpty();
        refused(new TokenIssue("ops", TOKEN_A, 5), Code.ALREADY_EXISTS, "already issued");
        refused(new TokenIssue("ops", "NOT-HEX", 5), Code.INVALID_ARGUMENT, "hex");
        refused(new TokenIssue("nobody", "cccccccccccccccc", 5), Code.NOT_FOUND, "user 'nobody'");

        ok(new TokenRevoke("ops", TOKEN_A));
        assertThat(access().userOfToken(TOKEN_A, 0)).isEmpty();
        refused(new TokenRevoke("ops", TOKEN_A), Code.NOT_FOUND, "no such token");

        ok(new UserPassword("ops", "pbkdf2-sha256$1$AA==$AA=="));
        assertThat(access().userOfToken(TOKEN_B, 0)).as("a new password ends every token").isEmpty();
        assertThat(access().user("ops").orElseThrow().tokens()).isEmpty();
        refused(new UserPassword("ops", ""), Code.INVALID_ARGUMENT, "password");

        ok(new TokenIssue("ops", TOKEN_A, 0));
        ok(new UserDelete("ops"));
        assertThat(access().userOfToken(TOKEN_A, 0)).as("a deleted user's tokens end").isEmpty();
    }

    @Test
    void aSixtyFifthTokenPushesOutTheOneThatExpiresFirst() {
        ok(new UserAdd("ci", HASH));
        for (int i = 0; i < AccessTable.MAX_TOKENS_PER_USER; i++) {
            ok(new TokenIssue("ci", String.format("%032x", i + 1), 10_000 + i));
        }
        ok(new TokenIssue("ci", String.format("%032x", 1_000), 20_000));
        assertThat(access().user("ci").orElseThrow().tokens()).hasSize(AccessTable.MAX_TOKENS_PER_USER);
        assertThat(access().userOfToken(String.format("%032x", 1), 0)).as("the one expiring first went").isEmpty();
        assertThat(access().userOfToken(String.format("%032x", 2), 0)).contains("ci");
        assertThat(access().userOfToken(String.format("%032x", 1_000), 0)).contains("ci");
    }

    @Test
    void replicasApplyingTheSameLogAgreeByteForByte() {
        List<Command> log = List.of(new UserAdd("ops", HASH), new RoleAdd("readers"),
                new RoleGrant("readers", "kv", "cfg/", Level.READ), new UserGrantRole("ops", "readers"),
                new UserAdd("ops", HASH), new UserGrantRole("ops", "root"), AuthEnable.INSTANCE,
                new TokenIssue("ops", TOKEN_A, 5), new TokenIssue("ops", TOKEN_B, 0), new TokenRevoke("ops", TOKEN_A),
                new RoleDelete("readers"), new UserPassword("ops", HASH), AuthDisable.INSTANCE);
        Replica other = new Replica();
        for (Command command : log) {
            replica.run(command);
            other.run(command);
        }
        assertThat(snapshot(other)).isEqualTo(snapshot(replica));
        assertThat(other.snapshot()).isEqualTo(replica.snapshot());
    }

    @Test
    void aSnapshotRoundTripGivesTheSameStateAndAnswers() throws IOException {
        ok(new UserAdd("ops", HASH));
        ok(new RoleAdd("readers"));
        ok(new RoleGrant("readers", "kv", "cfg/", Level.READ));
        ok(new UserGrantRole("ops", "readers"));
        ok(new UserGrantRole("ops", "root"));
        ok(new TokenIssue("ops", TOKEN_A, 1_000));
        ok(AuthEnable.INSTANCE);

        Replica restored = Replica.restore(replica.snapshot());
        AccessTable again = restored.state.primitive(AccessTable.class);
        assertThat(snapshot(restored)).isEqualTo(snapshot(replica));
        assertThat(again.enabled()).isTrue();
        assertThat(again.userOfToken(TOKEN_A, 999)).contains("ops");
        assertThat(again.permits("ops", "kv", "cfg/a", Level.ADMIN)).isTrue();
        assertThat(again.roles().get("readers").permissions()).containsExactly(new Permission("kv", "cfg/", Level.READ));
        assertThat(again.users()).isEqualTo(access().users());
    }
}

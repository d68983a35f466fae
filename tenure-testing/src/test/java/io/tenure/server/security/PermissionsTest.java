package io.tenure.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.PermissionDeniedException;
import io.tenure.client.TenureAuth;
import io.tenure.client.TenureClient;
import io.tenure.proto.v1.PermissionLevel;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Permissions per prefix on three members with authentication on: a matrix of roles against
 * operations of the primitives over gRPC (the SDK), HTTP and the text protocol, each allowed or
 * refused {@code PERMISSION_DENIED} / 403 / {@code error_permission}; the lock-stealing scenario
 * (read a holder's lease and token, release with them) refused to another user; and a role
 * change counting on every member once it applied it.
 */
class PermissionsTest {
    private static final Duration TTL = Duration.ofSeconds(30);
    private static TenureCluster cluster;
    private static TenureClient root;
    /** Role → a token of a user holding only that role ("none": a user without roles). */
    private static final Map<String, String> TOKENS = new java.util.TreeMap<>();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        cluster = TenureCluster.start(3);
        try (TenureClient anonymous = client(null)) {
            TenureAuth auth = anonymous.auth();
            auth.addUser("admin", "admin password");
            auth.grantRole("admin", "root");
            auth.addRole("reader");
            auth.grantPermission("reader", "*", "app/", PermissionLevel.READ);
            auth.addRole("writer");
            auth.grantPermission("writer", "*", "app/", PermissionLevel.WRITE);
            auth.addRole("lock-admin");
            auth.grantPermission("lock-admin", "lock", "app/", PermissionLevel.ADMIN);
            auth.grantPermission("lock-admin", "lease", "", PermissionLevel.ADMIN);
            for (String role : List.of("reader", "writer", "lock-admin", "none")) {
                auth.addUser(role + "-user", role + " password");
                if (!role.equals("none")) {
                    auth.grantRole(role + "-user", role);
                }
            }
            auth.addUser("other-writer", "other password");
            auth.grantRole("other-writer", "writer");
            auth.enable();
            root = client(anonymous.auth().authenticate("admin", "admin password", Duration.ofHours(1)));
            for (String role : List.of("reader", "writer", "lock-admin", "none")) {
                TOKENS.put(role, anonymous.auth().authenticate(role + "-user", role + " password", Duration.ofHours(1)));
            }
            TOKENS.put("other-writer", anonymous.auth().authenticate("other-writer", "other password", Duration.ofHours(1)));
        }
    }

    @AfterAll
    static void stop() {
        if (root != null) {
            root.close();
        }
        cluster.close();
    }

    private static TenureClient client(String token) {
        TenureClient.Builder builder = TenureClient.builder().endpoints(cluster.endpoints()).requestTimeout(Duration.ofSeconds(5));
        return (token == null ? builder : builder.token(token)).build();
    }

    private static TenureClient clientOf(int index, String token) {
        return TenureClient.builder().endpoints(List.of(cluster.endpoint(index))).requestTimeout(Duration.ofSeconds(5)).token(token).build();
    }

    /** Whether {@code call} ran, or was refused PERMISSION_DENIED (any other failure fails the test). */
    private static boolean allowed(ThrowingCall call) {
        try {
            call.run();
            return true;
        } catch (PermissionDeniedException e) {
            assertThat(e.getMessage()).contains("permission");
            return false;
        } catch (Exception e) {
            throw new AssertionError("neither done nor refused PERMISSION_DENIED: " + e, e);
        }
    }

    @FunctionalInterface
    interface ThrowingCall {
        void run() throws Exception;
    }

    @Test
    void grpcMatrixOfRolesAndOperations() {
        // role → {lock, describe, counter add, counter get, kv put, kv get, queue push, semaphore}
        Map<String, List<Boolean>> expected = Map.of(
                "none", List.of(false, false, false, false, false, false, false, false),
                "reader", List.of(false, true, false, true, false, true, false, false),
                "writer", List.of(true, true, true, true, true, true, true, true),
                "lock-admin", List.of(true, true, false, false, false, false, false, false));
        for (Map.Entry<String, List<Boolean>> row : expected.entrySet()) {
            String role = row.getKey();
            try (TenureClient c = client(TOKENS.get(role))) {
                Lease lease = c.grantLease(TTL, role);
                List<Boolean> actual = List.of(
                        allowed(() -> c.acquire("app/grpc-lock-" + role, lease, Duration.ofSeconds(5), null).release()),
                        allowed(() -> c.describe("app/grpc-lock-" + role)),
                        allowed(() -> c.counter("app/grpc-counter").incrementAndGet()),
                        allowed(() -> c.counter("app/grpc-counter").get()),
                        allowed(() -> c.kv().put("app/grpc-key", "v")),
                        allowed(() -> c.kv().get("app/grpc-key")),
                        allowed(() -> c.queue("app/grpc-queue", lease).offer("item".getBytes(StandardCharsets.UTF_8))),
                        allowed(() -> c.semaphore("app/grpc-semaphore", 3, lease).acquire(1, Duration.ofSeconds(5)).release()));
                assertThat(actual).as("role %s: lock, describe, counter add/get, kv put/get, queue push, semaphore", role)
                        .isEqualTo(row.getValue());
                // Outside its prefix, even the writer may do nothing.
                assertThat(allowed(() -> c.counter("other/counter").get())).as(role + " outside app/").isFalse();
                lease.revoke();
            }
        }
        try (TenureClient c = client(TOKENS.get("none"))) {
            assertThatThrownBy(() -> c.counter("app/x").get()).isInstanceOf(PermissionDeniedException.class)
                    .hasMessageContaining("user 'none-user' has no read permission on counter 'app/x'");
        }
    }

    @Test
    void httpMatrixOfRolesAndOperations() throws Exception {
        String base = cluster.httpEndpoint(1);
        for (String role : List.of("writer", "reader", "none")) {
            String token = TOKENS.get(role);
            int add = post(base + "/v1/counters/app/http-counter/add", token, "{\"delta\":1}").statusCode();
            int get = get(base + "/v1/counters/app/http-counter", token).statusCode();
            int put = post(base + "/v1/kv/app/http-key/put", token, "{\"value\":\"djE=\"}").statusCode();
            int lock = post(base + "/v1/locks/app/http-lock-" + role + "/acquire", token,
                    "{\"owner_id\":\"" + role + "\",\"ttl_ms\":30000}").statusCode();
            int list = get(base + "/v1/locks?prefix=app/", token).statusCode();
            boolean reads = !role.equals("none");
            boolean writes = role.equals("writer");
            assertThat(List.of(add, get, put, lock, list)).as("role %s: counter add, get, kv put, lock acquire, list", role)
                    .isEqualTo(List.of(writes ? 200 : 403, reads ? 200 : 403, writes ? 200 : 403, writes ? 200 : 403, reads ? 200 : 403));
        }
        // Bad management input names its field and changes nothing.
        String rootToken = root.auth().authenticate("admin", "admin password", Duration.ofMinutes(5));
        var before = root.auth().roles();
        HttpResponse<String> notAString = post(base + "/v1/auth/roles/reader/permissions", rootToken,
                "{\"kind\":\"lock\",\"prefix\":5,\"level\":\"read\"}");
        assertThat(notAString.statusCode()).isEqualTo(400);
        assertThat(notAString.body()).contains("\"field\":\"prefix\"").contains("prefix must be a string");
        HttpResponse<String> noSuchRole = post(base + "/v1/auth/roles/no-such-role/permissions", rootToken,
                "{\"kind\":\"lock\",\"prefix\":\"x/\",\"level\":\"read\"}");
        assertThat(noSuchRole.statusCode()).as(noSuchRole.body()).isEqualTo(404);
        HttpResponse<String> badKind = post(base + "/v1/auth/roles/reader/permissions", rootToken,
                "{\"kind\":\"locks\",\"prefix\":\"x/\",\"level\":\"read\"}");
        assertThat(badKind.statusCode()).isEqualTo(400);
        assertThat(badKind.body()).contains("permission.kind must be one of");
        assertThat(root.auth().roles()).isEqualTo(before);

        HttpResponse<String> refused = post(base + "/v1/counters/app/http-counter/add", TOKENS.get("reader"), "{}");
        assertThat(refused.body()).contains("\"error\":\"permission_denied\"").contains("user 'reader-user' has no write permission");
    }

    @Test
    void textMatrixOfRolesAndOperations() throws IOException {
        for (String role : List.of("writer", "reader", "none")) {
            try (Socket socket = TextLines.open(cluster, 0)) {
                assertThat(TextLines.call(socket, "auth", "_", TOKENS.get(role))).isEqualTo("ok");
                boolean writes = role.equals("writer");
                assertThat(TextLines.call(socket, "incr", "app/text-counter", "1")).as(role + " incr").startsWith(writes ? "ok" : "error_permission");
                assertThat(TextLines.call(socket, "kset", "app/text-key", "v")).as(role + " kset").isEqualTo(writes ? "ok" : "error_permission");
                assertThat(TextLines.call(socket, "l", "app/text-lock-" + role, "5")).as(role + " lock").startsWith(writes ? "ok " : "error_permission");
                assertThat(TextLines.call(socket, "kget", "app/text-key", "_")).as(role + " kget")
                        .satisfies(line -> assertThat(line.startsWith("error_permission")).isEqualTo(role.equals("none")));
                assertThat(TextLines.call(socket, "watch", "app/text-key", "_")).as(role + " watch").isEqualTo(role.equals("none") ? "error_permission" : "ok");
            }
        }
    }

    /** Today's lock stealing: read a holder's lease and token, release with them. Refused to another user; an admin may. */
    @Test
    void anotherUserMayNotReleaseOrRevokeWithAHoldersLeaseAndToken() throws Exception {
        try (TenureClient owner = client(TOKENS.get("writer")); TenureClient thief = client(TOKENS.get("other-writer"));
             TenureClient lockAdmin = client(TOKENS.get("lock-admin"))) {
            Lease lease = owner.grantLease(TTL, "owner");
            LockHandle held = owner.acquire("app/stolen", lease, Duration.ofSeconds(5), null);
            String base = cluster.httpEndpoint(2);
            String described = get(base + "/v1/locks/app/stolen", TOKENS.get("other-writer")).body();
            long leaseId = number(described, "lease_id");
            long token = number(described, "fencing_token");
            assertThat(leaseId).isEqualTo(lease.id());
            assertThat(token).isEqualTo(held.fencingToken());

            HttpResponse<String> release = post(base + "/v1/locks/app/stolen/release", TOKENS.get("other-writer"),
                    "{\"owner_id\":\"owner\",\"lease_id\":" + leaseId + ",\"fencing_token\":" + token + "}");
            assertThat(release.statusCode()).as(release.body()).isEqualTo(403);
            assertThat(release.body()).contains("may not use lease " + leaseId).contains("belongs to user 'writer-user'");
            assertThatThrownBy(() -> thief.revokeLease(leaseId)).isInstanceOf(PermissionDeniedException.class)
                    .hasMessageContaining("belongs to user 'writer-user'");
            assertThat(owner.describe("app/stolen").fencingToken()).as("still held").isEqualTo(token);

            // A user with admin on the lock's prefix and on leases may.
            lockAdmin.revokeLease(leaseId);
            Await.until("the lock freed", Duration.ofSeconds(10), () -> owner.locks("app/stolen", 10).isEmpty());
        }
    }

    @Test
    void changingTheMembersNeedsRoot() {
        try (TenureClient writer = client(TOKENS.get("writer"))) {
            assertThat(writer.members()).as("listing them needs only a user").hasSize(3);
            assertThatThrownBy(() -> writer.removeMember("n3")).isInstanceOf(PermissionDeniedException.class)
                    .hasMessageContaining("user 'writer-user' may not remove members: it needs the role root");
            assertThatThrownBy(() -> writer.addMember("n4", "127.0.0.1:1")).isInstanceOf(PermissionDeniedException.class);
        }
        assertThat(root.members()).hasSize(3);
    }

    @Test
    void aRoleChangeCountsOnEveryMemberOnceApplied() {
        root.auth().addUser("late-user", "late password");
        root.auth().addRole("late");
        root.auth().grantRole("late-user", "late");
        String token = root.auth().authenticate("late-user", "late password", Duration.ofMinutes(10));
        for (int i = 0; i < 3; i++) {
            try (TenureClient late = clientOf(i, token)) {
                assertThatThrownBy(() -> late.counter("late/counter").get()).isInstanceOf(PermissionDeniedException.class);
            }
        }
        assertThatThrownBy(() -> root.auth().grantPermission("late", "countr", "late/", PermissionLevel.READ))
                .isInstanceOf(io.tenure.client.InvalidArgumentException.class).hasMessageContaining("permission.kind must be one of");
        root.auth().grantPermission("late", "counter", "late/", PermissionLevel.READ);
        for (int i = 0; i < 3; i++) {
            try (TenureClient late = clientOf(i, token)) {
                Await.until("member " + i + " applied the grant", Duration.ofSeconds(10), () -> allowed(() -> late.counter("late/counter").get()));
                assertThat(allowed(() -> late.counter("late/counter").incrementAndGet())).as("read only").isFalse();
            }
        }
        root.auth().revokePermission("late", "counter", "late/");
        for (int i = 0; i < 3; i++) {
            try (TenureClient late = clientOf(i, token)) {
                Await.until("member " + i + " applied the revocation", Duration.ofSeconds(10),
                        () -> !allowed(() -> late.counter("late/counter").get()));
            }
        }
    }

    private static long number(String json, String field) {
        Matcher m = Pattern.compile("\"" + field + "\":(\\d+)").matcher(json);
        assertThat(m.find()).as(field + " in " + json).isTrue();
        return Long.parseLong(m.group(1));
    }

    private static HttpResponse<String> get(String url, String token) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + token).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> post(String url, String token, String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + token)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }


}

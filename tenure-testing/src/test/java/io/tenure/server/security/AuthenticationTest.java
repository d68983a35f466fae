package io.tenure.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.AlreadyExistsException;
import io.tenure.client.FailedPreconditionException;
import io.tenure.client.InvalidArgumentException;
import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.NotFoundException;
import io.tenure.client.PermissionDeniedException;
import io.tenure.client.TenureAuth;
import io.tenure.client.TenureClient;
import io.tenure.client.UnauthenticatedException;
import io.tenure.proto.v1.PermissionLevel;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Authentication on three members: users and tokens in the replicated state, the switch that makes
 * every call show a credential (on each member once it applied it), refused calls on gRPC, HTTP and
 * the text protocol, management refused to a user without root, and bad management input refused
 * with the field named and nothing changed. The tests run in order on one cluster: the first
 * switches authentication on.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AuthenticationTest {
    private static final String ROOT_PASSWORD = "correct horse battery staple";
    private static TenureCluster cluster;
    private static TenureClient anonymous;
    private static String rootToken;

    @BeforeAll
    static void start() {
        cluster = TenureCluster.start(3);
        anonymous = client(null);
    }

    @AfterAll
    static void stop() {
        anonymous.close();
        cluster.close();
    }

    /** A client of every member, showing {@code token} (none when null). */
    private static TenureClient client(String token) {
        TenureClient.Builder builder = TenureClient.builder().endpoints(cluster.endpoints()).requestTimeout(Duration.ofSeconds(5));
        return (token == null ? builder : builder.token(token)).build();
    }

    /** A client of member {@code index} only. */
    private static TenureClient clientOf(int index, String token) {
        TenureClient.Builder builder = TenureClient.builder().endpoints(List.of(cluster.endpoint(index)))
                .requestTimeout(Duration.ofSeconds(5));
        return (token == null ? builder : builder.token(token)).build();
    }

    @Test
    @Order(1)
    void authenticationIsSwitchedOnOnlyOnceARootUserExistsAndThenEveryMemberAsksForACredential() {
        TenureAuth auth = anonymous.auth();
        assertThat(auth.status().enabled()).isFalse();
        auth.addUser("admin", ROOT_PASSWORD);
        assertThatThrownBy(auth::enable).isInstanceOf(FailedPreconditionException.class).hasMessageContaining("root");
        auth.grantRole("admin", "root");
        assertThat(auth.enable().enabled()).isTrue();

        // Every member refuses a call without a credential, once it has applied the switch.
        for (int i = 0; i < 3; i++) {
            try (TenureClient plain = clientOf(i, null)) {
                Await.until("member " + i + " applied the switch", Duration.ofSeconds(10), () -> {
                    try {
                        plain.grantLease(Duration.ofSeconds(10), "anonymous").revoke();
                        return false;
                    } catch (UnauthenticatedException e) {
                        // "authentication is on: show a bearer token ...", or, for a session stream that opened
                        // before this member applied the switch, "... authentication was switched on ...".
                        return e.getMessage().contains("authentication is on") || e.getMessage().contains("switched on");
                    }
                });
            }
        }
        // Status and authenticate need none: they are how a client learns it needs one and gets one.
        assertThat(anonymous.auth().status().enabled()).isTrue();
        rootToken = anonymous.auth().authenticate("admin", ROOT_PASSWORD, Duration.ofHours(1));
        assertThat(rootToken).startsWith("tnr_");
        assertThatThrownBy(() -> anonymous.auth().authenticate("admin", "wrong", Duration.ZERO))
                .isInstanceOf(UnauthenticatedException.class).hasMessageContaining("no such user, or a wrong password");
        assertThatThrownBy(() -> anonymous.auth().authenticate("nobody", "wrong", Duration.ZERO))
                .isInstanceOf(UnauthenticatedException.class).hasMessageContaining("no such user, or a wrong password");
    }

    @Test
    @Order(2)
    void aTokenMakesCallsAsItsUserOnEveryMember() {
        for (int i = 0; i < 3; i++) {
            try (TenureClient admin = clientOf(i, rootToken)) {
                TenureAuth.Status status = admin.auth().status();
                assertThat(status.user()).isEqualTo("admin");
                assertThat(status.credential()).isEqualTo("token");
                Lease lease = admin.grantLease(Duration.ofSeconds(10), "admin");
                try (LockHandle lock = admin.acquire("auth/jobs", lease, Duration.ofSeconds(5), null)) {
                    assertThat(lock.fencingToken()).isPositive();
                }
                lease.revoke();
            }
        }
        try (TenureClient forged = client("tnr_" + "A".repeat(43))) {
            assertThatThrownBy(() -> forged.grantLease(Duration.ofSeconds(10), "x")).isInstanceOf(UnauthenticatedException.class)
                    .hasMessageContaining("bearer token is not valid");
        }
    }

    @Test
    @Order(3)
    void managementNeedsRootAndAUserMayChangeOnlyTheirOwnPassword() {
        try (TenureClient admin = client(rootToken)) {
            admin.auth().addUser("worker", "worker password");
            String workerToken = anonymous.auth().authenticate("worker", "worker password", Duration.ofMinutes(10));
            try (TenureClient worker = client(workerToken)) {
                assertThat(worker.auth().status().user()).isEqualTo("worker");
                // A worker without a role may hold a lease, but neither lock (PermissionsTest) nor manage.
                Lease lease = worker.grantLease(Duration.ofSeconds(10), "worker");
                assertThatThrownBy(() -> worker.acquire("auth/worker", lease, Duration.ofSeconds(5), null))
                        .isInstanceOf(PermissionDeniedException.class).hasMessageContaining("user 'worker' has no write permission on lock");
                lease.revoke();
                assertThatThrownBy(() -> worker.auth().addUser("intruder", "x")).isInstanceOf(PermissionDeniedException.class)
                        .hasMessageContaining("user 'worker' may not add users").hasMessageContaining("root");
                assertThatThrownBy(() -> worker.auth().grantRole("worker", "root")).isInstanceOf(PermissionDeniedException.class);
                assertThatThrownBy(() -> worker.auth().changePassword("admin", "mine now")).isInstanceOf(PermissionDeniedException.class);
                assertThatThrownBy(worker.auth()::disable).isInstanceOf(PermissionDeniedException.class);

                worker.auth().changePassword("worker", "a new worker password");
                // Its tokens ended with the old password, on each member as it applies the change.
                Await.until("the worker's old token refused", Duration.ofSeconds(10), () -> {
                    try {
                        worker.grantLease(Duration.ofSeconds(10), "worker").revoke();
                        return false;
                    } catch (UnauthenticatedException e) {
                        return true;
                    }
                });
            }
            assertThat(admin.auth().users()).extracting(u -> u.getName()).containsExactly("admin", "worker");
        }
    }

    @Test
    @Order(4)
    void badManagementInputIsRefusedNamingTheFieldAndChangesNothing() {
        try (TenureClient admin = client(rootToken)) {
            TenureAuth auth = admin.auth();
            var usersBefore = auth.users();
            var rolesBefore = auth.roles();
            assertThatThrownBy(() -> auth.addUser("no-password", "")).isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("password");
            assertThatThrownBy(() -> auth.addUser("has space", "pw")).isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("name");
            assertThatThrownBy(() -> auth.addUser("admin", "pw")).isInstanceOf(AlreadyExistsException.class);
            assertThatThrownBy(() -> auth.grantRole("worker", "no-such-role")).isInstanceOf(NotFoundException.class)
                    .hasMessageContaining("role 'no-such-role' does not exist");
            assertThatThrownBy(() -> auth.grantRole("no-such-user", "root")).isInstanceOf(NotFoundException.class)
                    .hasMessageContaining("user 'no-such-user'");
            auth.addRole("readers");
            assertThatThrownBy(() -> auth.grantPermission("readers", "", "x/", PermissionLevel.READ))
                    .isInstanceOf(InvalidArgumentException.class).hasMessageContaining("kind");
            assertThatThrownBy(() -> auth.grantPermission("readers", "kv", "x/", PermissionLevel.PERMISSION_LEVEL_UNSPECIFIED))
                    .isInstanceOf(InvalidArgumentException.class).hasMessageContaining("level");
            assertThatThrownBy(() -> auth.deleteRole("root")).isInstanceOf(FailedPreconditionException.class);
            assertThatThrownBy(() -> auth.deleteUser("admin")).isInstanceOf(FailedPreconditionException.class)
                    .hasMessageContaining("last user with the role root");
            auth.deleteRole("readers");
            assertThat(auth.users()).isEqualTo(usersBefore);
            assertThat(auth.roles()).isEqualTo(rolesBefore);

            var granted = auth.addRole("kv-readers");
            assertThat(granted.getPermissionsList()).isEmpty();
            var role = auth.grantPermission("kv-readers", "kv", "cfg/", PermissionLevel.READ);
            assertThat(role.getPermissionsList()).singleElement().satisfies(p -> {
                assertThat(p.getKind()).isEqualTo("kv");
                assertThat(p.getPrefix()).isEqualTo("cfg/");
                assertThat(p.getLevel()).isEqualTo(PermissionLevel.READ);
            });
            assertThat(auth.grantRole("worker", "kv-readers").getRolesList()).containsExactly("kv-readers");
        }
    }

    @Test
    @Order(5)
    void httpAsksForABearerTokenAndTheAuthEndpointsIssueOne() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        String base = cluster.httpEndpoint(1);
        HttpResponse<String> refused = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/locks")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode()).isEqualTo(401);
        assertThat(refused.body()).contains("\"error\":\"unauthenticated\"").contains("authentication is on");
        assertThat(refused.headers().firstValue("WWW-Authenticate")).hasValueSatisfying(v -> assertThat(v).startsWith("Bearer"));
        assertThat(http.send(HttpRequest.newBuilder(URI.create(base + "/healthz")).build(), HttpResponse.BodyHandlers.ofString())
                .statusCode()).as("health needs no credential").isEqualTo(200);

        HttpResponse<String> issued = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/auth/authenticate"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"admin\",\"password\":\"" + ROOT_PASSWORD + "\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(issued.statusCode()).as(issued.body()).isEqualTo(200);
        String token = issued.body().replaceAll(".*\"token\":\"([^\"]+)\".*", "$1");
        HttpResponse<String> listed = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/locks"))
                .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(listed.statusCode()).as(listed.body()).isEqualTo(200);
        HttpResponse<String> users = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/auth/users"))
                .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(users.body()).contains("\"name\":\"admin\"").contains("\"roles\":[\"root\"]").doesNotContain("pbkdf2");
        HttpResponse<String> wrong = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/auth/authenticate"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"admin\",\"password\":\"nope\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(wrong.statusCode()).isEqualTo(401);
        HttpResponse<String> noPassword = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/auth/users"))
                .header("Authorization", "Bearer " + token)
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"someone\"}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(noPassword.statusCode()).isEqualTo(400);
        assertThat(noPassword.body()).contains("\"field\":\"password\"");
    }

    @Test
    @Order(6)
    void theTextProtocolAsksForAUsersTokenFirst() throws IOException {
        try (Socket socket = TextLines.open(cluster, 2)) {
            assertThat(call(socket, "ping", "_", "_")).isEqualTo("error_auth");
            assertThat(new BufferedReader(new InputStreamReader(socket.getInputStream())).readLine()).as("closed after").isNull();
        }
        try (Socket socket = TextLines.open(cluster, 2)) {
            assertThat(call(socket, "auth", "_", "tnr_wrong")).isEqualTo("error_auth");
        }
        try (Socket socket = TextLines.open(cluster, 2)) {
            assertThat(call(socket, "auth", "_", rootToken)).isEqualTo("ok");
            assertThat(call(socket, "ping", "_", "_")).isEqualTo("ok");
            assertThat(call(socket, "incr", "auth/text-counter", "1")).isEqualTo("ok 1");
        }
        // A connection that authenticated with a user's token ends once that user is deleted.
        try (TenureClient admin = client(rootToken); Socket socket = TextLines.open(cluster, 2)) {
            admin.auth().addUser("texter", "texter password");
            String token = anonymous.auth().authenticate("texter", "texter password", Duration.ofMinutes(5));
            assertThat(call(socket, "auth", "_", token)).isEqualTo("ok");
            assertThat(call(socket, "ping", "_", "_")).isEqualTo("ok");
            admin.auth().deleteUser("texter");
            Await.until("the deleted user's connection refused", Duration.ofSeconds(10),
                    () -> call(socket, "ping", "_", "_").equals("error_auth"));
        }
    }

    private static String call(Socket socket, String command, String key, String arg) {
        try {
            return TextLines.call(socket, command, key, arg);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    @Order(7)
    void switchedOffEveryMemberServesCallsWithoutACredentialAgain() {
        try (TenureClient admin = client(rootToken)) {
            assertThat(admin.auth().disable().enabled()).isFalse();
        }
        for (int i = 0; i < 3; i++) {
            try (TenureClient plain = clientOf(i, null)) {
                Await.until("member " + i + " applied the switch", Duration.ofSeconds(10), () -> {
                    try {
                        plain.grantLease(Duration.ofSeconds(10), "anonymous").revoke();
                        return true;
                    } catch (UnauthenticatedException e) {
                        return false;
                    }
                });
            }
        }
        String scraped = cluster.server(0).member().metrics().scrape() + cluster.server(1).member().metrics().scrape()
                + cluster.server(2).member().metrics().scrape();
        assertThat(scraped).contains("auth_failures_total{front=\"grpc\"}").contains("auth_failures_total{front=\"authenticate\"}")
                .contains("auth_failures_total{front=\"http\"}").contains("auth_failures_total{front=\"text\"}");
    }


}

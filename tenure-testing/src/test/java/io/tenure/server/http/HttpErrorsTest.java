package io.tenure.server.http;

import io.tenure.server.RequestIds;

import io.tenure.core.kernel.LeaseView;
import io.tenure.server.http.HttpMember.Reply;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.ByteArrayInputStream;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;

import static io.tenure.server.http.HttpLockApiTest.assertError;
import static io.tenure.server.http.HttpMember.body;
import static org.assertj.core.api.Assertions.assertThat;

/** Every error path of the HTTP API: each answers its status with {@code {"error", "message", "field"}}. */
class HttpErrorsTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);

    private static Reply acquire(String body) {
        return member.post("/v1/locks/errors/acquire", body);
    }

    @Test
    void malformedJsonIsInvalidJson() {
        assertError(acquire("{\"owner_id\": \"w\", \"ttl_ms\": "), 400, "invalid_json", null);
        assertError(acquire("not json"), 400, "invalid_json", null);
        assertError(acquire(""), 400, "invalid_json", null);
        assertError(acquire("[1, 2]"), 400, "invalid_json", null);
        assertError(acquire("{\"owner_id\": \"w\", \"ttl_ms\": 5000} trailing"), 400, "invalid_json", null);
        assertError(acquire("{\"owner_id\": \"w\", \"owner_id\": \"x\", \"ttl_ms\": 5000}"), 400, "invalid_json", null);
        assertThat(acquire("{\"owner_id\": \"w\", \"ttl_ms\": ").json().get("message").asText()).contains("not valid JSON");
    }

    @Test
    void missingOrMistypedFieldsAreNamed() {
        assertError(acquire(body("ttl_ms", 5_000)), 400, "invalid_argument", "owner_id");
        assertError(acquire(body("owner_id", 7, "ttl_ms", 5_000)), 400, "invalid_argument", "owner_id");
        assertError(acquire(body("owner_id", "", "ttl_ms", 5_000)), 400, "invalid_argument", "owner_id");
        assertError(acquire(body("owner_id", "x".repeat(257), "ttl_ms", 5_000)), 400, "invalid_argument", "owner_id");
        assertError(acquire(body("owner_id", "w")), 400, "invalid_argument", "ttl_ms");
        assertError(acquire(body("owner_id", "w", "ttl_ms", "5000")), 400, "invalid_argument", "ttl_ms");
        assertError(acquire(body("owner_id", "w", "ttl_ms", 5000.5)), 400, "invalid_argument", "ttl_ms");
        assertError(acquire(body("owner_id", "w", "ttl_ms", true)), 400, "invalid_argument", "ttl_ms");
        assertError(acquire("{\"owner_id\": \"w\", \"ttl_ms\": 1e40}"), 400, "invalid_argument", "ttl_ms");
        assertError(acquire(body("owner_id", "w", "ttl_ms", 5_000, "wait_ms", "soon")), 400, "invalid_argument", "wait_ms");
        assertError(acquire(body("owner_id", "w", "ttl_ms", 5_000, "metadata", 42)), 400, "invalid_argument", "metadata");
        assertThat(acquire(body("owner_id", "w", "ttl_ms", "5000")).json().get("message").asText())
                .contains("ttl_ms must be an integer");
        String renew = "/v1/locks/errors/renew";
        assertError(member.post(renew, body("owner_id", "w", "lease_id", "12", "fencing_token", 1)), 400, "invalid_argument", "lease_id");
        assertError(member.post(renew, body("owner_id", "w", "lease_id", 12)), 400, "invalid_argument", "fencing_token");
        assertError(member.post(renew, body("lease_id", 12, "fencing_token", 1)), 400, "invalid_argument", "owner_id");
        String release = "/v1/locks/errors/release";
        assertError(member.post(release, body("owner_id", "w", "lease_id", -3, "fencing_token", 1)), 400, "invalid_argument", "lease_id");
        assertError(member.post(release, body("owner_id", "w", "lease_id", 3, "fencing_token", 0)), 400, "invalid_argument", "fencing_token");
    }

    @Test
    void outOfRangeTtlAndWaitAreRefusedAndLeaveNoLease() {
        assertError(acquire(body("owner_id", "ranges", "ttl_ms", -5)), 400, "invalid_argument", "ttl_ms");
        assertError(acquire(body("owner_id", "ranges", "ttl_ms", 0)), 400, "invalid_argument", "ttl_ms");
        Reply belowMinimum = acquire(body("owner_id", "ranges", "ttl_ms", 500));
        assertError(belowMinimum, 400, "invalid_argument", "ttl_ms");
        assertThat(belowMinimum.json().get("message").asText()).contains("1000");
        assertError(acquire(body("owner_id", "ranges", "ttl_ms", 25L * 60 * 60 * 1000)), 400, "invalid_argument", "ttl_ms");
        assertError(acquire(body("owner_id", "ranges", "ttl_ms", 5_000, "wait_ms", -1)), 400, "invalid_argument", "wait_ms");
        assertError(acquire(body("owner_id", "ranges", "ttl_ms", 5_000, "wait_ms", LeaseRecipe.MAX_WAIT_MS + 1)),
                400, "invalid_argument", "wait_ms");
        assertError(acquire(body("owner_id", "ranges", "ttl_ms", 5_000, "metadata", "m".repeat(64 * 1024 + 1))),
                400, "invalid_argument", "metadata");
        long leases = member.server().member().stateMachine().read(s -> s.leases()).stream()
                .map(LeaseView::clientId).filter("ranges"::equals).count();
        assertThat(leases).isZero();
        assertThat(member.get("/v1/locks/errors").status()).isEqualTo(404);
    }

    @Test
    void badLockNamesAreNamedAsTheLockField() {
        String ok = HttpMember.acquireBody("names", 5_000, 0);
        assertError(member.post("/v1/locks/%FF%FE/acquire", ok), 400, "invalid_argument", "lock");
        assertError(member.post("/v1/locks/%C3/acquire", ok), 400, "invalid_argument", "lock");
        // Jetty refuses a malformed escape before routing; the answer is still the JSON error body.
        for (String path : java.util.List.of("/v1/locks/a%zz/acquire", "/v1/locks/a%2")) {
            String raw = member.raw("POST", path);
            assertThat(raw).startsWith("HTTP/1.1 400 ").contains("Content-Type: application/json")
                    .contains("\"error\":\"malformed_request\"").contains("%25");
        }
        Reply tooLong = member.post("/v1/locks/" + "n".repeat(1025) + "/acquire", ok);
        assertError(tooLong, 400, "invalid_argument", "lock");
        assertThat(tooLong.json().get("message").asText()).contains("1024");
    }

    @Test
    void unknownLeasesAreNotFound() {
        assertError(member.get("/v1/leases/424242"), 404, "lease_not_found", "lease_id");
        assertError(member.get("/v1/leases/abc"), 400, "invalid_argument", "lease_id");
        assertError(member.get("/v1/leases/-1"), 400, "invalid_argument", "lease_id");
        assertError(member.get("/v1/locks?limit=0"), 400, "invalid_argument", "limit");
        assertError(member.get("/v1/locks?limit=ten"), 400, "invalid_argument", "limit");
        assertError(member.get("/v1/locks?limit=10001"), 400, "invalid_argument", "limit");
    }

    @Test
    void oversizedBodiesAre413WhetherSizedOrChunked() {
        int limit = io.tenure.server.ServerLimits.defaults().maxHttpBodyBytes();
        String big = body("owner_id", "big", "ttl_ms", 5_000, "metadata", "x".repeat(limit));

        Reply sized = acquire(big);
        Reply chunked = member.send(HttpRequest.newBuilder(member.uri("/v1/locks/errors/acquire"))
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(big.getBytes(StandardCharsets.UTF_8)))));

        assertError(sized, 413, "payload_too_large", null);
        assertThat(sized.json().get("message").asText()).contains(String.valueOf(limit));
        assertError(chunked, 413, "payload_too_large", null);
        // Just under the limit is parsed (and refused for its metadata, which is over 64 KiB).
        String underLimit = body("owner_id", "big", "ttl_ms", 5_000, "metadata", "x".repeat(limit - 100));
        assertError(acquire(underLimit), 400, "invalid_argument", "metadata");
        assertThat(member.get("/healthz").status()).isEqualTo(200);
    }

    @Test
    void wrongMethodsAre405AndUnknownRoutes404() {
        Reply delete = member.send(HttpRequest.newBuilder(member.uri("/v1/locks/x")).DELETE());
        assertError(delete, 405, "method_not_allowed", null);
        assertThat(delete.header("Allow")).contains("GET").contains("POST");
        assertError(member.send(HttpRequest.newBuilder(member.uri("/metrics")).PUT(HttpRequest.BodyPublishers.noBody())),
                405, "method_not_allowed", null);
        assertError(member.post("/v1/status", "{}"), 405, "method_not_allowed", null);
        assertError(member.get("/v1/nothing"), 404, "unknown_route", null);
        assertError(member.get("/"), 404, "unknown_route", null);
        assertError(member.post("/v1/locks/x/frobnicate", HttpMember.acquireBody("w", 5_000, 0)), 404, "unknown_route", null);
        assertError(member.post("/v1/locks/x", HttpMember.acquireBody("w", 5_000, 0)), 404, "unknown_route", null);
    }

    @Test
    void everyAnswerCarriesARequestId() {
        Reply given = member.send(HttpRequest.newBuilder(member.uri("/v1/locks/none")).header("X-Request-Id", "trace-42.a/b").GET());
        Reply fresh = member.get("/healthz");
        Reply tooLong = member.send(HttpRequest.newBuilder(member.uri("/healthz")).header("X-Request-Id", "r".repeat(129)).GET());
        Reply unknownRoute = member.send(HttpRequest.newBuilder(member.uri("/nope")).header("X-Request-Id", "lost-route").GET());
        Reply invalid = member.send(HttpRequest.newBuilder(member.uri("/v1/locks/errors/acquire")).header("X-Request-Id", "bad-body")
                .POST(HttpRequest.BodyPublishers.ofString("{")));

        assertThat(given.header("X-Request-Id")).isEqualTo("trace-42.a/b");
        assertThat(fresh.header("X-Request-Id")).matches("[0-9a-f]{16}");
        assertThat(tooLong.header("X-Request-Id")).matches("[0-9a-f]{16}");
        assertThat(unknownRoute.header("X-Request-Id")).isEqualTo("lost-route");
        assertThat(invalid.header("X-Request-Id")).isEqualTo("bad-body");
        assertThat(member.get("/healthz").header("X-Request-Id")).isNotEqualTo(fresh.header("X-Request-Id"));
        assertThat(RequestIds.accept("r".repeat(128))).isEqualTo("r".repeat(128));
        assertThat(RequestIds.accept("has space")).matches("[0-9a-f]{16}");
        assertThat(RequestIds.accept("tab\t")).matches("[0-9a-f]{16}");
        assertThat(RequestIds.accept("é")).matches("[0-9a-f]{16}");
        assertThat(RequestIds.accept("quo\"te")).as("would break a log line").matches("[0-9a-f]{16}");
    }
}

package io.tenure.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.server.http.HttpMember.Reply;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Base64;

import static io.tenure.server.http.HttpLockApiTest.assertError;
import static io.tenure.server.http.HttpMember.body;
import static io.tenure.server.http.HttpMember.encoded;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP key-value API against one real member (each test uses its own keys): puts, reads,
 * compare-and-sets and deletes with their answers, text and binary values, a retried put applied
 * once, absent keys, the paged list, and every refusal answered with its field and without a change.
 */
class HttpKvApiTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);

    private static Reply post(String key, String action, Object... fields) {
        return member.post("/v1/kv/" + encoded(key) + "/" + action, body(fields));
    }

    private static JsonNode ok(Reply r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    private static Reply get(String key) {
        return member.get("/v1/kv/" + encoded(key));
    }

    @Test
    void aPutIsReadBackWithItsRevisionsAndADeleteMakesTheKeyNotFound() {
        assertError(get("conf/mode"), 404, "not_found", null);

        JsonNode created = ok(post("conf/mode", "put", "value", "active ✓"));
        assertThat(created.fieldNames()).toIterable().containsExactly("key", "revision", "prev_mod_revision", "created", "version");
        assertThat(created.get("created").asBoolean()).isTrue();
        assertThat(created.get("version").asLong()).isOne();
        JsonNode replaced = ok(post("conf/mode", "put", "value", "draining", "ttl_ms", 600_000));
        assertThat(replaced.get("prev_mod_revision").asLong()).isEqualTo(created.get("revision").asLong());
        assertThat(replaced.get("created").asBoolean()).isFalse();

        JsonNode read = ok(get("conf/mode"));
        assertThat(read.get("key").asText()).isEqualTo("conf/mode");
        assertThat(read.get("value").asText()).isEqualTo("draining");
        assertThat(read.has("value_base64")).isFalse();
        assertThat(read.get("create_revision").asLong()).isEqualTo(created.get("revision").asLong());
        assertThat(read.get("mod_revision").asLong()).isEqualTo(replaced.get("revision").asLong());
        assertThat(read.get("version").asLong()).isEqualTo(2);
        assertThat(read.get("ttl_ms").asLong()).isEqualTo(600_000);
        assertThat(read.get("lease_id").asLong()).isZero();
        assertThat(read.get("revision").asLong()).isGreaterThanOrEqualTo(read.get("mod_revision").asLong());
        assertThat(ok(member.get("/v1/kv/conf/mode")).get("value").asText()).as("the key unencoded names the same").isEqualTo("draining");

        JsonNode deleted = ok(post("conf/mode", "delete"));
        assertThat(deleted.get("deleted").asBoolean()).isTrue();
        assertThat(deleted.get("revision").asLong()).isGreaterThan(read.get("mod_revision").asLong());
        assertError(get("conf/mode"), 404, "not_found", null);
        assertThat(ok(post("conf/mode", "delete")).get("deleted").asBoolean()).as("absent").isFalse();
    }

    @Test
    void bytesThatAreNotUtf8TravelInBase64BothWays() {
        byte[] binary = {0, (byte) 0xff, (byte) 0xfe, 65};
        ok(post("bin/a", "put", "value_base64", Base64.getEncoder().encodeToString(binary)));
        JsonNode read = ok(get("bin/a"));
        assertThat(read.has("value")).isFalse();
        assertThat(Base64.getDecoder().decode(read.get("value_base64").asText())).isEqualTo(binary);
        ok(post("bin/b", "put", "value_base64", Base64.getEncoder().encodeToString("text".getBytes())));
        assertThat(ok(get("bin/b")).get("value").asText()).as("valid UTF-8 is answered as text").isEqualTo("text");
    }

    @Test
    void compareAndSetsSwapOnlyWhenTheKeyIsAsExpected() {
        JsonNode created = ok(post("cas/x", "compare-and-set", "expected_mod_revision", 0, "value", "one"));
        assertThat(created.get("swapped").asBoolean()).as("0: create if absent").isTrue();
        long revision = created.get("mod_revision").asLong();
        JsonNode exists = ok(post("cas/x", "compare-and-set", "expected_mod_revision", 0, "value", "two"));
        assertThat(exists.get("swapped").asBoolean()).isFalse();
        assertThat(exists.get("mod_revision").asLong()).isEqualTo(revision);
        assertThat(exists.get("value").asText()).as("the value it has").isEqualTo("one");

        JsonNode byValue = ok(post("cas/x", "compare-and-set", "expected_value", "one", "value", "two"));
        assertThat(byValue.get("swapped").asBoolean()).isTrue();
        assertThat(byValue.get("prev_mod_revision").asLong()).isEqualTo(revision);
        assertThat(ok(post("cas/x", "compare-and-set", "expected_mod_revision", revision, "value", "three")).get("swapped").asBoolean())
                .as("put since").isFalse();
        assertThat(ok(post("cas/x", "compare-and-set", "expected_mod_revision", byValue.get("mod_revision").asLong(), "value", "three"))
                .get("swapped").asBoolean()).isTrue();
        assertThat(ok(get("cas/x")).get("value").asText()).isEqualTo("three");

        JsonNode missedDelete = ok(post("cas/x", "delete", "expected_mod_revision", revision));
        assertThat(missedDelete.get("deleted").asBoolean()).isFalse();
        assertThat(missedDelete.get("compare_failed").asBoolean()).isTrue();
        assertThat(ok(get("cas/x")).get("value").asText()).isEqualTo("three");
    }

    @Test
    void aPutRetriedWithItsRequestIdIsAppliedOnce() {
        JsonNode first = ok(post("retried/a", "put", "value", "v", "request_id", 4242));
        JsonNode retry = ok(post("retried/a", "put", "value", "v", "request_id", 4242));
        assertThat(retry).isEqualTo(first);
        assertThat(ok(get("retried/a")).get("version").asLong()).isOne();
    }

    @Test
    void badInputIsRefusedNamingTheFieldAndNothingChanges() {
        ok(post("bad/a", "put", "value", "kept"));
        assertError(member.post("/v1/kv//put", body("value", "x")), 400, "invalid_argument", "key");
        assertError(post("bad/a", "put"), 400, "invalid_argument", "value");
        assertError(post("bad/a", "put", "value", 5), 400, "invalid_argument", "value");
        assertError(post("bad/a", "put", "value", "x", "value_base64", "eA=="), 400, "invalid_argument", "value");
        assertError(post("bad/a", "put", "value_base64", "not base64!"), 400, "invalid_argument", "value_base64");
        assertError(post("bad/a", "put", "value", "x".repeat(64 * 1024 + 1)), 400, "invalid_argument", "value");
        assertError(post("bad/a", "put", "value", "x", "ttl_ms", -5), 400, "invalid_argument", "ttl_ms");
        assertError(post("bad/a", "put", "value", "x", "ttl_ms", "soon"), 400, "invalid_argument", "ttl_ms");
        assertError(post("bad/a", "put", "value", "x", "ttl_ms", 1000, "lease_id", 12), 400, "invalid_argument", "ttl_ms");
        assertError(post("bad/a", "put", "value", "x", "lease_id", 987_654_321), 404, "lease_not_found", "lease_id");
        assertError(post("bad/a", "compare-and-set", "value", "x"), 400, "invalid_argument", "expected_mod_revision");
        assertError(post("bad/a", "compare-and-set", "value", "x", "expected_mod_revision", 3, "expected_value", "kept"),
                400, "invalid_argument", "expected_mod_revision");
        assertError(post("bad/a", "compare-and-set", "value", "x", "expected_mod_revision", -1), 400, "invalid_argument",
                "expected_mod_revision");
        assertError(post("bad/a", "delete", "expected_mod_revision", -1), 400, "invalid_argument", "expected_mod_revision");
        assertError(post("bad/a", "set", "value", "x"), 404, "unknown_route", null);
        assertError(member.get("/v1/kv?limit=0"), 400, "invalid_argument", "limit");
        JsonNode read = ok(get("bad/a"));
        assertThat(read.get("value").asText()).isEqualTo("kept");
        assertThat(read.get("version").asLong()).isOne();
    }

    @Test
    void theListAnswersKeysByPrefixInKeyOrderAPageAtATime() {
        for (String key : new String[] {"svc/b", "svc/a", "svc/c", "svcx", "elsewhere"}) {
            ok(post(key, "put", "value", key));
        }
        JsonNode two = ok(member.get("/v1/kv?prefix=svc/&limit=2"));
        assertThat(two.get("entries")).extracting(e -> e.get("key").asText()).containsExactly("svc/a", "svc/b");
        assertThat(two.get("entries").get(0).get("value").asText()).isEqualTo("svc/a");
        assertThat(two.get("more").asBoolean()).isTrue();
        assertThat(two.get("next_after").asText()).isEqualTo("svc/b");
        JsonNode rest = ok(member.get("/v1/kv?prefix=svc/&limit=2&after=svc/b"));
        assertThat(rest.get("entries")).extracting(e -> e.get("key").asText()).containsExactly("svc/c");
        assertThat(rest.get("more").asBoolean()).isFalse();
        assertThat(ok(member.get("/v1/kv?prefix=svc")).get("entries")).hasSize(4);
    }

    @Test
    void theMetricsCountEachOperationByResultAndTheKeys() {
        ok(post("metrics/a", "put", "value", "x"));
        ok(post("metrics/a", "compare-and-set", "expected_mod_revision", 0, "value", "y"));
        ok(post("metrics/a", "delete"));
        ok(post("metrics/a", "delete"));

        String metrics = member.get("/metrics").body();

        assertThat(metrics).contains("kv_put_total{result=\"put\"}", "kv_compare_and_set_total{result=\"compare_failed\"}",
                "kv_delete_total{result=\"deleted\"}", "kv_delete_total{result=\"absent\"}", "kv_keys", "kv_ttl_deadlines");
    }
}

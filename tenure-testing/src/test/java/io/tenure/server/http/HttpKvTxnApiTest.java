package io.tenure.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.server.http.HttpMember.Reply;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.tenure.server.http.HttpLockApiTest.assertError;
import static io.tenure.server.http.HttpMember.body;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP transaction endpoint, POST /v1/txn, against one real member (each test uses its own
 * keys and counters): both branches with their results, a retry applied once, a key named "txn"
 * that stays a key, and every refusal answered with its field and without a change.
 */
class HttpKvTxnApiTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);

    private static Reply txn(String json) {
        return member.post("/v1/txn", json);
    }

    private static JsonNode ok(Reply r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    private static String value(String key) {
        Reply r = member.get("/v1/kv/" + key);
        return r.status() == 404 ? null : r.json().get("value").asText();
    }

    private static long counter(String name) {
        return ok(member.get("/v1/counters/" + name)).get("value").asLong();
    }

    @Test
    void theComparisonsChooseTheBranchAndEachOperationAnswersAsItsOwnEndpoint() {
        long revision = ok(member.post("/v1/kv/t1/a/put", body("value", "1"))).get("revision").asLong();
        ok(member.post("/v1/kv/t1/b/put", body("value", "old")));
        ok(member.post("/v1/counters/t1/c/set", body("value", 5)));

        JsonNode done = ok(txn("""
                {"compare": [{"kind": "kv", "key": "t1/a", "target": "mod_revision", "result": "equal", "value": %d},
                             {"kind": "kv", "key": "t1/b", "target": "value", "result": "equal", "value": "old"},
                             {"kind": "counter", "key": "t1/c", "target": "value", "result": "greater", "value": 3}],
                 "success": [{"put": {"key": "t1/a", "value": "2", "ttl_ms": 600000}}, {"delete": {"key": "t1/b"}},
                             {"add": {"counter": "t1/c", "delta": 2}}, {"set": {"counter": "t1/d", "value": -1}}],
                 "failure": [{"put": {"key": "t1/lost", "value": "x"}}]}
                """.formatted(revision)));
        assertThat(done.get("succeeded").asBoolean()).isTrue();
        JsonNode results = done.get("results");
        assertThat(results).hasSize(4);
        assertThat(results.get(0).get("put").get("prev_mod_revision").asLong()).isEqualTo(revision);
        assertThat(results.get(0).get("put").get("version").asLong()).isEqualTo(2);
        assertThat(results.get(0).get("put").get("created").asBoolean()).isFalse();
        assertThat(results.get(1).get("delete").get("deleted").asBoolean()).isTrue();
        assertThat(results.get(2).get("add").get("value").asLong()).isEqualTo(7);
        assertThat(results.get(2).get("add").get("previous").asLong()).isEqualTo(5);
        assertThat(results.get(3).get("set").get("counter").asText()).isEqualTo("t1/d");
        assertThat(done.get("revision").asLong()).isEqualTo(results.get(3).get("set").get("mod_revision").asLong());
        assertThat(value("t1/a")).isEqualTo("2");
        assertThat(ok(member.get("/v1/kv/t1/a")).get("ttl_ms").asLong()).isEqualTo(600_000);
        assertThat(value("t1/b")).isNull();
        assertThat(value("t1/lost")).isNull();
        assertThat(counter("t1/c")).isEqualTo(7);

        JsonNode failed = ok(txn("""
                {"compare": [{"kind": "kv", "key": "t1/a", "target": "version", "result": "less", "value": 2}],
                 "success": [{"delete": {"key": "t1/a"}}],
                 "failure": [{"put": {"key": "t1/lost", "value_base64": "AP8="}}, {"delete": {"key": "t1/never"}}]}
                """));
        assertThat(failed.get("succeeded").asBoolean()).isFalse();
        assertThat(failed.get("results").get(0).get("put").get("created").asBoolean()).isTrue();
        assertThat(failed.get("results").get(1).get("delete").get("deleted").asBoolean()).isFalse();
        assertThat(value("t1/a")).isEqualTo("2");
        assertThat(ok(member.get("/v1/kv/t1/lost")).get("value_base64").asText()).isEqualTo("AP8=");
    }

    @Test
    void aRetryWithTheSameRequestIdIsAppliedOnceAndAKeyNamedTxnIsAKey() {
        String add = """
                {"success": [{"add": {"counter": "t2/c"}}], "request_id": 4242}
                """;
        JsonNode first = ok(txn(add));
        JsonNode retry = ok(txn(add));
        assertThat(retry).isEqualTo(first);
        assertThat(counter("t2/c")).isOne();

        ok(member.post("/v1/kv/txn/put", body("value", "a key")));
        assertThat(value("txn")).isEqualTo("a key");
        assertThat(ok(txn("""
                {"compare": [{"kind": "kv", "key": "txn", "target": "create_revision", "result": "not_equal", "value": 0}]}
                """)).get("succeeded").asBoolean()).isTrue();
    }

    @Test
    void badInputIsAnsweredWithItsFieldAndChangesNothing() {
        ok(member.post("/v1/counters/t3/full/set", body("value", Long.MAX_VALUE)));
        String add = "{\"add\": {\"counter\": \"t3/c\"}}";

        assertError(txn("[]"), 400, "invalid_json", null);
        assertError(txn("{\"compare\": {}}"), 400, "invalid_argument", "compare");
        assertError(txn("{\"compare\": [{\"key\": \"a\", \"target\": \"value\", \"result\": \"equal\", \"value\": 1}]}"),
                400, "invalid_argument", "compare[0].kind");
        assertError(txn("{\"compare\": [{\"kind\": \"kv\", \"key\": \"a\", \"target\": \"size\", \"result\": \"equal\", \"value\": 1}]}"),
                400, "invalid_argument", "compare[0].target");
        assertError(txn("{\"compare\": [{\"kind\": \"kv\", \"key\": \"a\", \"target\": \"version\", \"result\": \"above\", \"value\": 1}]}"),
                400, "invalid_argument", "compare[0].result");
        assertError(txn("{\"compare\": [{\"kind\": \"counter\", \"key\": \"a\", \"target\": \"value\", \"result\": \"equal\", \"value\": \"x\"}]}"),
                400, "invalid_argument", "compare[0].value");
        assertError(txn("{\"compare\": [{\"kind\": \"kv\", \"key\": \"\", \"target\": \"version\", \"result\": \"equal\", \"value\": 1}]}"),
                400, "invalid_argument", "compare[0].key");
        assertError(txn("{\"success\": [" + add + ", {\"put\": {\"key\": \"a\"}, \"delete\": {\"key\": \"a\"}}]}"),
                400, "invalid_argument", "success[1]");
        assertError(txn("{\"success\": [" + add + "], \"failure\": [{\"put\": {\"key\": \"a\"}}]}"),
                400, "invalid_argument", "failure[0].put.value");
        assertError(txn("{\"success\": [" + add + ", {\"put\": {\"key\": \"t3/a\", \"value\": \"" + "x".repeat(64 * 1024 + 1) + "\"}}]}"),
                400, "invalid_argument", "success[1].put.value");
        Reply exclusive = txn("{\"success\": [" + add + "], \"failure\": [{\"put\": {\"key\": \"t3/a\", \"value\": \"x\", \"ttl_ms\": 5,"
                + " \"lease_id\": 9}}]}");
        assertError(exclusive, 400, "invalid_argument", "failure[0].put.ttl_ms");
        assertThat(exclusive.json().get("message").asText()).startsWith("failure[0] (KvPut): ttl_ms and lease_id are exclusive");
        assertError(txn("{\"success\": [{\"add\": {\"counter\": \"\"}}]}"), 400, "invalid_argument", "success[0]");
        assertError(txn("{\"success\": [" + (add + ",").repeat(128) + add + "]}"), 400, "invalid_argument", "success");
        assertError(txn("{\"success\": [" + add + ", {\"put\": {\"key\": \"t3/a\", \"value\": \"x\", \"lease_id\": 424242}}]}"),
                404, "lease_not_found", null);
        Reply overflow = txn("{\"success\": [" + add + ", {\"add\": {\"counter\": \"t3/full\", \"delta\": 1}}]}");
        assertError(overflow, 409, "conflict", null);
        assertThat(overflow.json().get("message").asText()).startsWith("success[1] (CounterAdd): counter 't3/full' is");

        assertThat(counter("t3/c")).as("nothing changed").isZero();
        assertThat(counter("t3/full")).isEqualTo(Long.MAX_VALUE);
        assertThat(value("t3/a")).isNull();
    }
}

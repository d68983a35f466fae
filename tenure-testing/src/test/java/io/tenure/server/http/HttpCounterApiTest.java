package io.tenure.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.server.http.HttpMember.Reply;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.tenure.server.http.HttpLockApiTest.assertError;
import static io.tenure.server.http.HttpMember.body;
import static io.tenure.server.http.HttpMember.encoded;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP counter API against one real member (each test uses its own counter names): adds,
 * sets and compare-and-sets with their answers, a retried add applied once, reads of absent and
 * present counters, the list, and every refusal answered without a change.
 */
class HttpCounterApiTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);

    private static Reply post(String counter, String action, Object... fields) {
        return member.post("/v1/counters/" + encoded(counter) + "/" + action, body(fields));
    }

    private static JsonNode ok(Reply r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    private static long valueOf(String counter) {
        return ok(member.get("/v1/counters/" + encoded(counter))).get("value").asLong();
    }

    @Test
    void addsSetsAndCompareAndSetsAnswerTheValueBeforeAndAfter() {
        JsonNode absent = ok(member.get("/v1/counters/" + encoded("jobs/seq")));
        assertThat(absent.get("value").asLong()).isZero();
        assertThat(absent.get("exists").asBoolean()).isFalse();

        JsonNode added = ok(post("jobs/seq", "add", "delta", 5));
        assertThat(added.fieldNames()).toIterable().containsExactly("counter", "value", "previous", "swapped", "mod_revision");
        assertThat(added.get("value").asLong()).isEqualTo(5);
        assertThat(added.get("previous").asLong()).isZero();
        assertThat(ok(member.post("/v1/counters/" + encoded("jobs/seq") + "/add", "{}")).get("value").asLong())
                .as("delta defaults to 1").isEqualTo(6);
        assertThat(ok(post("jobs/seq", "add", "delta", -10)).get("value").asLong()).isEqualTo(-4);
        assertThat(ok(post("jobs/seq", "set", "value", Long.MAX_VALUE)).get("previous").asLong()).isEqualTo(-4);
        assertThat(valueOf("jobs/seq")).as("64 bits, exactly").isEqualTo(Long.MAX_VALUE);

        JsonNode missed = ok(post("jobs/seq", "compare-and-set", "expected", 1, "value", 2));
        assertThat(missed.get("swapped").asBoolean()).isFalse();
        assertThat(missed.get("value").asLong()).as("the value it has").isEqualTo(Long.MAX_VALUE);
        assertThat(missed.get("mod_revision").asLong()).isZero();
        JsonNode swapped = ok(post("jobs/seq", "compare-and-set", "expected", Long.MAX_VALUE, "value", 2));
        assertThat(swapped.get("swapped").asBoolean()).isTrue();

        JsonNode read = ok(member.get("/v1/counters/" + encoded("jobs/seq")));
        assertThat(read.get("value").asLong()).isEqualTo(2);
        assertThat(read.get("exists").asBoolean()).isTrue();
        assertThat(read.get("version").asLong()).isEqualTo(5);
        assertThat(read.get("mod_revision").asLong()).isEqualTo(swapped.get("mod_revision").asLong());
        assertThat(read.get("revision").asLong()).isGreaterThanOrEqualTo(read.get("mod_revision").asLong());
    }

    @Test
    void anAddRetriedWithItsRequestIdIsAppliedOnce() {
        JsonNode first = ok(post("jobs/retried", "add", "delta", 3, "request_id", 99));
        JsonNode retry = ok(post("jobs/retried", "add", "delta", 3, "request_id", 99));
        assertThat(retry).isEqualTo(first);
        assertThat(valueOf("jobs/retried")).isEqualTo(3);
    }

    @Test
    void badInputIsRefusedNamingTheFieldAndNothingChanges() {
        ok(post("jobs/bad", "set", "value", 7));
        assertError(post("jobs/bad", "add", "delta", "five"), 400, "invalid_argument", "delta");
        assertError(post("jobs/bad", "add", "delta", 1.5), 400, "invalid_argument", "delta");
        assertError(post("jobs/bad", "set"), 400, "invalid_argument", "value");
        assertError(post("jobs/bad", "compare-and-set", "value", 1), 400, "invalid_argument", "expected");
        assertError(post("jobs/bad", "incr", "delta", 1), 404, "unknown_route", null);
        assertThat(valueOf("jobs/bad")).isEqualTo(7);

        ok(post("jobs/full", "set", "value", Long.MAX_VALUE - 1));
        Reply over = post("jobs/full", "add", "delta", 2);
        assertError(over, 409, "conflict", "delta");
        assertThat(over.json().get("message").asText()).contains("signed 64-bit");
        assertThat(valueOf("jobs/full")).isEqualTo(Long.MAX_VALUE - 1);

        assertError(member.get("/v1/counters?limit=0"), 400, "invalid_argument", "limit");
    }

    @Test
    void theListAnswersCountersByPrefixInNameOrder() {
        for (String name : new String[] {"tally/b", "tally/a", "tally/c", "elsewhere"}) {
            ok(post(name, "add"));
        }
        JsonNode two = ok(member.get("/v1/counters?prefix=tally/&limit=2"));
        assertThat(two.get("counters")).extracting(c -> c.get("counter").asText()).containsExactly("tally/a", "tally/b");
        assertThat(two.get("more").asBoolean()).isTrue();
        JsonNode all = ok(member.get("/v1/counters?prefix=tally/"));
        assertThat(all.get("counters")).hasSize(3);
        assertThat(all.get("more").asBoolean()).isFalse();
    }
}

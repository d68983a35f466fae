package io.tenure.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.core.list.ListTable;
import io.tenure.server.http.HttpMember.Reply;
import io.tenure.server.list.Lists;
import io.tenure.testing.Await;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.tenure.server.http.HttpLockApiTest.assertError;
import static io.tenure.server.http.HttpMember.await;
import static io.tenure.server.http.HttpMember.body;
import static io.tenure.server.http.HttpMember.encoded;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP list API against one real member (each test uses its own lists): pushes at either end,
 * pops, the length and ranges, a waiting pop served by a later push, waiting pops served in arrival
 * order, every refusal answered naming its field without a change, and the item of a pop whose
 * client went away given back to the list.
 */
class HttpListApiTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);

    private static Reply post(String list, String action, Object... fields) {
        return member.post("/v1/lists/" + encoded(list) + "/" + action, body(fields));
    }

    private static CompletableFuture<Reply> popAsync(String list, long timeoutMs) {
        return member.postAsync("/v1/lists/" + encoded(list) + "/pop", body("timeout_ms", timeoutMs));
    }

    private static JsonNode ok(Reply r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    private static JsonNode state(String list) {
        return ok(member.get("/v1/lists/" + encoded(list)));
    }

    private static List<String> range(String list, String query) {
        List<String> items = new ArrayList<>();
        ok(member.get("/v1/lists/" + encoded(list) + "/range" + query)).get("items").forEach(i -> items.add(i.get("value").asText()));
        return items;
    }

    @Test
    void pushesAndPopsAtEitherEndWithTheLengthAndRanges() {
        assertThat(state("jobs/a").get("length").asInt()).as("absent: empty").isZero();
        assertThat(ok(post("jobs/a", "push", "value", "one")).get("length").asInt()).isOne();
        ok(post("jobs/a", "push", "value", "two"));
        JsonNode pushed = ok(post("jobs/a", "push", "value", "zero ✓", "left", true));
        assertThat(pushed.get("length").asInt()).isEqualTo(3);
        assertThat(pushed.get("handed_to").asLong()).as("nobody waits: stored").isZero();
        assertThat(state("jobs/a").get("length").asInt()).isEqualTo(3);
        assertThat(state("jobs/a").get("waiting").asInt()).isZero();
        assertThat(range("jobs/a", "")).containsExactly("zero ✓", "one", "two");
        assertThat(range("jobs/a", "?start=1&stop=1")).containsExactly("one");
        assertThat(range("jobs/a", "?start=-2")).containsExactly("one", "two");
        assertThat(ok(member.get("/v1/lists/jobs/a/range?start=0&stop=-1")).get("more").asBoolean()).isFalse();

        assertThat(ok(post("jobs/a", "pop")).get("value").asText()).isEqualTo("zero ✓");
        assertThat(ok(post("jobs/a", "pop", "right", true)).get("value").asText()).isEqualTo("two");
        assertThat(ok(post("jobs/a", "pop", "timeout_ms", 0)).get("value").asText()).isEqualTo("one");
        assertError(post("jobs/a", "pop"), 404, "not_found", null);
        assertThat(state("jobs/a").get("length").asInt()).isZero();

        byte[] binary = {0, (byte) 0xff, (byte) 0xfe, 65};
        ok(post("jobs/bin", "push", "value_base64", Base64.getEncoder().encodeToString(binary)));
        JsonNode popped = ok(post("jobs/bin", "pop"));
        assertThat(popped.has("value")).isFalse();
        assertThat(Base64.getDecoder().decode(popped.get("value_base64").asText())).isEqualTo(binary);
    }

    @Test
    void aWaitingPopIsServedByALaterPushAndAnEmptyWaitEndsNotFound() throws Exception {
        CompletableFuture<Reply> waiting = popAsync("wait/a", 30_000);
        Await.until("the pop waits", Duration.ofSeconds(30), () -> state("wait/a").get("waiting").asInt() == 1);
        JsonNode pushed = ok(post("wait/a", "push", "value", "late"));
        assertThat(pushed.get("handed_to").asLong()).as("handed to the waiting pop's lease").isPositive();
        assertThat(ok(await(waiting)).get("value").asText()).isEqualTo("late");
        assertThat(state("wait/a").get("length").asInt()).isZero();

        Reply empty = await(popAsync("wait/b", 200));
        assertError(empty, 404, "not_found", null);
        Await.until("the pops' leases are revoked", Duration.ofSeconds(30), () -> member.leasesOf(ListApi.POP_OWNER).isEmpty());
    }

    @Test
    void waitingPopsAreServedInArrivalOrder() throws Exception {
        CompletableFuture<Reply> first = popAsync("fifo/a", 30_000);
        Await.until("the first pop waits", Duration.ofSeconds(30), () -> state("fifo/a").get("waiting").asInt() == 1);
        CompletableFuture<Reply> second = popAsync("fifo/a", 30_000);
        Await.until("the second pop waits", Duration.ofSeconds(30), () -> state("fifo/a").get("waiting").asInt() == 2);
        ok(post("fifo/a", "push", "value", "1"));
        ok(post("fifo/a", "push", "value", "2"));
        assertThat(ok(await(first)).get("value").asText()).isEqualTo("1");
        assertThat(ok(await(second)).get("value").asText()).isEqualTo("2");
    }

    @Test
    void badInputIsRefusedNamingTheFieldAndNothingChanges() {
        ok(post("bad/a", "push", "value", "kept"));
        assertError(member.post("/v1/lists//push", body("value", "x")), 400, "invalid_argument", "list");
        assertError(post("bad/a", "push"), 400, "invalid_argument", "value");
        assertError(post("bad/a", "push", "value", 5), 400, "invalid_argument", "value");
        assertError(post("bad/a", "push", "value", "x", "value_base64", "eA=="), 400, "invalid_argument", "value");
        assertError(post("bad/a", "push", "value_base64", "not base64!"), 400, "invalid_argument", "value_base64");
        assertError(post("bad/a", "push", "value", "x".repeat(ListTable.MAX_VALUE_BYTES + 1)), 400, "invalid_argument", "value");
        assertError(post("bad/a", "push", "value", "x", "left", "yes"), 400, "invalid_argument", "left");
        assertError(post("bad/a", "pop", "timeout_ms", -1), 400, "invalid_argument", "timeout_ms");
        assertError(post("bad/a", "pop", "timeout_ms", "soon"), 400, "invalid_argument", "timeout_ms");
        assertError(post("bad/a", "pop", "timeout_ms", LeaseRecipe.MAX_WAIT_MS + 1), 400, "invalid_argument", "timeout_ms");
        assertError(post("bad/a", "pop", "right", 1), 400, "invalid_argument", "right");
        assertError(post("bad/a", "pop", "request_id", "x"), 400, "invalid_argument", "request_id");
        assertError(post("bad/a", "peek"), 404, "unknown_route", null);
        assertError(member.get("/v1/lists/bad/a/range?start=first"), 400, "invalid_argument", "start");
        assertError(member.get("/v1/lists/bad/a/range?stop=1.5"), 400, "invalid_argument", "stop");
        assertThat(range("bad/a", "")).containsExactly("kept");
    }

    @Test
    void aFullListRefusesAPushAndKeepsItsItems() {
        Lists lists = member.server().member().lists();
        byte[] item = {1};
        for (int batch = 0; batch < ListTable.MAX_LENGTH / 1_000; batch++) {
            List<CompletableFuture<Lists.PushOutcome>> pushes = new ArrayList<>();
            for (int i = 0; i < 1_000; i++) {
                pushes.add(lists.push(io.tenure.server.security.Principal.NOBODY, "full/a", item, false, 0));
            }
            CompletableFuture.allOf(pushes.toArray(CompletableFuture[]::new)).join();
        }
        assertError(post("full/a", "push", "value", "one too many"), 429, "limit_exceeded", "list");
        assertThat(state("full/a").get("length").asInt()).isEqualTo(ListTable.MAX_LENGTH);
        assertThat(ok(member.get("/v1/lists/full/a/range?start=-1")).get("items").get(0).get("value").asText())
                .as("the last item is still the last pushed").isEqualTo("\u0001");
    }

    @Test
    void theItemOfAPopWhoseClientWentAwayGoesBackToTheList() throws Exception {
        // Handed to the pop (the push comes at once after the client left), then given back when its answer finds the client gone.
        try (Socket caller = popOverRawConnection("gone/a")) {
            Await.until("the pop waits", Duration.ofSeconds(30), () -> state("gone/a").get("waiting").asInt() == 1);
        }
        ok(post("gone/a", "push", "value", "kept for the next"));
        Await.until("the item is back in the list", Duration.ofSeconds(30),
                () -> state("gone/a").get("length").asInt() == 1 && state("gone/a").get("waiting").asInt() == 0);
        assertThat(ok(post("gone/a", "pop")).get("value").asText()).isEqualTo("kept for the next");

        // Noticed while it waits: the wait is withdrawn, and a later push stores its item.
        try (Socket caller = popOverRawConnection("gone/b")) {
            Await.until("the pop waits", Duration.ofSeconds(30), () -> state("gone/b").get("waiting").asInt() == 1);
        }
        Await.until("the wait is withdrawn", Duration.ofSeconds(30), () -> state("gone/b").get("waiting").asInt() == 0);
        assertThat(ok(post("gone/b", "push", "value", "stored")).get("handed_to").asLong()).isZero();
        assertThat(range("gone/b", "")).containsExactly("stored");
        Await.until("the pops' leases are revoked", Duration.ofSeconds(30), () -> member.leasesOf(ListApi.POP_OWNER).isEmpty());
    }

    /** Sends a pop that waits 30 s over a connection of its own, which the caller closes without reading the answer. */
    private static Socket popOverRawConnection(String list) throws Exception {
        Socket socket = new Socket("127.0.0.1", member.server().httpPort());
        String json = body("timeout_ms", 30_000);
        OutputStream out = socket.getOutputStream();
        out.write(("POST /v1/lists/" + encoded(list) + "/pop HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + json.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + json).getBytes(StandardCharsets.UTF_8));
        out.flush();
        return socket;
    }
}

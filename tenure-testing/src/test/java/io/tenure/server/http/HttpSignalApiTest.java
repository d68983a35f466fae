package io.tenure.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.server.http.HttpMember.Reply;
import io.tenure.testing.Await;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

import static io.tenure.server.http.HttpLockApiTest.assertError;
import static io.tenure.server.http.HttpMember.body;
import static org.assertj.core.api.Assertions.assertThat;

/** The HTTP signal API against one real member: publish, an event stream that listens, its end, and every refusal. */
class HttpSignalApiTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);

    private static Reply publish(String channel, Object... fields) {
        return member.post("/v1/signals/" + channel + "/publish", body(fields));
    }

    /** An open event stream and the lines it has sent so far. */
    private record Listening(CompletableFuture<HttpResponse<Stream<String>>> response, List<String> lines) {
        void close() {
            response.thenAccept(r -> r.body().close());
            response.cancel(true);
        }

        boolean has(String line) {
            synchronized (lines) {
                return lines.contains(line);
            }
        }
    }

    private static Listening listen(String query) {
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        HttpRequest request = HttpRequest.newBuilder(member.uri("/v1/signals?" + query)).header("Accept", "text/event-stream").GET().build();
        CompletableFuture<HttpResponse<Stream<String>>> response = HttpClient.newHttpClient()
                .sendAsync(request, HttpResponse.BodyHandlers.ofLines());
        response.thenAcceptAsync(r -> {
            try (Stream<String> body = r.body()) {
                body.forEach(lines::add);
            } catch (RuntimeException closed) {
                // the test closed the stream
            }
        });
        return new Listening(response, lines);
    }

    @Test
    void anEventStreamListensAndPublishReportsItsReceivers() {
        Listening stream = listen("pattern=builds.%3E");
        Await.until(() -> "the listening event: " + stream.lines(), WAIT, () -> stream.has("event: listening"));
        assertThat(stream.response().join().statusCode()).isEqualTo(200);

        JsonNode published = publish("builds.web", "payload", "commit 1f3a").json();
        assertThat(published.get("receivers").asInt()).isOne();
        assertThat(published.get("channel").asText()).isEqualTo("builds.web");
        assertThat(publish("builds.api", "payload_base64", "AP8=").json().get("receivers").asInt()).isOne();
        assertThat(publish("tests.unit", "payload", "x").json().get("receivers").asInt()).isZero();
        Await.until(() -> "two signal events: " + stream.lines(), WAIT,
                () -> stream.has("data: {\"channel\":\"builds.web\",\"payload\":\"commit 1f3a\"}")
                        && stream.has("data: {\"channel\":\"builds.api\",\"payload_base64\":\"AP8=\"}"));

        stream.close();
        Await.until("the listener and its lease are gone once the stream closed", WAIT,
                () -> publish("builds.web", "payload", "late").json().get("receivers").asInt() == 0);
    }

    @Test
    void badInputIsRefusedNamingTheField() {
        assertError(member.get("/v1/signals"), 400, "invalid_argument", "pattern");
        assertError(member.get("/v1/signals?pattern=a.%3E.b"), 400, "invalid_argument", "pattern");
        assertError(member.get("/v1/signals?pattern=a.b&ttl_ms=soon"), 400, "invalid_argument", "ttl_ms");
        assertError(member.get("/v1/signals?pattern=a.b&ttl_ms=1"), 400, "invalid_argument", "ttl_ms");
        assertError(member.get("/v1/signals?pattern=a.b"), 400, "invalid_argument", "Accept");
        assertError(publish("a.*", "payload", "x"), 400, "invalid_argument", "channel");
        assertError(publish("a..b", "payload", "x"), 400, "invalid_argument", "channel");
        assertError(publish("a.b", "payload_base64", "not base64!"), 400, "invalid_argument", "payload_base64");
        assertError(publish("a.b", "payload", "x", "payload_base64", "AA=="), 400, "invalid_argument", "payload");
        assertError(member.post("/v1/signals/a.b/publish", "{\"payload\":\"" + "x".repeat(64 * 1024 + 1) + "\"}"), 400,
                "invalid_argument", "payload");
        assertError(member.post("/v1/signals/a.b/shout", "{}"), 404, "unknown_route", null);
    }
}

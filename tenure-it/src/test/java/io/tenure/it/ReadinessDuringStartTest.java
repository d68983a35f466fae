package io.tenure.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.proto.v1.LeaseGrantBatchRequest;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseGrantResult;
import io.tenure.testing.Await;
import io.tenure.testing.MemberProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A member restarting with a large state answers {@code /readyz} with 503 and a status it names
 * ({@code starting} while it loads its snapshot and log, then {@code no_leader} or
 * {@code catching_up}) until it serves, never with an internal error: Ratis refuses to describe
 * a log it has not opened yet, and {@code /readyz} used to pass that on as a 500.
 */
@ExtendWith(ItLogs.class)
class ReadinessDuringStartTest {
    static final int LEASES = 100_000;

    @TempDir
    Path work;

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void aRestartingMemberIsNotReadyWithAReasonUntilItServes() throws Exception {
        Path data = work.resolve("n1");
        try (MemberProcess member = MemberProcess.single(data).start()) {
            int granted = 0;
            for (int batch = 0; batch < LEASES / 1_000; batch++) {
                LeaseGrantBatchRequest.Builder request = LeaseGrantBatchRequest.newBuilder();
                for (int i = 0; i < 1_000; i++) {
                    request.addGrants(LeaseGrantRequest.newBuilder().setTtlMs(TimeUnit.HOURS.toMillis(1)).setClientId("c" + i % 10));
                }
                for (LeaseGrantResult result : member.blocking().leaseGrantBatch(request.build()).getResultsList()) {
                    granted += result.hasGranted() ? 1 : 0;
                }
            }
            assertThat(granted).isEqualTo(LEASES);
            member.stop(); // a snapshot on the way out: the restart loads 100,000 leases from it

            member.launch();
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
            URI readyz = URI.create("http://" + member.host() + ":" + member.httpPort() + "/readyz");
            List<String> notReady = new ArrayList<>();
            // Every 5 ms: the window before the member serves is a second or two.
            Await.every(Duration.ofMillis(5)).until(() -> "ready within " + MemberProcess.START_LIMIT + "; answers so far " + notReady,
                    MemberProcess.START_LIMIT, () -> {
                        assertThat(member.isAlive()).as(member.tail(30)).isTrue();
                        HttpResponse<String> answer;
                        try {
                            answer = http.send(HttpRequest.newBuilder(readyz).timeout(Duration.ofSeconds(5)).build(),
                                    HttpResponse.BodyHandlers.ofString());
                        } catch (java.io.IOException notListeningYet) {
                            return false; // the HTTP port opens during the start
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new IllegalStateException(e);
                        }
                        if (answer.statusCode() == 200) {
                            return true;
                        }
                        assertThat(answer.statusCode()).as("an answer before the member serves: %s", answer.body()).isEqualTo(503);
                        assertThat(answer.body()).as("503 names why").containsPattern("\"status\":\"(starting|no_leader|catching_up)\"");
                        if (notReady.isEmpty() || !notReady.get(notReady.size() - 1).equals(answer.body())) {
                            notReady.add(answer.body());
                        }
                        return false;
                    });
            System.out.println("ReadinessDuringStartTest: not ready first as " + notReady);
            assertThat(member.logSinceStart()).doesNotContain("http_internal_error");
        }
    }
}

package io.tenure.testing;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** Samples of a member's Prometheus {@code /metrics}, for tests. */
final class MemberMetrics {
    private MemberMetrics() {
    }

    /** One sample of member {@code member}'s /metrics, by its name and labels as printed. */
    static double sample(TenureCluster cluster, int member, String sample) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create(cluster.httpEndpoint(member) + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        for (String line : response.body().split("\n")) {
            if (line.startsWith(sample + " ")) {
                return Double.parseDouble(line.substring(sample.length() + 1).trim());
            }
        }
        throw new AssertionError("no sample " + sample + " in /metrics");
    }
}

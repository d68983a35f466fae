package io.tenure.server.http;

import io.tenure.testing.Await;

import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.server.http.HttpMember.Reply;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.tenure.server.http.HttpMember.body;
import static org.assertj.core.api.Assertions.assertThat;

/** {@code /metrics} parses as Prometheus text (format 0.0.4), and its counters move as HTTP operations happen. */
class HttpMetricsTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);

    private static final String NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
    private static final String LABEL_VALUE = "\"(?:[^\"\\\\\\n]|\\\\[\\\\\"n])*\"";
    private static final Pattern HELP = Pattern.compile("# HELP (" + NAME + ") (.*)");
    private static final Pattern TYPE = Pattern.compile("# TYPE (" + NAME + ") (counter|gauge|histogram|summary|untyped)");
    private static final Pattern SAMPLE = Pattern.compile("(" + NAME + ")(\\{((?:[a-zA-Z_][a-zA-Z0-9_]*=" + LABEL_VALUE
            + ")(?:,[a-zA-Z_][a-zA-Z0-9_]*=" + LABEL_VALUE + ")*,?)?\\})? (\\S+)( -?\\d+)?");
    private static final Pattern VALUE = Pattern.compile("[-+]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][-+]?\\d+)?|[-+]?Inf|NaN");

    /**
     * A tiny Prometheus text parser: every line is a well-formed HELP, TYPE or sample line; every
     * sample belongs to a family declared by TYPE before it; returns sample (name{labels}) to value.
     */
    static Map<String, Double> parse(String text) {
        Map<String, Double> samples = new HashMap<>();
        Map<String, String> types = new HashMap<>();
        Set<String> helped = new HashSet<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty()) {
                continue;
            }
            if (line.startsWith("#")) {
                Matcher help = HELP.matcher(line);
                Matcher type = TYPE.matcher(line);
                if (help.matches()) {
                    assertThat(helped.add(help.group(1))).as("one HELP per family: %s", line).isTrue();
                } else if (type.matches()) {
                    assertThat(types.put(type.group(1), type.group(2))).as("one TYPE per family: %s", line).isNull();
                } else {
                    assertThat(line).as("a comment that is neither HELP nor TYPE").doesNotStartWith("# HELP").doesNotStartWith("# TYPE");
                }
                continue;
            }
            Matcher sample = SAMPLE.matcher(line);
            assertThat(sample.matches()).as("a sample line 'name{labels} value': %s", line).isTrue();
            assertThat(VALUE.matcher(sample.group(4)).matches()).as("a number: %s", line).isTrue();
            String name = sample.group(1);
            String family = familyOf(name, types);
            assertThat(family).as("sample %s follows the TYPE of its family", name).isNotNull();
            String key = name + (sample.group(3) == null ? "" : "{" + sample.group(3).replaceAll(",$", "") + "}");
            assertThat(samples.put(key, Double.parseDouble(sample.group(4).replace("Inf", "Infinity")))).as("duplicate %s", key).isNull();
        }
        assertThat(types).isNotEmpty();
        assertThat(helped).isEqualTo(types.keySet());
        return samples;
    }

    private static String familyOf(String name, Map<String, String> types) {
        if (types.containsKey(name)) {
            return name;
        }
        for (String suffix : List.of("_total", "_bucket", "_count", "_sum", "_created")) {
            if (name.endsWith(suffix) && types.containsKey(name.substring(0, name.length() - suffix.length()))) {
                return name.substring(0, name.length() - suffix.length());
            }
        }
        return null;
    }

    private static Map<String, Double> scrape() {
        Reply r = member.get("/metrics");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.header("Content-Type")).isEqualTo("text/plain; version=0.0.4; charset=utf-8");
        return parse(r.body());
    }

    private static double value(Map<String, Double> samples, String key) {
        return samples.getOrDefault(key, 0.0);
    }

    @Test
    void theParserRefusesWhatIsNotPrometheusText() {
        String ok = "# HELP up Whether it is up\n# TYPE up gauge\nup{job=\"a\\\"b\"} 1\n";
        assertThat(parse(ok)).containsEntry("up{job=\"a\\\"b\"}", 1.0);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> parse(ok + "up{job=\"c\"}\n")).isInstanceOf(AssertionError.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> parse(ok + "down 1\n")).isInstanceOf(AssertionError.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> parse(ok + "up{job=a} 1\n")).isInstanceOf(AssertionError.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> parse(ok + "# TYPE x weird\n")).isInstanceOf(AssertionError.class);
    }

    @Test
    void metricsParseAndNameTheIssuesFamilies() {
        Map<String, Double> samples = scrape();

        for (String family : List.of("locks_held", "leases_active", "lock_waiters", "watchers", "raft_term",
                "raft_commit_index", "raft_applied_index", "lock_expired_total", "raft_leader_changes_total",
                "raft_apply_latency_seconds_count", "raft_log_sync_latency_seconds_count", "raft_snapshot_duration_seconds_count")) {
            assertThat(samples).as(family).containsKey(family);
        }
        assertThat(samples.get("raft_term")).isPositive();
        assertThat(samples.get("raft_applied_index")).isPositive();
    }

    @Test
    void gaugesStillReadAfterAGarbageCollection() {
        // Regression: the gauges' suppliers were held weakly and read NaN once collected.
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        Map<String, Double> samples = scrape();

        for (String gauge : List.of("locks_held", "leases_active", "lock_waiters", "watchers", "raft_term",
                "raft_commit_index", "raft_applied_index")) {
            assertThat(samples.get(gauge)).as(gauge).isNotNaN();
        }
    }

    /**
     * Waits until the sample reaches the value: a counter is incremented when the operation's
     * future completes, which may be a moment after the HTTP answer was written.
     */
    private static void awaitSample(String key, double expected) {
        Await.until(key + " = " + expected, Duration.ofSeconds(10), () -> value(scrape(), key) == expected);
    }

    @Test
    void countersMoveAsOperationsHappen() {
        String acquired = "lock_acquire_total{result=\"acquired\"}";
        String held = "lock_acquire_total{result=\"held\"}";
        String renewed = "lock_renew_total{result=\"renewed\"}";
        String stale = "lock_release_total{result=\"stale\"}";
        String released = "lock_release_total{result=\"released\"}";
        String acquireLatency = "lock_op_latency_seconds_count{op=\"acquire\"}";
        Map<String, Double> before = scrape();

        JsonNode grant = member.acquire("metrics/lock", "counted", 10_000, 0).json();
        awaitSample(acquired, value(before, acquired) + 1);
        awaitSample("locks_held", value(before, "locks_held") + 1);

        assertThat(member.acquire("metrics/lock", "refused", 10_000, 0).status()).isEqualTo(409);
        awaitSample(held, value(before, held) + 1);

        assertThat(member.renew(grant).status()).isEqualTo(200);
        awaitSample(renewed, value(before, renewed) + 1);

        assertThat(member.post("/v1/locks/metrics%2Flock/release", body("owner_id", "counted",
                "lease_id", grant.get("lease_id").asLong(), "fencing_token", grant.get("fencing_token").asLong() + 1))
                .status()).isEqualTo(409);
        awaitSample(stale, value(before, stale) + 1);

        assertThat(member.release(grant).status()).isEqualTo(200);
        awaitSample(released, value(before, released) + 1);
        awaitSample("locks_held", value(before, "locks_held"));
        awaitSample("leases_active", value(before, "leases_active"));

        Map<String, Double> after = scrape();
        assertThat(value(after, acquired)).isEqualTo(value(before, acquired) + 1);
        assertThat(value(after, acquireLatency)).isEqualTo(value(before, acquireLatency) + 2);
    }

    @Test
    void requestsRefusedBeforeTheLockServiceCountAsRejected() {
        String acquireRejected = "lock_acquire_total{result=\"rejected\"}";
        String renewRejected = "lock_renew_total{result=\"rejected\"}";
        String releaseRejected = "lock_release_total{result=\"rejected\"}";
        Map<String, Double> before = scrape();

        assertThat(member.post("/v1/locks/metrics%2Fbad/acquire", "{\"owner_id\":\"w\",\"ttl_ms\":-5}").status()).isEqualTo(400);
        assertThat(member.post("/v1/locks/metrics%2Fbad/acquire", "{\"owner_id\":").status()).isEqualTo(400);
        assertThat(member.post("/v1/locks/metrics%2Fbad/renew", "{\"owner_id\":\"w\"}").status()).isEqualTo(400);
        assertThat(member.post("/v1/locks/metrics%2Fbad/release", "[]").status()).isEqualTo(400);

        awaitSample(acquireRejected, value(before, acquireRejected) + 2);
        awaitSample(renewRejected, value(before, renewRejected) + 1);
        awaitSample(releaseRejected, value(before, releaseRejected) + 1);
    }
}

package io.tenure.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ResultTableTest {
    private static BenchResult row(String target, String workload, int clients, double opsPerSec, Map<String, Object> extra) {
        return new BenchResult(target, workload, clients, 10, (long) (opsPerSec * 10), opsPerSec, 0.5, 1.5, 3, 0, extra);
    }

    @Test
    void aResultSurvivesItsJsonLine() {
        BenchResult r = row("tenure-1", "W2", 8, 3210.5, Map.of("acquisitions", List.of(1, 2), "wait_p99_ms", 2.5));
        String line = r.toJson();
        assertThat(line).startsWith("{\"target\":\"tenure-1\",\"workload\":\"W2\",\"clients\":8,\"seconds\":10.0,")
                .doesNotContain("\n");
        BenchResult back = BenchResult.parse(line);
        assertThat(back.target()).isEqualTo("tenure-1");
        assertThat(back.opsPerSec()).isEqualTo(3210.5);
        assertThat(back.extra()).containsEntry("wait_p99_ms", 2.5).containsEntry("acquisitions", List.of(1, 2));
    }

    @Test
    void readsResultLinesAndSkipsEverythingElse() throws Exception {
        String input = "tenure bench: starting members\n"
                + row("tenure-1", "W1", 1, 2000, Map.of()).toJson() + "\n"
                + "\n{\"not\": \"a result\"}\n"
                + "{\"target\":\"etcd\",\"workload\":\"W1\",\"clients\":1,\"seconds\":10,\"ops\":5000,\"ops_per_sec\":500,"
                + "\"p50_ms\":1.9,\"p99_ms\":4,\"max_ms\":9,\"overlaps\":0,\"extra\":{}}\n";
        List<BenchResult> results = ResultTable.read(new StringReader(input));
        assertThat(results).extracting(BenchResult::target).containsExactly("tenure-1", "etcd");
    }

    @Test
    void ratiosAreTenureOverTheMeanOfThePeersRowsAndHigherIsBetter() {
        List<BenchResult> all = List.of(
                row("tenure-1", "W1", 64, 20_000, Map.of()),
                row("etcd", "W1", 64, 3_000, Map.of()),
                row("etcd", "W1", 64, 5_000, Map.of()),
                row("zookeeper", "W1", 1, 700, Map.of()),
                row("tenure-3", "W5", 1, 1, Map.of("median_ms", 500.0)),
                row("etcd", "W5", 1, 1, Map.of("median_ms", 1500.0)),
                row("tenure-1", "W3", 10_000, 2900, Map.of("keepalives_per_sec", 3000.0)),
                row("etcd", "W3", 10_000, 1000, Map.of("keepalives_per_sec", 1500.0)));
        assertThat(ResultTable.ratio(all.get(0), "etcd", all)).hasValue(5.0);
        assertThat(ResultTable.ratio(all.get(0), "zookeeper", all)).isEmpty(); // no row with 64 clients
        assertThat(ResultTable.ratio(all.get(4), "etcd", all)).hasValue(3.0); // failover: peer median / Tenure's
        assertThat(ResultTable.ratio(all.get(6), "etcd", all)).hasValue(2.0); // keep-alives/s from extra

        String table = ResultTable.markdown(all);
        assertThat(table.lines().findFirst().orElseThrow()).endsWith("| notes | × etcd | × zookeeper |");
        assertThat(table).contains("| W1 | 64 | tenure-1 | 20,000 | 0.50 | 1.50 | 3.00 | 0 |  | 5.00 |  |")
                .contains("| W5 | 1 | tenure-3 |").contains("3.00");
        assertThat(table.indexOf("| W1 | 64 | tenure-1")).isLessThan(table.indexOf("| W1 | 64 | etcd"));
    }

    @Test
    void threeMembersAreComparedWithTheThreeMemberPeersAndOneWithTheSingleNodes() {
        List<BenchResult> all = List.of(
                row("tenure-1", "W1", 16, 6_000, Map.of()),
                row("tenure-3", "W1", 16, 3_000, Map.of()),
                row("etcd", "W1", 16, 2_000, Map.of()),
                row("etcd-3", "W1", 16, 1_000, Map.of()),
                row("zookeeper", "W1", 16, 4_000, Map.of()),
                row("zookeeper-3", "W1", 16, 1_500, Map.of()),
                row("redis", "W1", 16, 12_000, Map.of()));
        assertThat(ResultTable.comparedWith("tenure-1", "etcd", all)).isEqualTo("etcd");
        assertThat(ResultTable.comparedWith("tenure-3", "etcd", all)).isEqualTo("etcd-3");
        assertThat(ResultTable.comparedWith("tenure-3", "zookeeper", all)).isEqualTo("zookeeper-3");
        assertThat(ResultTable.comparedWith("tenure-3", "redis", all)).isEqualTo("redis"); // no 3-member Redis

        String table = ResultTable.markdown(all);
        // The columns keep their names: "the peer of the same size".
        assertThat(table.lines().findFirst().orElseThrow()).endsWith("| notes | × etcd | × zookeeper | × redis |");
        assertThat(table).contains("| W1 | 16 | tenure-1 | 6,000 | 0.50 | 1.50 | 3.00 | 0 |  | 3.00 | 1.50 | 0.50 |")
                .contains("| W1 | 16 | tenure-3 | 3,000 | 0.50 | 1.50 | 3.00 | 0 |  | 3.00 | 2.00 | 0.25 |")
                .contains("| W1 | 16 | etcd-3 | 1,000 | 0.50 | 1.50 | 3.00 | 0 |  |  |  |  |")
                .contains("- tenure-1: × etcd = etcd, × zookeeper = zookeeper, × redis = redis\n")
                .contains("- tenure-3: × etcd = etcd-3, × zookeeper = zookeeper-3, × redis = redis (single node)\n");
        assertThat(table.indexOf("| W1 | 16 | etcd |")).isLessThan(table.indexOf("| W1 | 16 | etcd-3 |"));
        assertThat(table.indexOf("| W1 | 16 | etcd-3 |")).isLessThan(table.indexOf("| W1 | 16 | zookeeper |"));

        // Without any 3-member row of a peer (results from before etcd-3), tenure-3 is compared with its single node, as before.
        List<BenchResult> singleOnly = List.of(all.get(1), all.get(2), all.get(5));
        assertThat(ResultTable.comparedWith("tenure-3", "etcd", singleOnly)).isEqualTo("etcd");
        assertThat(ResultTable.markdown(singleOnly))
                .contains("| W1 | 16 | tenure-3 | 3,000 | 0.50 | 1.50 | 3.00 | 0 |  | 1.50 | 2.00 |")
                .contains("- tenure-3: × etcd = etcd (single node), × zookeeper = zookeeper-3\n");

        // A cluster row of another workload or client count gives no ratio, not the single node's.
        List<BenchResult> otherClients = List.of(all.get(1), all.get(2), row("etcd-3", "W1", 64, 900, Map.of()));
        assertThat(ResultTable.markdown(otherClients)).contains("| W1 | 16 | tenure-3 | 3,000 | 0.50 | 1.50 | 3.00 | 0 |  |  |");
    }

    @Test
    void withoutPeersThereAreNoRatioColumns() {
        String table = ResultTable.markdown(List.of(row("tenure-1", "W2", 8, 4000, Map.of("fairness_min_over_max", 0.98))));
        assertThat(table.lines().findFirst().orElseThrow()).endsWith("| notes |");
        assertThat(table).contains("fairness min/max 0.98");
    }

    @Test
    void aSemaphoreRowShowsItsLimitFairnessAndPeakAndIsComparedOnGrantsPerSecond() {
        List<BenchResult> all = List.of(
                row("tenure-1", "W6", 64, 3_000, Map.of("limit", 8, "fairness_min_over_max", 0.97, "holders_peak", 8)),
                row("zookeeper", "W6", 64, 1_000, Map.of("limit", 8)));
        assertThat(ResultTable.ratio(all.get(0), "zookeeper", all)).hasValue(3.0);
        assertThat(ResultTable.markdown(all))
                .contains("| W6 | 64 | tenure-1 | 3,000 | 0.50 | 1.50 | 3.00 | 0 | limit 8, fairness min/max 0.97, peak holders 8 | 3.00 |")
                .contains("| W6 | 64 | zookeeper | 1,000 | 0.50 | 1.50 | 3.00 | 0 | limit 8 |  |");
    }

    @Test
    void aReadWriteRowShowsItsShareFairnessWriteWaitAndPeakReadersAndIsComparedOnGrantsPerSecond() {
        List<BenchResult> all = List.of(
                row("tenure-1", "W7", 64, 3_000, Map.of("read_share", 0.9, "fairness_min_over_max", 0.95,
                        "write_wait_p99_ms", 4.5, "readers_peak", 12)),
                row("zookeeper", "W7", 64, 750, Map.of("read_share", 0.9, "fairness_min_over_max", 0.93)));
        assertThat(ResultTable.ratio(all.get(0), "zookeeper", all)).hasValue(4.0);
        assertThat(ResultTable.markdown(all))
                .contains("| W7 | 64 | tenure-1 | 3,000 | 0.50 | 1.50 | 3.00 | 0 | read share 0.9, fairness min/max 0.95,"
                        + " write wait p99 4.5 ms, peak readers 12 | 4.00 |")
                .contains("| W7 | 64 | zookeeper | 750 | 0.50 | 1.50 | 3.00 | 0 | read share 0.9, fairness min/max 0.93 |  |");
    }

    @Test
    void aLineWithoutTheRequiredFieldsIsRefused() {
        assertThatThrownBy(() -> BenchResult.parse("{\"target\":\"etcd\"}")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> BenchResult.parse("not json")).isInstanceOf(IllegalArgumentException.class);
    }
}

package io.tenure.it;

import io.tenure.testing.Await;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code tenure kv put|get|del|list} end to end, against a real server process: what each prints, and the exit codes. */
class KvCommandTest extends CommandProcessTest {

    private Run tenureKv(String id, String... args) throws Exception {
        return tenure(id, "kv", args);
    }

    @Test
    void putGetListAndDelPrintWhatScriptsNeedAndAnAbsentKeyExitsOne() throws Exception {
        Run put = tenureKv("put", "put", "conf/mode", "active");
        assertThat(put.exit()).as(put.err()).isZero();
        assertThat(Long.parseLong(put.out().trim())).as("the put's revision").isEqualTo(client.kv().get("conf/mode").orElseThrow().modRevision());
        assertThat(tenureKv("get", "get", "conf/mode")).isEqualTo(new Run(0, "active\n", ""));

        tenureKv("put2", "put", "conf/size", "3 workers");
        client.kv().put("other/x", "no");
        assertThat(tenureKv("list", "list", "conf/")).isEqualTo(new Run(0, "conf/mode\tactive\nconf/size\t3 workers\n", ""));

        assertThat(tenureKv("del", "del", "conf/mode")).isEqualTo(new Run(0, "", ""));
        assertThat(client.kv().get("conf/mode")).isEmpty();
        Run absent = tenureKv("getAbsent", "get", "conf/mode");
        assertThat(absent.exit()).isEqualTo(1);
        assertThat(absent.out()).isEmpty();
        assertThat(absent.err()).contains("key 'conf/mode' does not exist");
        assertThat(tenureKv("delAbsent", "del", "conf/mode").exit()).isEqualTo(1);
    }

    @Test
    void aPutWithATtlGoesAfterItAndABadTtlIsAUsageError() throws Exception {
        long sentAt = System.nanoTime();
        Run put = tenureKv("ttl", "put", "cache/warm", "yes", "--ttl", "2s");
        assertThat(put.exit()).as(put.err()).isZero();
        assertThat(client.kv().get("cache/warm").orElseThrow().ttl()).isEqualTo(Duration.ofSeconds(2));
        Await.until("cache/warm expired", Duration.ofSeconds(30), () -> client.kv().get("cache/warm").isEmpty());
        assertThat(Await.millisSince(sentAt)).as("not before its TTL").isGreaterThanOrEqualTo(2_000);

        Run usage = tenureKv("usage", "put", "cache/warm", "yes", "--ttl", "soon");
        assertThat(usage.exit()).isEqualTo(2);
        assertThat(usage.err()).contains("--ttl").contains("soon");
        assertThat(client.kv().get("cache/warm")).isEmpty();
    }
}

package io.tenure.it;

import io.tenure.testing.Await;
import io.tenure.testing.ChildJava;
import io.tenure.testing.MemberProcess;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code tenure kv put|get|del|list} end to end, against a real server process: what each prints, and the exit codes. */
class KvCommandTest extends CommandProcessTest {

    /** What one {@code tenure kv ...} printed and how it exited. */
    private record Run(int exit, String out, String err) {}

    private Run tenureKv(String id, String... args) throws Exception {
        List<String> command = new ArrayList<>(ChildJava.command(MemberProcess.CLI_MAIN));
        command.add("kv");
        command.addAll(List.of(args));
        command.addAll(List.of("--endpoints", server.endpoint()));
        Process process = new ProcessBuilder(command).directory(work.toFile())
                .redirectOutput(work.resolve(id + ".out").toFile())
                .redirectError(work.resolve(id + ".err").toFile())
                .start();
        started.add(process);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("tenure kv " + id + " exits").isTrue();
        return new Run(process.exitValue(), read(id + ".out"), read(id + ".err"));
    }

    private String read(String file) throws IOException {
        return Files.readString(work.resolve(file));
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

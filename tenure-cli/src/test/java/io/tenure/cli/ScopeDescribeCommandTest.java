package io.tenure.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.client.Lease;
import io.tenure.client.Scope;
import io.tenure.client.ScopeDescription;
import io.tenure.client.ScopeHandle;
import io.tenure.client.ScopePart;
import io.tenure.client.TenureClient;
import io.tenure.testing.Await;
import io.tenure.testing.TenureExtension;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code tenure describe --path|--inode|--range [--blocked-by [--shared]]} against a real member in this JVM. */
class ScopeDescribeCommandTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        return ClientCommandsTest.runWith(Map.of("TENURE_ENDPOINTS", tenure.cluster().endpoint(0)), out, err, args);
    }

    @Test
    void describePrintsTheSetsHeldAndWaitedForThatOverlapAScopeAndWhoWouldBlockASet() throws Exception {
        TenureClient client = tenure.client();
        Lease alice = client.grantLease(Duration.ofSeconds(60), "alice");
        Lease bob = client.grantLease(Duration.ofSeconds(60), "bob");
        List<ScopePart> aliceSet = List.of(ScopePart.exclusive(Scope.byteRange(42, 0, 4096)), ScopePart.shared(Scope.path("/data/in")));
        ScopeHandle held = client.lockAll(aliceSet, alice, Duration.ZERO, "batch 7".getBytes(StandardCharsets.UTF_8));
        CompletableFuture<ScopeHandle> waiting = client.lockAllAsync(List.of(ScopePart.exclusive(Scope.byteRange(42, 100, 200))),
                bob, null, null);
        Await.until("bob queues", Duration.ofSeconds(10), () -> client.describe(Scope.inode(42)).waiters().size() == 1);
        ScopeDescription truth = client.describe(Scope.inode(42));

        assertThat(run("describe", "--range", "42:0-150")).as(err.toString()).isZero();
        List<String> lines = out.toString().lines().toList();
        assertThat(lines.get(0)).isEqualTo("scope: range 42:0-150");
        assertThat(Long.parseLong(ClientCommandsTest.field(out.toString(), "revision"))).isGreaterThanOrEqualTo(truth.revision());
        assertThat(lines).contains("holders: 1",
                "holder: lease=" + alice.id() + " client_id=alice fencing_token=" + held.fencingToken()
                        + " scopes=range 42:0-4096 exclusive, path /data/in shared metadata=batch 7",
                "waiters: 1",
                "waiter: 1 lease=" + bob.id() + " client_id=bob joined_revision=" + truth.waiters().get(0).joinedRevision()
                        + " scopes=range 42:100-200 exclusive");

        // Two scopes: one block each; with --blocked-by, who is in the way of both taken together.
        assertThat(run("describe", "--path", "/data/in/file", "--range", "42:150-160", "--blocked-by")).as(err.toString()).isZero();
        String text = out.toString();
        assertThat(text).contains("scope: path /data/in/file", "scope: range 42:150-160");
        assertThat(text.lines().filter(l -> l.startsWith("blocker: ")).toList()).containsExactlyInAnyOrder(
                "blocker: lease=" + alice.id() + " client_id=alice holding path /data/in shared fencing_token=" + held.fencingToken(),
                "blocker: lease=" + alice.id() + " client_id=alice holding range 42:0-4096 exclusive fencing_token=" + held.fencingToken(),
                "blocker: lease=" + bob.id() + " client_id=bob waiting range 42:100-200 exclusive");
        assertThat(ClientCommandsTest.field(text, "blocked_by")).isEqualTo("2");

        // A shared reader of the path alone is blocked by nobody.
        assertThat(run("describe", "--path", "/data/in", "--blocked-by", "--shared")).as(err.toString()).isZero();
        assertThat(ClientCommandsTest.field(out.toString(), "blocked_by")).isEqualTo("0");
        assertThat(out.toString()).doesNotContain("blocker:");

        held.release();
        waiting.get(10, java.util.concurrent.TimeUnit.SECONDS).release();
        assertThat(run("describe", "--inode", "42")).isZero();
        assertThat(out.toString().lines().toList()).contains("scope: inode 42", "holders: 0", "waiters: 0");
        alice.revoke();
        bob.revoke();
    }
}

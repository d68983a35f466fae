package io.tenure.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.tenure.client.ElectionDescription;
import io.tenure.client.Leadership;
import io.tenure.client.Lease;
import io.tenure.client.LockDescription;
import io.tenure.client.LockHandle;
import io.tenure.client.SemaphoreDescription;
import io.tenure.client.SemaphorePermit;
import io.tenure.client.TenureBarrier;
import io.tenure.client.TenureCountDownLatch;
import io.tenure.client.TenureClient;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.UnlockRequest;
import io.tenure.testing.Await;
import io.tenure.testing.Waiters;
import io.tenure.testing.TenureExtension;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code tenure locks|describe|lease|watch}, and {@code tenure semaphore}'s refusals, against a
 * real member in this JVM, reached through {@code TENURE_ENDPOINTS}: what they print and how they
 * exit.
 */
class ClientCommandsTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static String endpoint;
    static ManagedChannel channel;
    static TenureClient client;

    final StringWriter out = new StringWriter();
    final StringWriter err = new StringWriter();
    /** Leases of {@link #lease}, closed after each test. */
    final List<Lease> leases = new ArrayList<>();

    /** The member runs for the whole class; the extension stops it, its channel and the client. */
    @BeforeAll
    static void connect() {
        endpoint = tenure.cluster().endpoint(0);
        channel = tenure.cluster().channel(0);
        client = tenure.client();
    }

    @AfterEach
    void closeLeases() {
        leases.forEach(Lease::close);
    }

    /** A lease of 60 s for {@code clientId}, closed after the test. */
    Lease lease(String clientId) {
        Lease lease = client.grantLease(Duration.ofSeconds(60), clientId);
        leases.add(lease);
        return lease;
    }

    int run(String... args) {
        return runWith(Map.of("TENURE_ENDPOINTS", endpoint), out, err, args);
    }

    static int runWith(Map<String, String> env, StringWriter out, StringWriter err, String... args) {
        out.getBuffer().setLength(0);
        err.getBuffer().setLength(0);
        CommandLine commandLine = TenureCli.commandLine(env);
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        return commandLine.execute(args);
    }

    /** A lease granted through the CLI: its id, from the only thing printed on standard output. */
    long grant(String clientId, String ttl) {
        assertThat(run("lease", "grant", "--ttl", ttl, "--client-id", clientId)).as(err.toString()).isZero();
        assertThat(out.toString()).matches("\\d+\\R");
        return Long.parseLong(out.toString().strip());
    }

    static LockResponse lock(String name, long lease, String metadata) {
        return LockServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .lock(LockRequest.newBuilder().setName(name).setLeaseId(lease)
                        .setMetadata(ByteString.copyFromUtf8(metadata)).setTimeoutMs(0).build());
    }

    /** Queues {@code lease} for {@code name} (waiting until granted), and waits until the queue shows it. */
    static CompletableFuture<LockResponse> queue(String name, long lease) {
        return Waiters.queue(channel, name, lease, Duration.ofSeconds(30));
    }

    /** The value of the first {@code name: value} line. */
    static String field(String text, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + ": (.*)$").matcher(text);
        assertThat(m.find()).as(name + " in\n" + text).isTrue();
        return m.group(1);
    }

    @Test
    void leaseGrantPrintsOnlyTheIdAndSaysTheLeaseIsNotKeptAlive() {
        long id = grant("granted-by-cli", "45s");

        assertThat(err.toString()).contains("lease " + id + " is not kept alive by this command").contains("45s");
        var ttl = client.leaseTimeToLive(id);
        assertThat(ttl.getClientId()).isEqualTo("granted-by-cli");
        assertThat(ttl.getGrantedTtlMs()).isEqualTo(45_000);
    }

    @Test
    void leaseGrantRefusesABadTtlAsAUsageError() {
        assertThat(run("lease", "grant", "--ttl", "500ms")).isEqualTo(2);
        assertThat(err.toString()).contains("--ttl").contains("at least 1000 ms");
        assertThat(run("lease", "grant")).isEqualTo(2);
        assertThat(err.toString()).contains("--ttl");
    }

    @Test
    void leaseTtlShowsTheRemainingAndGrantedTtlAndTheKeysHeldAndAwaited() {
        long lease = grant("ttl-holder", "60s");
        long other = grant("ttl-other", "60s");
        assertThat(lock("ttl/held-1", lease, "").getAcquired()).isTrue();
        assertThat(lock("ttl/held-2", lease, "").getAcquired()).isTrue();
        assertThat(lock("ttl/busy", other, "").getAcquired()).isTrue();
        queue("ttl/busy", lease);

        assertThat(run("lease", "ttl", Long.toString(lease))).as(err.toString()).isZero();

        String text = out.toString();
        assertThat(field(text, "lease")).isEqualTo(Long.toString(lease));
        assertThat(field(text, "client_id")).isEqualTo("ttl-holder");
        assertThat(field(text, "granted_ttl")).isEqualTo("1m");
        assertThat(field(text, "remaining")).matches("\\d+(\\.\\d+)?s");
        assertThat(field(text, "keys_held")).isEqualTo("2");
        assertThat(field(text, "keys_waiting")).isEqualTo("1");
        assertThat(text).contains("held: ttl/held-1\nheld: ttl/held-2\n".replace("\n", System.lineSeparator()))
                .contains("waiting: ttl/busy");
        client.revokeLease(other);
        client.revokeLease(lease);
    }

    @Test
    void leaseRevokeEndsTheLeaseAndAnUnknownLeaseIsAnError() {
        long lease = grant("to-revoke", "60s");
        assertThat(lock("revoke/a", lease, "").getAcquired()).isTrue();

        assertThat(run("lease", "revoke", Long.toString(lease))).as(err.toString()).isZero();
        assertThat(out.toString()).contains("revoked lease " + lease);
        assertThat(client.describe("revoke/a").held()).as("its lock went with it").isFalse();

        assertThat(run("lease", "ttl", Long.toString(lease))).isEqualTo(1);
        assertThat(err.toString()).contains("lease " + lease + " not found");
        assertThat(run("lease", "revoke", Long.toString(lease))).isEqualTo(1);
        assertThat(err.toString()).contains("not found");
        assertThat(run("lease", "revoke", "not-a-number")).isEqualTo(2);
    }

    @Test
    void leaseListShowsEveryLeaseWithItsClientTtlAndCounts() {
        long a = grant("list-a", "60s");
        long b = grant("list-b", "2m");
        assertThat(lock("list/x", a, "").getAcquired()).isTrue();
        assertThat(lock("list/y", a, "").getAcquired()).isTrue();
        queue("list/x", b);

        assertThat(run("lease", "list")).as(err.toString()).isZero();

        List<String> lines = out.toString().lines().toList();
        assertThat(lines.get(0).strip().split("\\s+")).containsExactly("ID", "CLIENT", "TTL", "REMAINING", "HELD", "WAITING");
        assertThat(row(lines, Long.toString(a))).containsExactly(Long.toString(a), "list-a", "1m", row(lines, Long.toString(a))[3], "2", "0");
        assertThat(row(lines, Long.toString(b))).containsExactly(Long.toString(b), "list-b", "2m", row(lines, Long.toString(b))[3], "0", "1");
        List<Long> ids = lines.stream().skip(1).map(l -> Long.parseLong(l.strip().split("\\s+")[0])).toList();
        assertThat(ids).as("in id order").isSorted();
        client.revokeLease(a);
        client.revokeLease(b);
    }

    private static String[] row(List<String> lines, String first) {
        return lines.stream().map(l -> l.strip().split("\\s+")).filter(cells -> cells[0].equals(first)).findFirst()
                .orElseThrow(() -> new AssertionError("no row " + first + " in " + lines));
    }

    @Test
    void locksPrintsOneRowPerHeldLockWithHolderLeaseTokenAndWaiters() {
        long alice = grant("alice", "60s");
        long bob = grant("bob", "60s");
        long carol = grant("carol", "60s");
        long tokenA = lock("table/a", alice, "").getFencingToken();
        long tokenB = lock("table/b", bob, "").getFencingToken();
        queue("table/a", bob);
        queue("table/a", carol);
        Lease dave = lease("dave");
        long tokenC = client.readWriteLock("table/c", dave).readLock().acquire(Duration.ZERO).fencingToken();
        client.readWriteLock("table/c", lease("erin")).readLock().acquire(Duration.ZERO);

        assertThat(run("locks", "--prefix", "table/")).as(err.toString()).isZero();

        List<String> lines = out.toString().lines().toList();
        assertThat(lines).hasSize(4);
        assertThat(lines.get(0).strip().split("\\s+")).containsExactly("LOCK", "HOLDER", "LEASE", "TOKEN", "WAITERS", "MODE", "HOLDERS");
        assertThat(lines.get(1).strip().split("\\s+"))
                .containsExactly("table/a", "alice", Long.toString(alice), Long.toString(tokenA), "2", "write", "1");
        assertThat(lines.get(2).strip().split("\\s+"))
                .containsExactly("table/b", "bob", Long.toString(bob), Long.toString(tokenB), "0", "write", "1");
        assertThat(lines.get(3).strip().split("\\s+")).as("the first reader, and how many read")
                .containsExactly("table/c", "dave", Long.toString(dave.id()), Long.toString(tokenC), "0", "read", "2");

        assertThat(run("locks", "--prefix", "table/", "--limit", "1")).isZero();
        assertThat(out.toString().lines()).hasSize(2);
        assertThat(err.toString()).contains("there may be more");
        assertThat(run("locks", "--limit", "0")).isEqualTo(2);
        assertThat(err.toString()).contains("--limit");
        Arrays.asList(alice, bob, carol).forEach(client::revokeLease);
    }

    @Test
    void describePrintsHolderLeaseTokenMetadataTtlAndTheWaitersInOrder() {
        long alice = grant("alice", "60s");
        long bob = grant("bob", "60s");
        long carol = grant("carol", "60s");
        long token = lock("describe/a", alice, "batch 7").getFencingToken();
        queue("describe/a", carol);
        queue("describe/a", bob);

        assertThat(run("describe", "describe/a")).as(err.toString()).isZero();

        String text = out.toString();
        LockDescription truth = client.describe("describe/a");
        assertThat(field(text, "lock")).isEqualTo("describe/a");
        assertThat(field(text, "held")).isEqualTo("true");
        assertThat(field(text, "holder")).isEqualTo("alice");
        assertThat(field(text, "lease")).isEqualTo(Long.toString(alice));
        assertThat(field(text, "fencing_token")).isEqualTo(Long.toString(token));
        assertThat(field(text, "metadata")).isEqualTo("batch 7");
        assertThat(field(text, "held_since_revision")).isEqualTo(Long.toString(token));
        assertThat(field(text, "grants")).isEqualTo("1");
        assertThat(field(text, "holder_ttl_remaining")).matches("\\d+(\\.\\d+)?s");
        assertThat(field(text, "mode")).isEqualTo("write");
        assertThat(field(text, "holders")).isEqualTo("1");
        assertThat(text.lines().filter(l -> l.startsWith("held_by: ")).toList()).singleElement().asString()
                .matches("held_by: lease=" + alice + " client_id=alice fencing_token=" + token + " ttl_remaining=\\d+(\\.\\d+)?s");
        assertThat(Long.parseLong(field(text, "revision"))).isGreaterThanOrEqualTo(truth.waiters().get(1).joinedRevision());
        assertThat(field(text, "waiters")).isEqualTo("2");
        assertThat(text.lines().filter(l -> l.startsWith("waiter: ")).toList()).as("as before read mode").containsExactly(
                "waiter: 1 lease=" + carol + " client_id=carol joined_revision=" + truth.waiters().get(0).joinedRevision(),
                "waiter: 2 lease=" + bob + " client_id=bob joined_revision=" + truth.waiters().get(1).joinedRevision());
        assertThat(text.lines().map(l -> l.substring(0, l.indexOf(':'))).distinct().toList())
                .as("the fields before read mode in their order, with mode, holders and held_by after holder_ttl_remaining")
                .containsExactly("lock", "held", "holder", "lease", "fencing_token", "metadata", "held_since_revision", "grants",
                        "holder_ttl_remaining", "mode", "holders", "held_by", "revision", "waiters", "waiter");

        assertThat(run("describe", "describe/free")).isZero();
        assertThat(field(out.toString(), "held")).isEqualTo("false");
        assertThat(field(out.toString(), "waiters")).isEqualTo("0");
        assertThat(out.toString()).doesNotContain("holder:", "mode:", "held_by:");
        Arrays.asList(alice, bob, carol).forEach(client::revokeLease);
    }

    @Test
    void describePrintsTheModeEveryReaderAndEachWaitersMode() {
        Lease alice = lease("alice");
        LockHandle first = client.readWriteLock("describe/rw", alice).readLock().withMetadata("r1").acquire(Duration.ZERO);
        Lease bob = lease("bob");
        LockHandle second = client.readWriteLock("describe/rw", bob).readLock().acquire(Duration.ZERO);
        // Carol's write waits for both readers; dave's read, asked after her, waits behind her.
        Lease carol = lease("carol");
        client.readWriteLock("describe/rw", carol).writeLock().acquireAsync();
        Await.until("carol queues", Duration.ofSeconds(30), () -> client.describe("describe/rw").waiters().size() == 1);
        Lease dave = lease("dave");
        client.readWriteLock("describe/rw", dave).readLock().acquireAsync();
        Await.until("dave queues", Duration.ofSeconds(30), () -> client.describe("describe/rw").waiters().size() == 2);

        assertThat(run("describe", "describe/rw")).as(err.toString()).isZero();

        String text = out.toString();
        LockDescription truth = client.describe("describe/rw");
        assertThat(text.lines().findFirst()).hasValue("lock: describe/rw");
        assertThat(field(text, "held")).isEqualTo("true");
        assertThat(field(text, "mode")).isEqualTo("read");
        assertThat(field(text, "holder")).as("the first reader").isEqualTo("alice");
        assertThat(field(text, "lease")).isEqualTo(Long.toString(alice.id()));
        assertThat(field(text, "fencing_token")).isEqualTo(Long.toString(first.fencingToken()));
        assertThat(field(text, "metadata")).isEqualTo("r1");
        assertThat(field(text, "holders")).isEqualTo("2");
        String ttl = " ttl_remaining=\\d+(\\.\\d+)?s";
        assertThat(text.lines().filter(l -> l.startsWith("held_by: ")).toList()).as("in grant order").satisfiesExactly(
                l -> assertThat(l).matches("held_by: lease=" + alice.id() + " client_id=alice fencing_token=" + first.fencingToken() + ttl),
                l -> assertThat(l).matches("held_by: lease=" + bob.id() + " client_id=bob fencing_token=" + second.fencingToken() + ttl));
        assertThat(field(text, "waiters")).isEqualTo("2");
        assertThat(text.lines().filter(l -> l.startsWith("waiter: ")).toList()).containsExactly(
                "waiter: 1 lease=" + carol.id() + " client_id=carol joined_revision=" + truth.waiters().get(0).joinedRevision(),
                "waiter: 2 lease=" + dave.id() + " client_id=dave joined_revision=" + truth.waiters().get(1).joinedRevision()
                        + " mode=read");
    }

    @Test
    void describePrintsASemaphoresLimitFreePermitsHoldersAndWaitersInOrder() {
        Lease alice = client.grantLease(Duration.ofSeconds(60), "alice");
        Lease bob = client.grantLease(Duration.ofSeconds(60), "bob");
        Lease carol = client.grantLease(Duration.ofSeconds(60), "carol");
        Lease dave = client.grantLease(Duration.ofSeconds(60), "dave");
        try {
            SemaphorePermit first = client.semaphore("describe/pool", 4, alice).acquire(2, Duration.ZERO);
            SemaphorePermit second = client.semaphore("describe/pool", 4, bob).acquire(1, Duration.ZERO);
            // Carol needs 2 of the 1 free and queues; dave, who needs 1, queues behind her (strict FIFO).
            client.semaphore("describe/pool", 4, carol).acquireAsync(2);
            Await.until("carol queues", Duration.ofSeconds(30), () -> semaphore("describe/pool").waiters().size() == 1);
            client.semaphore("describe/pool", 4, dave).acquireAsync(1);
            Await.until("dave queues", Duration.ofSeconds(30), () -> semaphore("describe/pool").waiters().size() == 2);

            assertThat(run("describe", "describe/pool")).as(err.toString()).isZero();

            String text = out.toString();
            SemaphoreDescription truth = semaphore("describe/pool");
            assertThat(text.lines().findFirst()).hasValue("semaphore: describe/pool");
            assertThat(field(text, "limit")).isEqualTo("4");
            assertThat(field(text, "available")).isEqualTo("1");
            assertThat(field(text, "holders")).isEqualTo("2");
            assertThat(text.lines().filter(l -> l.startsWith("holder: ")).toList()).containsExactly(
                    "holder: lease=" + alice.id() + " client_id=alice permits=2 fencing_token=" + first.fencingToken(),
                    "holder: lease=" + bob.id() + " client_id=bob permits=1 fencing_token=" + second.fencingToken());
            assertThat(Long.parseLong(field(text, "revision"))).isGreaterThanOrEqualTo(truth.waiters().get(1).joinedRevision());
            assertThat(field(text, "waiters")).isEqualTo("2");
            assertThat(text.lines().filter(l -> l.startsWith("waiter: ")).toList()).containsExactly(
                    "waiter: 1 lease=" + carol.id() + " client_id=carol permits=2 joined_revision=" + truth.waiters().get(0).joinedRevision(),
                    "waiter: 2 lease=" + dave.id() + " client_id=dave permits=1 joined_revision=" + truth.waiters().get(1).joinedRevision());
            assertThat(text).as("none of a lock's fields").doesNotContain("held:", "metadata:");
        } finally {
            List.of(alice, bob, carol, dave).forEach(Lease::close);
        }

        assertThat(run("describe", "describe/pool")).isZero();
        assertThat(out.toString().lines().findFirst()).as("idle, it keeps its limit").hasValue("semaphore: describe/pool");
        assertThat(field(out.toString(), "limit")).isEqualTo("4");
        assertThat(field(out.toString(), "holders")).isEqualTo("0");
        assertThat(Long.parseLong(field(out.toString(), "idle_since_revision"))).isPositive();
    }

    @Test
    void describePrintsAnElectionsLeaderValueTokenAndTheCandidatesInOrder() {
        Lease alice = lease("alice");
        Lease bob = lease("bob");
        Lease carol = lease("carol");
        Leadership leading = client.election("describe/election", alice).campaign("n1:9000");
        client.election("describe/election", carol).campaignAsync("n3".getBytes(StandardCharsets.UTF_8));
        Await.until("carol stands", Duration.ofSeconds(30), () -> election("describe/election").candidates().size() == 1);
        client.election("describe/election", bob).campaignAsync("n2".getBytes(StandardCharsets.UTF_8));
        Await.until("bob stands", Duration.ofSeconds(30), () -> election("describe/election").candidates().size() == 2);

        assertThat(run("describe", "describe/election")).as(err.toString()).isZero();

        String text = out.toString();
        ElectionDescription truth = election("describe/election");
        assertThat(text.lines().map(l -> l.substring(0, l.indexOf(':'))).distinct().toList()).containsExactly("election", "leader",
                "lease", "fencing_token", "value", "value_revision", "leader_ttl_remaining", "revision", "candidates", "candidate");
        assertThat(field(text, "election")).isEqualTo("describe/election");
        assertThat(field(text, "leader")).isEqualTo("alice");
        assertThat(field(text, "lease")).isEqualTo(Long.toString(alice.id()));
        assertThat(field(text, "fencing_token")).isEqualTo(Long.toString(leading.fencingToken()));
        assertThat(field(text, "value")).isEqualTo("n1:9000");
        assertThat(field(text, "value_revision")).as("elected, never proclaimed").isEqualTo(Long.toString(leading.fencingToken()));
        assertThat(field(text, "leader_ttl_remaining")).matches("\\d+(\\.\\d+)?s");
        assertThat(Long.parseLong(field(text, "revision"))).isGreaterThanOrEqualTo(truth.candidates().get(1).joinedRevision());
        assertThat(field(text, "candidates")).isEqualTo("2");
        assertThat(text.lines().filter(l -> l.startsWith("candidate: ")).toList()).as("in the order they stood").containsExactly(
                "candidate: 1 lease=" + carol.id() + " client_id=carol joined_revision=" + truth.candidates().get(0).joinedRevision(),
                "candidate: 2 lease=" + bob.id() + " client_id=bob joined_revision=" + truth.candidates().get(1).joinedRevision());
        assertThat(text).as("none of a lock's fields").doesNotContain("held:", "metadata:");

        List.of(bob, carol, alice).forEach(Lease::close);
        Await.until("nobody leads", Duration.ofSeconds(30), () -> election("describe/election").leader().isEmpty());
        assertThat(run("describe", "describe/election")).isZero();
        assertThat(out.toString().lines().findFirst()).as("a name nobody leads is a free lock").hasValue("lock: describe/election");
        assertThat(field(out.toString(), "held")).isEqualTo("false");
    }

    @Test
    void describePrintsABarriersPartiesAndWhoWaitsInArrivalOrder() {
        Lease alice = lease("alice");
        Lease bob = lease("bob");
        client.barrier("describe/gate", 3, alice).awaitAsync();
        Await.until("alice waits", Duration.ofSeconds(30), () -> client.barrier("describe/gate", 3).describe().waiting().size() == 1);
        client.barrier("describe/gate", 3, bob).awaitAsync();
        Await.until("bob waits", Duration.ofSeconds(30), () -> client.barrier("describe/gate", 3).describe().waiting().size() == 2);

        assertThat(run("describe", "describe/gate")).as(err.toString()).isZero();

        String text = out.toString();
        TenureBarrier.Description truth = client.barrier("describe/gate", 3).describe();
        assertThat(text.lines().findFirst()).hasValue("barrier: describe/gate");
        assertThat(field(text, "parties")).isEqualTo("3");
        assertThat(field(text, "waiting")).isEqualTo("2");
        assertThat(text.lines().filter(l -> l.startsWith("party: ")).toList()).as("in arrival order").containsExactly(
                "party: 1 lease=" + alice.id() + " client_id=alice arrived_revision=" + truth.waiting().get(0).arrivedRevision(),
                "party: 2 lease=" + bob.id() + " client_id=bob arrived_revision=" + truth.waiting().get(1).arrivedRevision());

        // Barriers have a namespace of their own: a lock of the same name is shown first, then the barrier.
        client.lock("describe/gate", alice).acquire();
        assertThat(run("describe", "describe/gate")).as(err.toString()).isZero();
        List<String> both = out.toString().lines().toList();
        assertThat(both.get(0)).isEqualTo("lock: describe/gate");
        assertThat(both).contains("held: true", "", "barrier: describe/gate");
        assertThat(both.indexOf("barrier: describe/gate")).isGreaterThan(both.indexOf("held: true"));
        List.of(alice, bob).forEach(Lease::close);
    }

    @Test
    void describePrintsALatchsCountAndWhoWaitsInArrivalOrder() {
        Lease alice = lease("alice");
        TenureCountDownLatch latch = client.countDownLatch("describe/latch");
        latch.trySetCount(3);
        latch.countDown();
        client.countDownLatch("describe/latch", alice).awaitAsync();
        Await.until("alice waits", Duration.ofSeconds(30), () -> latch.describe().waiting().size() == 1);

        assertThat(run("describe", "describe/latch")).as(err.toString()).isZero();

        String text = out.toString();
        TenureCountDownLatch.Description truth = latch.describe();
        assertThat(text.lines().findFirst()).hasValue("latch: describe/latch");
        assertThat(field(text, "count")).isEqualTo("2");
        assertThat(field(text, "initial_count")).isEqualTo("3");
        assertThat(field(text, "set_revision")).isEqualTo(Long.toString(truth.createRevision()));
        assertThat(field(text, "waiting")).isEqualTo("1");
        assertThat(text.lines().filter(l -> l.startsWith("waiter: ")).toList()).containsExactly(
                "waiter: 1 lease=" + alice.id() + " client_id=alice arrived_revision=" + truth.waiting().get(0).arrivedRevision());
        latch.countDown();
        latch.countDown();
        alice.close();
    }

    @Test
    void leaderPrintsTheValueClientIdLeaseAndTokenAndExitsFiveWhenNobodyLeads() {
        Lease alice = lease("alice");
        Lease bob = lease("bob");
        Leadership leading = client.election("leader/printed", alice).campaign("n1:9000");
        client.election("leader/printed", bob).campaignAsync(new byte[] {1, 2});
        Await.until("bob stands", Duration.ofSeconds(30), () -> election("leader/printed").candidates().size() == 1);
        long proclaimed = leading.proclaim("n1:9001");

        assertThat(run("leader", "leader/printed")).as(err.toString()).isZero();

        List<String> lines = out.toString().lines().toList();
        assertThat(lines.subList(0, 4)).as("a proclaimed value keeps the token").containsExactly("value: n1:9001", "client_id: alice",
                "lease: " + alice.id(), "fencing_token: " + leading.fencingToken());
        assertThat(lines).hasSize(5).last().asString().startsWith("revision: ");
        assertThat(Long.parseLong(field(out.toString(), "revision"))).isGreaterThanOrEqualTo(proclaimed);
        assertThat(err.toString()).isEmpty();

        leading.resign();
        Await.until("bob leads", Duration.ofSeconds(30), () -> election("leader/printed").leader()
                .filter(l -> l.clientId().equals("bob")).isPresent());
        assertThat(run("leader", "leader/printed")).as(err.toString()).isZero();
        assertThat(field(out.toString(), "value")).as("a value that is not text, in hex").isEqualTo("0x0102");
        assertThat(Long.parseLong(field(out.toString(), "fencing_token"))).isGreaterThan(proclaimed);

        bob.close();
        Await.until("nobody leads", Duration.ofSeconds(30), () -> election("leader/printed").leader().isEmpty());
        assertThat(run("leader", "leader/printed")).as("nobody leads").isEqualTo(5);
        assertThat(out.toString()).isEmpty();
        assertThat(err.toString()).isEmpty();
        assertThat(run("leader", "")).as("no name").isEqualTo(2);
        assertThat(err.toString()).contains("NAME");
    }

    @Test
    void electExitsFourWhenAnotherLeadsAndOneOnALocksName(@TempDir Path tmp) {
        String never = tmp.resolve("never").toString();
        Lease holder = lease("elect-holder");
        client.election("refuse/election", holder).campaign("first");
        assertThat(run("elect", "refuse/election", "--value", "second", "--timeout", "0", "--", "touch", never))
                .as(err.toString()).isEqualTo(4);
        assertThat(err.toString()).contains("tenure elect: not elected leader of 'refuse/election' within 0 ms; 'elect-holder' leads");

        assertThat(lock("refuse/locked", holder.id(), "").getAcquired()).isTrue();
        assertThat(run("elect", "refuse/locked", "--value", "v", "--timeout", "0", "--", "touch", never))
                .as(err.toString()).isEqualTo(1);
        assertThat(err.toString()).startsWith("tenure elect: ").contains("'refuse/locked' is a lock, not an election");
        assertThat(tmp.resolve("never")).as("no command ran").doesNotExist();
        assertThat(client.leases()).as("each refused run revoked its lease")
                .noneMatch(lease -> lease.getClientId().startsWith(LeaseBoundCommand.defaultClientId()));
    }

    static ElectionDescription election(String name) {
        return client.election(name).describe();
    }

    static SemaphoreDescription semaphore(String name) {
        return client.semaphore(name, 1).describe();
    }

    @Test
    void semaphoreExitsFourWhenThePermitsStayTakenAndOneOnAnotherLimitOrALocksName(@TempDir Path tmp) {
        String never = tmp.resolve("never").toString();
        Lease holder = client.grantLease(Duration.ofSeconds(60), "pool-holder");
        try {
            client.semaphore("refuse/pool", 2, holder).acquire(2, Duration.ZERO);

            assertThat(run("semaphore", "refuse/pool", "--limit", "2", "--timeout", "0", "--", "touch", never))
                    .as(err.toString()).isEqualTo(4);
            assertThat(err.toString()).contains("tenure semaphore: 'refuse/pool' was not acquired within 0 ms: asked for 1 of 2 "
                    + "permits; 0 free");

            assertThat(run("semaphore", "refuse/pool", "--limit", "3", "--timeout", "0", "--", "touch", never))
                    .as(err.toString()).isEqualTo(1);
            assertThat(err.toString()).startsWith("tenure semaphore: ").contains("limit").contains("2").contains("3");

            long lockHolder = grant("lock-holder", "60s");
            assertThat(lock("refuse/lock", lockHolder, "").getAcquired()).isTrue();
            assertThat(run("semaphore", "refuse/lock", "--limit", "2", "--timeout", "0", "--", "touch", never))
                    .as(err.toString()).isEqualTo(1);
            assertThat(err.toString()).contains("'refuse/lock' is a lock, not a semaphore");
            client.revokeLease(lockHolder);
        } finally {
            holder.close();
        }
        assertThat(tmp.resolve("never")).as("no command ran").doesNotExist();
        assertThat(client.leases()).as("each refused run revoked its lease")
                .noneMatch(lease -> lease.getClientId().startsWith(LeaseBoundCommand.defaultClientId()));
    }

    @Test
    void watchPrintsOneLinePerChangeUntilInterrupted() throws Exception {
        long alice = grant("alice", "60s");
        long bob = grant("bob", "60s");
        StringWriter watchOut = new StringWriter();
        StringWriter watchErr = new StringWriter();
        CompletableFuture<Integer> exit = new CompletableFuture<>();
        Thread watcher = new Thread(() -> exit.complete(runWith(Map.of("TENURE_ENDPOINTS", endpoint), watchOut, watchErr,
                "watch", "watch/", "--prefix")), "tenure-watch-test");
        watcher.start();
        try {
            Await.until("the watch started", Duration.ofSeconds(30), () -> watchErr.toString().contains("watching"));
            assertThat(watchErr.toString()).contains("watching locks under 'watch/' for changes after revision");

            long first = lock("watch/a", alice, "m1").getFencingToken();
            queue("watch/a", bob);
            long second = LockServiceGrpc.newBlockingStub(channel).unlock(UnlockRequest.newBuilder().setKey("watch/a")
                    .setLeaseId(alice).setFencingToken(first).build()).getNextFencingToken();
            client.revokeLease(bob);

            Await.until("three events printed", Duration.ofSeconds(30), () -> watchOut.toString().lines().count() >= 3);
            List<String> lines = watchOut.toString().lines().toList();
            assertThat(lines.get(0)).isEqualTo("PUT watch/a revision=" + first + " holder=alice lease=" + alice
                    + " token=" + first + " metadata=m1");
            assertThat(lines.get(1)).isEqualTo("PUT watch/a revision=" + second + " holder=bob lease=" + bob
                    + " token=" + second + " prev_holder=alice prev_token=" + first);
            assertThat(lines.get(2)).startsWith("DELETE watch/a revision=").endsWith(" prev_holder=bob prev_token=" + second);
            assertThat(exit).as("still watching").isNotDone();
        } finally {
            watcher.interrupt();
        }
        assertThat(exit.get(30, TimeUnit.SECONDS)).as("an interrupt ends the watch normally").isZero();
        client.revokeLease(alice);
    }

    @Test
    void watchFromARevisionReplaysAndBadArgumentsAreUsageErrors() throws Exception {
        long alice = grant("alice", "60s");
        long token = lock("replay/a", alice, "").getFencingToken();
        StringWriter watchOut = new StringWriter();
        StringWriter watchErr = new StringWriter();
        CompletableFuture<Integer> exit = new CompletableFuture<>();
        Thread watcher = new Thread(() -> exit.complete(runWith(Map.of("TENURE_ENDPOINTS", endpoint), watchOut, watchErr,
                "watch", "replay/a", "--rev", Long.toString(token))), "tenure-watch-replay-test");
        watcher.start();
        try {
            Await.until("the past grant printed", Duration.ofSeconds(30), () -> watchOut.toString().contains("PUT replay/a"));
            assertThat(watchOut.toString()).startsWith("PUT replay/a revision=" + token + " holder=alice");
            assertThat(watchErr.toString()).contains("from revision " + token);
        } finally {
            watcher.interrupt();
        }
        assertThat(exit.get(30, TimeUnit.SECONDS)).isZero();

        assertThat(run("watch", "k", "--rev", "-1")).isEqualTo(2);
        assertThat(err.toString()).contains("--rev");
        assertThat(run("watch", "")).isEqualTo(2);
        assertThat(err.toString()).contains("--prefix");
        client.revokeLease(alice);
    }
}

package io.tenure.it;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.tenure.client.Lease;
import io.tenure.client.LeaseLoss;
import io.tenure.client.LeaseLostException;
import io.tenure.client.LeaseNotFoundException;
import io.tenure.client.LockDescription;
import io.tenure.client.LockHandle;
import io.tenure.client.LockNotAcquiredException;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureException;
import io.tenure.client.UnavailableException;
import io.tenure.proto.v1.DescribeRequest;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.TryLockRequest;
import io.tenure.proto.v1.TryLockResponse;
import io.tenure.proto.v1.Waiter;
import io.tenure.testing.Await;
import io.tenure.testing.MemberProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SIGTERM, the way an operator or a supervisor stops a member: {@code tenure server} drains,
 * hands leadership over when it leads, closes its log and exits 0 within {@code --shutdown-timeout}.
 *
 * <p>Under load (16 clients doing fenced read-modify-writes on 4 hot keys, as in
 * {@link LeaderKillTest}) the leader's SIGTERM must cost each client at most one retryable error
 * (the SDK retries on another member by itself, so most see none), lose no lock and no queue
 * place, accept no stale write, and leave the cluster serving. Prints the measured figures: from
 * SIGTERM to a new leader and to the exit, the errors per client, the pause in acquisitions.
 */
@ExtendWith(ItLogs.class)
class GracefulShutdownTest {
    static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(10);
    static final int CLIENTS = 16;
    static final int KEYS = 4;
    static final int HELD = 8;
    static final Duration TTL = Duration.ofSeconds(30);
    static final int ACQUISITIONS = ItScale.of("gracefulAcquisitions", 200, 2000);
    private static final Pattern TRANSFERRED = Pattern.compile("event=leadership_transferred from=(\\S+) to=(\\S+) took_ms=(\\d+)");
    private static final Pattern DRAINED = Pattern.compile("event=shutdown_drained member=\\S+ lock_waits_handed_back=(\\d+)");
    private static final Pattern COMPLETE = Pattern.compile("event=shutdown_complete member=\\S+ took_ms=(\\d+)");

    @TempDir
    Path work;

    @Test
    @Timeout(value = 20, unit = TimeUnit.MINUTES) // a ceiling; every wait inside has its own deadline
    void sigtermToTheLeaderUnderLoadMovesLeadershipOnceAndLosesNoLock() throws Exception {
        Cluster.Options options = new Cluster.Options();
        options.extraArgs.addAll(List.of("--shutdown-timeout", SHUTDOWN_TIMEOUT.toMillis() + "ms"));
        try (Cluster cluster = Cluster.start(work, options);
             TenureClient keeper = TenureClient.connect(cluster.endpoints());
             Load load = new Load(cluster.endpoints(), "graceful", CLIENTS, KEYS)) {
            String leader = cluster.leader();

            // Locks held across the shutdown by a lease kept alive (its stream may run through the leader).
            Lease holder = keeper.grantLease(TTL, "holder");
            Map<String, LockHandle> held = new LinkedHashMap<>();
            for (int i = 0; i < HELD; i++) {
                held.put("held/" + i, keeper.acquire("held/" + i, holder, Duration.ZERO, null));
            }
            // A waiter parked on the leader itself: the shutdown hands it back, the SDK re-attaches it elsewhere.
            List<String> leaderFirst = new ArrayList<>(cluster.endpoints(leader));
            cluster.endpoints().stream().filter(e -> !leaderFirst.contains(e)).forEach(leaderFirst::add);
            try (TenureClient waiterClient = TenureClient.connect(leaderFirst)) {
                Lease waiterLease = waiterClient.grantLease(TTL, "waiter");
                CompletableFuture<LockHandle> waiting = waiterClient.acquireAsync("held/0", waiterLease, Duration.ofMinutes(3), null);
                long joined = Await.PROCESSES.value("the waiter queues on held/0", Duration.ofSeconds(30), () -> keeper.describe("held/0")
                        .waiters().stream().filter(w -> w.leaseId() == waiterLease.id()).findFirst()
                        .map(LockDescription.Waiter::joinedRevision).orElse(null));

                load.start();
                load.awaitAcquisitions(ACQUISITIONS, "before SIGTERM");

                MemberProcess stopping = cluster.member(leader);
                long sigterm = System.nanoTime();
                stopping.signal("TERM");
                String next = cluster.awaitNewLeader(leader, SHUTDOWN_TIMEOUT);
                long newLeaderMillis = Await.millisSince(sigterm);
                Await.PROCESSES.until(leader + " exits", SHUTDOWN_TIMEOUT.plusSeconds(20), () -> !stopping.isAlive());
                long exitMillis = Await.millisSince(sigterm);
                long exitedAt = System.nanoTime();
                assertThat(stopping.exitValue()).as(leader + "'s exit code after SIGTERM").isZero();
                assertThat(exitMillis).as("exited within --shutdown-timeout").isLessThan(SHUTDOWN_TIMEOUT.toMillis());
                String log = stopping.logSinceStart();
                assertThat(log).contains("event=shutdown_begin member=" + leader + " role=leader");
                Matcher transferred = TRANSFERRED.matcher(log);
                assertThat(transferred.find()).as("a leadership_transferred line in " + leader + "'s log").isTrue();
                assertThat(transferred.group(1)).isEqualTo(leader);
                assertThat(transferred.group(2)).isEqualTo(next);
                Matcher complete = COMPLETE.matcher(log);
                assertThat(complete.find()).as("a shutdown_complete line in " + leader + "'s log").isTrue();
                Matcher drained = DRAINED.matcher(log);
                assertThat(drained.find()).as("a shutdown_drained line in " + leader + "'s log").isTrue();
                assertThat(Integer.parseInt(drained.group(1))).as("lock waits handed back, the waiter's among them").isPositive();
                log.lines().filter(l -> l.contains("event=shutdown") || l.contains("event=leadership"))
                        .forEach(l -> System.out.println("GracefulShutdownTest: " + leader + ": " + l));

                // Throughput resumes on the two others.
                load.awaitAcquisitions(ACQUISITIONS, "after " + leader + " stopped");

                // No lock lost: each still held by its lease with its token; the waiter kept its place.
                for (Map.Entry<String, LockHandle> h : held.entrySet()) {
                    LockDescription now = keeper.describe(h.getKey());
                    assertThat(now.leaseId()).as(h.getKey() + " still held by its lease").isEqualTo(holder.id());
                    assertThat(now.fencingToken()).as(h.getKey() + " keeps its token").isEqualTo(h.getValue().fencingToken());
                }
                assertThat(keeper.describe("held/0").waiters()).extracting(LockDescription.Waiter::leaseId,
                                LockDescription.Waiter::joinedRevision)
                        .as("the waiter handed back by " + leader + " kept its place")
                        .containsExactly(org.assertj.core.groups.Tuple.tuple(waiterLease.id(), joined));
                assertThat(waiting).as("the wait goes on, re-attached to another member").isNotDone();
                assertThat(holder.isValid()).as("the holder's lease survived").isTrue();
                held.get("held/0").release();
                LockHandle granted = waiting.get(60, TimeUnit.SECONDS);
                assertThat(granted.fencingToken()).isGreaterThan(held.get("held/0").fencingToken());
                granted.release();

                // The stopped member comes back from its log and catches up.
                cluster.restart(leader);
                cluster.awaitCaughtUp(leader);
                load.awaitAcquisitions(ACQUISITIONS / 4, "after " + leader + " restarted");
                load.stop();
                load.check();

                Map<String, Integer> errors = load.retryableErrorsPerClient();
                System.out.printf("GracefulShutdownTest: SIGTERM to leader %s: new leader %s seen after %d ms (hand-over logged"
                                + " %s ms), exit 0 after %d ms (shutdown logged %s ms); %s%n", leader, next, newLeaderMillis,
                        transferred.group(3), exitMillis, complete.group(1), load.summary(sigterm, exitedAt));
                System.out.println("GracefulShutdownTest: retryable errors per client " + errors);
                load.errorMessages().stream().limit(20).forEach(e -> System.out.println("GracefulShutdownTest: error: " + e));
                assertThat(errors.values()).as("UNAVAILABLE-class errors seen by each client (" + errors + ")")
                        .allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(1));
                assertThat(load.leasesLost()).as("leases lost by clients").isEmpty();
            }
        }
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void sigtermToASingleMemberExitsZeroAndARestartKeepsEveryLock() throws Exception {
        try (MemberProcess single = ItLogs.single(work.resolve("single"))) {
            single.start();
            long holder = single.blocking().leaseGrant(LeaseGrantRequest.newBuilder().setClientId("holder").setTtl(120).build()).getId();
            long waiter = single.blocking().leaseGrant(LeaseGrantRequest.newBuilder().setClientId("waiter").setTtl(120).build()).getId();
            Map<String, Long> tokens = new LinkedHashMap<>();
            long maxToken = 0;
            for (int i = 0; i < 50; i++) {
                LockResponse r = single.blocking().lock(LockRequest.newBuilder().setName("single/" + i).setLeaseId(holder).build());
                assertThat(r.getAcquired()).isTrue();
                tokens.put("single/" + i, r.getFencingToken());
                maxToken = Math.max(maxToken, r.getFencingToken());
            }
            Ending parked = new Ending();
            single.async().lock(LockRequest.newBuilder().setName("single/0").setLeaseId(waiter).setTimeoutMs(-1).build(), parked);
            long joined = Await.PROCESSES.value("the waiter queues", Duration.ofSeconds(30), () -> single.blocking()
                    .describe(DescribeRequest.newBuilder().setName("single/0").build()).getLock().getWaitersList().stream()
                    .filter(w -> w.getLeaseId() == waiter).findFirst().map(Waiter::getJoinedRevision).orElse(null));

            long sigterm = System.nanoTime();
            single.signal("TERM");
            Await.PROCESSES.until("the member exits", SHUTDOWN_TIMEOUT.plusSeconds(20), () -> !single.isAlive());
            long exitMillis = Await.millisSince(sigterm);
            assertThat(single.exitValue()).as("exit code after SIGTERM").isZero();
            assertThat(exitMillis).isLessThan(SHUTDOWN_TIMEOUT.toMillis());
            Await.PROCESSES.until("the parked wait ends", Duration.ofSeconds(10), () -> parked.status != null);
            assertThat(parked.status.getCode()).as("the parked wait is handed back").isEqualTo(Status.Code.UNAVAILABLE);
            String log = single.logSinceStart();
            assertThat(log).contains("event=shutdown_begin member=n1 role=leader members=1")
                    .contains("event=shutdown_drained member=n1 lock_waits_handed_back=1")
                    .contains("event=shutdown_complete member=n1")
                    .doesNotContain("event=leadership_transfer");
            System.out.printf("GracefulShutdownTest: SIGTERM to a single member: exit 0 after %d ms%n", exitMillis);

            single.start();
            for (Map.Entry<String, Long> held : tokens.entrySet()) {
                TryLockResponse again = single.blocking().tryLock(TryLockRequest.newBuilder().setName(held.getKey()).setLeaseId(holder).build());
                assertThat(again.getAcquired()).as(held.getKey() + " still held by its lease").isTrue();
                assertThat(again.getFencingToken()).as(held.getKey() + " keeps its token").isEqualTo(held.getValue());
            }
            assertThat(single.blocking().describe(DescribeRequest.newBuilder().setName("single/0").build()).getLock().getWaitersList())
                    .extracting(Waiter::getLeaseId, Waiter::getJoinedRevision).as("the waiter kept its place")
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(waiter, joined));
            long lease = single.blocking().leaseGrant(LeaseGrantRequest.newBuilder().setClientId("after").setTtl(120).build()).getId();
            LockResponse next = single.blocking().lock(LockRequest.newBuilder().setName("after-restart").setLeaseId(lease).build());
            assertThat(next.getFencingToken()).as("the first token after the restart").isGreaterThan(maxToken);
        }
    }

    /** How a raw call ended. */
    private static final class Ending implements StreamObserver<LockResponse> {
        volatile Status status;

        @Override
        public void onNext(LockResponse value) {
        }

        @Override
        public void onError(Throwable t) {
            status = Status.fromThrowable(t);
        }

        @Override
        public void onCompleted() {
            status = Status.OK;
        }
    }

    /**
     * Clients (each with every endpoint, rotated so they start on different members, its own
     * lease and thread) contending on a few keys; each holder does a read-modify-write on a
     * {@link FencedRegister} with its token, then releases. Unlike {@link ContendedWorkload} it
     * counts the retryable errors each client saw: what the SDK could not hide.
     */
    private static final class Load implements AutoCloseable {
        static final Duration LOCK_WAIT = Duration.ofSeconds(5);

        record Ack(String worker, String key, long token, long atNanos) {
        }

        private final List<String> keys;
        private final FencedRegister register;
        private final List<Worker> workers = new ArrayList<>();
        private final List<Thread> threads = new ArrayList<>();
        private final ConcurrentLinkedQueue<Ack> acks = new ConcurrentLinkedQueue<>();
        private final ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
        private final ConcurrentLinkedQueue<String> unexpected = new ConcurrentLinkedQueue<>();
        private final ConcurrentLinkedQueue<String> leasesLost = new ConcurrentLinkedQueue<>();
        private final AtomicInteger lockTimeouts = new AtomicInteger();
        private final AtomicBoolean stop = new AtomicBoolean();

        Load(List<String> endpoints, String prefix, int clients, int keyCount) {
            this.keys = IntStream.range(0, keyCount).mapToObj(i -> prefix + "/" + i).collect(Collectors.toList());
            this.register = new FencedRegister(keys);
            for (int i = 0; i < clients; i++) {
                List<String> rotated = new ArrayList<>(endpoints);
                Collections.rotate(rotated, i % rotated.size());
                Worker worker = new Worker("w" + i, TenureClient.connect(rotated), new Random(2000 + i));
                workers.add(worker);
                Thread thread = new Thread(worker, "graceful-" + worker.name);
                thread.setDaemon(true);
                threads.add(thread);
            }
        }

        void start() {
            threads.forEach(Thread::start);
        }

        void awaitAcquisitions(int count, String when) {
            long target = acks.size() + count;
            Await.PROCESSES.until(() -> count + " acquisitions " + when + " (at " + acks.size() + ", target " + target + "; errors "
                    + retryableErrorsPerClient() + ", unexpected " + unexpected + ")", ContendedWorkload.PROGRESS_LIMIT,
                    () -> acks.size() >= target || !violations.isEmpty() || !register.overlaps().isEmpty());
            assertThat(violations).as("violations seen by the clients").isEmpty();
            assertThat(register.overlaps()).as("two holders of one key at once (I1)").isEmpty();
        }

        void stop() throws InterruptedException {
            stop.set(true);
            for (Thread thread : threads) {
                thread.join(LOCK_WAIT.plusSeconds(60).toMillis());
                assertThat(thread.isAlive()).as(thread.getName() + " finished").isFalse();
            }
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            for (Thread thread : threads) {
                thread.join(LOCK_WAIT.plusSeconds(30).toMillis());
            }
            workers.forEach(w -> w.client.close());
        }

        Map<String, Integer> retryableErrorsPerClient() {
            Map<String, Integer> errors = new LinkedHashMap<>();
            workers.forEach(w -> errors.put(w.name, w.retryable.get()));
            return errors;
        }

        List<String> errorMessages() {
            return workers.stream().flatMap(w -> w.messages.stream()).collect(Collectors.toList());
        }

        List<String> leasesLost() {
            return new ArrayList<>(leasesLost);
        }

        /** Fencing and exclusion over the whole run (I1, I2), and nothing unexpected. */
        void check() {
            assertThat(unexpected).as("unexpected client errors").isEmpty();
            assertThat(violations).as("violations seen by the clients").isEmpty();
            assertThat(register.overlaps()).as("two holders of one key at once (I1)").isEmpty();
            assertThat(register.refused()).as("writes refused for a stale token (I2)").isEmpty();
            Set<Long> allTokens = new HashSet<>();
            for (String key : keys) {
                List<FencedRegister.Write> history = register.history(key);
                for (int i = 1; i < history.size(); i++) {
                    assertThat(history.get(i).token()).as(key + ": tokens strictly increase in acceptance order")
                            .isGreaterThan(history.get(i - 1).token());
                }
                assertThat(register.value(key)).as(key + ": every accepted read-modify-write counted once").isEqualTo(history.size());
                history.forEach(w -> assertThat(allTokens.add(w.token())).as("token " + w.token() + " unique across keys").isTrue());
            }
            Set<Long> acknowledged = new HashSet<>();
            for (Ack ack : acks) {
                assertThat(acknowledged.add(ack.token())).as("token " + ack.token() + " acknowledged once").isTrue();
            }
        }

        /** Acquisitions, timeouts, and the throughput just before SIGTERM against just after the exit. */
        String summary(long sigterm, long exited) {
            long window = TimeUnit.SECONDS.toNanos(5);
            long before = acks.stream().filter(a -> a.atNanos() >= sigterm - window && a.atNanos() < sigterm).count();
            long after = acks.stream().filter(a -> a.atNanos() >= exited && a.atNanos() < exited + window).count();
            List<Long> times = acks.stream().map(Ack::atNanos).filter(t -> t >= sigterm - window && t < exited + window)
                    .sorted().collect(Collectors.toList());
            long gap = 0;
            for (int i = 1; i < times.size(); i++) {
                gap = Math.max(gap, times.get(i) - times.get(i - 1));
            }
            return String.format("%d acquisitions, %d lock waits timed out; %.0f/s in the 5 s before SIGTERM, %.0f/s in the 5 s"
                            + " after the exit; longest pause between two acquisitions around the shutdown %d ms",
                    acks.size(), lockTimeouts.get(), before / 5.0, after / 5.0, TimeUnit.NANOSECONDS.toMillis(gap));
        }

        private final class Worker implements Runnable {
            final String name;
            final TenureClient client;
            final Random random;
            /** UNAVAILABLE-class errors that reached this client's code (the SDK retries the rest itself). */
            final AtomicInteger retryable = new AtomicInteger();
            final ConcurrentLinkedQueue<String> messages = new ConcurrentLinkedQueue<>();
            private Lease lease;

            Worker(String name, TenureClient client, Random random) {
                this.name = name;
                this.client = client;
                this.random = random;
            }

            @Override
            public void run() {
                try {
                    while (!stop.get()) {
                        cycle(keys.get(random.nextInt(keys.size())));
                    }
                } catch (RuntimeException | Error e) {
                    unexpected.add(name + ": " + e);
                } finally {
                    if (lease != null) {
                        lease.close();
                    }
                }
            }

            private void retryable(String what, UnavailableException e) {
                retryable.incrementAndGet();
                messages.add(name + " " + what + ": " + e.getMessage());
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
            }

            private void cycle(String key) {
                if (lease == null || !lease.isValid()) {
                    if (lease != null) {
                        lease.close();
                    }
                    lease = null;
                    try {
                        Lease granted = client.grantLease(TTL, name);
                        granted.lost().thenAccept(loss -> {
                            if (loss.reason() != LeaseLoss.Reason.REVOKED && loss.reason() != LeaseLoss.Reason.CLOSED) {
                                leasesLost.add(name + " lease " + granted.id() + ": " + loss);
                            }
                        });
                        lease = granted;
                    } catch (UnavailableException e) {
                        retryable("lease grant", e);
                        return;
                    }
                }
                LockHandle handle = null;
                while (handle == null && !stop.get()) {
                    try {
                        handle = client.acquire(key, lease, LOCK_WAIT, name.getBytes(StandardCharsets.UTF_8));
                    } catch (UnavailableException e) {
                        retryable("lock " + key, e); // retried with the same key and lease: the wait keeps its place
                    } catch (LockNotAcquiredException e) {
                        lockTimeouts.incrementAndGet();
                        return;
                    } catch (LeaseLostException e) {
                        return; // recorded by the loss listener; the next cycle replaces the lease
                    } catch (LeaseNotFoundException e) {
                        if (lease.isValid()) {
                            violations.add(name + ": the server does not know lease " + lease.id() + " while it is valid: " + e.getMessage());
                        }
                        lease.close();
                        lease = null;
                        return;
                    } catch (TenureException e) {
                        unexpected.add(name + " lock " + key + ": " + e);
                        return;
                    }
                }
                if (handle == null) {
                    return;
                }
                acks.add(new Ack(name, key, handle.fencingToken(), System.nanoTime()));
                register.enter(key, name, handle.fencingToken());
                try {
                    if (handle.isValid()) {
                        long value = register.read(key);
                        LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200 + random.nextInt(1000)));
                        register.write(key, handle.fencingToken(), value + 1, name);
                    }
                } finally {
                    register.exit(key);
                }
                while (true) {
                    try {
                        handle.release();
                        return;
                    } catch (UnavailableException e) {
                        retryable("unlock " + key, e);
                        if (!handle.lease().isValid()) {
                            return; // the lock ends with the lease
                        }
                    } catch (TenureException e) {
                        unexpected.add(name + " unlock " + handle + ": " + e);
                        return;
                    }
                }
            }
        }
    }
}

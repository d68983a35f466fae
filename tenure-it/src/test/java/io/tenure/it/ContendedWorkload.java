package io.tenure.it;

import io.tenure.client.Lease;
import io.tenure.client.LeaseLostException;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import io.tenure.client.UnavailableException;
import io.tenure.testing.Await;
import io.tenure.testing.MemberProcess;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The load of the fault tests: clients (each with all endpoints, its own lease and thread)
 * contending on a few keys; each holder does a read-modify-write on a {@link FencedRegister} with
 * its fencing token, then releases. Afterwards {@link #check} verifies mutual exclusion (I1), the
 * fencing (I2) and, against the server's own watch history, that no acknowledged acquisition was
 * lost (I9). An UNAVAILABLE is retried (same key, same lease: the wait keeps its place) and counted;
 * a lease the client declares lost is counted and replaced. Neither is a violation.
 */
final class ContendedWorkload implements AutoCloseable {
    static final Duration TTL = Duration.ofSeconds(30);
    static final Duration LOCK_WAIT = Duration.ofSeconds(5);
    static final Duration PROGRESS_LIMIT = Duration.ofSeconds(90);

    /** An acquisition the client saw acknowledged. */
    record Ack(String worker, String key, long token, long leaseId, long ackNanos) {
    }

    private final String prefix;
    private final List<String> keys;
    private final FencedRegister register;
    private final List<Thread> threads = new ArrayList<>();
    private final List<TenureClient> clients = new ArrayList<>();
    private final TenureClient probeClient;
    private final AtomicReference<Lease> probeLease = new AtomicReference<>();
    private final ConcurrentLinkedQueue<Ack> acks = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Ack> written = new ConcurrentLinkedQueue<>();
    /** What the clients count: UNAVAILABLE retried, waits timed out, leases lost, violations and unexpected errors. */
    private final WorkerLease.Tally tally = new WorkerLease.Tally();
    private final AtomicLong skippedInvalid = new AtomicLong();
    private final AtomicBoolean stop = new AtomicBoolean();
    private volatile String serverCheck = "not checked";

    /** {@code workers} clients on {@code keyCount} keys named {@code PREFIX/0...}; not started yet. */
    ContendedWorkload(Cluster cluster, String prefix, int workers, int keyCount) {
        this.prefix = prefix;
        this.keys = IntStream.range(0, keyCount).mapToObj(i -> prefix + "/" + i).collect(Collectors.toList());
        this.register = new FencedRegister(keys);
        for (int i = 0; i < workers; i++) {
            // Rotate the endpoint order so the workers start on different members.
            List<String> endpoints = new ArrayList<>(cluster.endpoints());
            Collections.rotate(endpoints, i % endpoints.size());
            TenureClient client = TenureClient.connect(endpoints);
            clients.add(client);
            Thread thread = new Thread(new Worker("w" + i, client, new Random(1000 + i)), "worker-" + i);
            thread.setDaemon(true);
            threads.add(thread);
        }
        probeClient = TenureClient.connect(cluster.endpoints());
    }

    ContendedWorkload start() {
        probeLease.set(grant(probeClient, "probe"));
        threads.forEach(Thread::start);
        return this;
    }

    int acquisitions() {
        return acks.size();
    }

    /** Waits for {@code count} more acquisitions (fails at once on a violation). */
    void awaitAcquisitions(int count, String when) {
        long target = acks.size() + count;
        Await.PROCESSES.until(() -> count + " acquisitions " + when + " (at " + acks.size() + ", target " + target + ")", PROGRESS_LIMIT,
                () -> acks.size() >= target || !tally.violations().isEmpty() || !register.overlaps().isEmpty());
        assertThat(tally.violations()).as("violations seen by the clients").isEmpty();
        assertThat(register.overlaps()).as("two holders of one key at once (I1)").isEmpty();
    }

    /** Stops the workers, waits for them, and closes their clients (revoking their leases). */
    void stop() throws InterruptedException {
        stop.set(true);
        for (Thread thread : threads) {
            thread.join(LOCK_WAIT.plusSeconds(60).toMillis());
            assertThat(thread.isAlive()).as(thread.getName() + " finished").isFalse();
        }
        Lease probe = probeLease.get();
        if (probe != null) {
            probe.close();
        }
        clients.forEach(TenureClient::close);
    }

    @Override
    public void close() throws InterruptedException {
        if (!stop.get()) {
            stop.set(true);
            for (Thread thread : threads) {
                thread.join(LOCK_WAIT.plusSeconds(30).toMillis());
            }
        }
        clients.forEach(TenureClient::close);
        probeClient.close();
    }

    /** Every check, after {@link #stop()}; the server's history is read from {@code member}. */
    void check(MemberProcess member, int minimumAcquisitions) {
        checkRegister();
        assertThat(acks.size()).as("acquisitions").isGreaterThanOrEqualTo(minimumAcquisitions);
        checkAgainstTheServerLog(member);
    }

    String summary() {
        return String.format("%d acquisitions, %d writes, %d UNAVAILABLE retried, %d lock waits timed out, %d leases lost,"
                        + " %d holders skipped a write with an invalid lease; %s",
                acks.size(), written.size(), tally.unavailable().get(), tally.lockTimeouts().get(), tally.leasesLost().size(), skippedInvalid.get(),
                serverCheck);
    }

    List<String> leasesLost() {
        return new ArrayList<>(tally.leasesLost());
    }

    private void checkRegister() {
        assertThat(tally.unexpected()).as("unexpected client errors").isEmpty();
        assertThat(tally.violations()).as("violations seen by the clients").isEmpty();
        assertThat(register.overlaps()).as("two holders of one key at once (I1)").isEmpty();
        assertThat(register.refused()).as("writes refused for a stale token while the holder's lease was valid (I2)").isEmpty();
        Set<Long> allTokens = new HashSet<>();
        for (String key : keys) {
            List<FencedRegister.Write> history = register.history(key);
            for (int i = 1; i < history.size(); i++) {
                assertThat(history.get(i).token()).as(key + ": tokens strictly increase in acceptance order (no stale write accepted)")
                        .isGreaterThan(history.get(i - 1).token());
            }
            assertThat(register.value(key)).as(key + ": every accepted read-modify-write counted once (no lost update)")
                    .isEqualTo(history.size());
            for (FencedRegister.Write write : history) {
                assertThat(allTokens.add(write.token())).as("token " + write.token() + " is unique across keys (I2)").isTrue();
            }
        }
        Map<String, Set<Long>> accepted = new HashMap<>();
        keys.forEach(key -> accepted.put(key, register.history(key).stream().map(FencedRegister.Write::token).collect(Collectors.toSet())));
        List<Ack> missing = written.stream().filter(ack -> !accepted.get(ack.key()).contains(ack.token())).collect(Collectors.toList());
        assertThat(missing).as("acknowledged and written acquisitions missing from the register history").isEmpty();
        Map<Long, Ack> byToken = new HashMap<>();
        for (Ack ack : acks) {
            Ack other = byToken.put(ack.token(), ack);
            assertThat(other).as("token " + ack.token() + " acknowledged twice: " + other + " and " + ack).isNull();
        }
    }

    /**
     * The server's own record ({@link GrantHistory}): replaying the watch history of the keys from
     * the first revision, every acquisition a client saw acknowledged is a PUT with its token and
     * lease (I9), and each key's PUTs come in strictly increasing revision order (I2, I10).
     */
    private void checkAgainstTheServerLog(MemberProcess member) {
        serverCheck = GrantHistory.check(member, prefix + "/", acks.stream()
                .map(ack -> new GrantHistory.Grant(ack.key(), ack.token(), ack.leaseId(), ack.toString())).toList());
    }

    /**
     * Tries a fresh lock (a key nobody else uses) until one is granted; returns the milliseconds
     * since {@code since}. The probe's lease is replaced if the failover outlasted its safe window.
     */
    long firstAcquisitionAfter(String key, long since) {
        TenureClient client = probeClient;
        AtomicReference<Lease> lease = probeLease;
        LockHandle handle = Await.PROCESSES.value("a new acquisition of " + key + " after the fault", PROGRESS_LIMIT, () -> {
            if (!lease.get().isValid()) {
                lease.get().close();
                lease.set(grant(client, "probe"));
            }
            try {
                Optional<LockHandle> granted = client.tryAcquire(key, lease.get(), null);
                if (granted.isEmpty()) {
                    throw new AssertionError(key + " is taken, but nobody else uses it");
                }
                return granted.get();
            } catch (UnavailableException | LeaseLostException e) {
                return null;
            }
        });
        long millis = Await.millisSince(since);
        Await.PROCESSES.until("release of " + key, PROGRESS_LIMIT, () -> {
            try {
                handle.release();
                return true;
            } catch (UnavailableException e) {
                return false;
            }
        });
        return millis;
    }

    private Lease grant(TenureClient client, String clientId) {
        return Await.PROCESSES.value("a lease for " + clientId, PROGRESS_LIMIT, () -> {
            try {
                return tally.watch(client.grantLease(TTL, clientId));
            } catch (UnavailableException e) {
                tally.unavailable().incrementAndGet();
                return null;
            }
        });
    }

    /** One client thread: lock a random key, read-modify-write its register with the token, release; again. */
    private final class Worker implements Runnable {
        private final String name;
        private final TenureClient client;
        private final Random random;
        private final WorkerLease lease;

        Worker(String name, TenureClient client, Random random) {
            this.name = name;
            this.client = client;
            this.random = random;
            this.lease = new WorkerLease(client, name, TTL, tally);
        }

        @Override
        public void run() {
            lease.loop(stop, () -> cycle(keys.get(random.nextInt(keys.size()))));
        }

        private void cycle(String key) {
            if (lease.valid() == null) {
                return;
            }
            LockHandle handle = lease.acquire(held -> client.acquire(key, held, LOCK_WAIT, name.getBytes(StandardCharsets.UTF_8)),
                    stop, "lock " + key);
            if (handle == null) {
                return;
            }
            Ack ack = new Ack(name, key, handle.fencingToken(), handle.lease().id(), System.nanoTime());
            acks.add(ack);
            register.enter(key, name, handle.fencingToken(), "lease " + handle.lease().id() + (handle.isValid() ? " valid" : " lost")
                    + ", granted " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ack.ackNanos()) + " ms ago");
            try {
                if (handle.isValid()) {
                    long value = register.read(key);
                    LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200 + random.nextInt(1000)));
                    if (register.write(key, handle.fencingToken(), value + 1, name)) {
                        written.add(ack);
                    }
                } else {
                    skippedInvalid.incrementAndGet();
                }
            } finally {
                register.exit(key, name);
            }
            lease.release(handle);
        }
    }
}

package io.tenure.it;

import io.tenure.client.FailedPreconditionException;
import io.tenure.client.Lease;
import io.tenure.client.LeaseLostException;
import io.tenure.client.LockDescription;
import io.tenure.client.LockHandle;
import io.tenure.client.LockMode;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureException;
import io.tenure.client.TenureLock;
import io.tenure.client.TenureReadWriteLock;
import io.tenure.client.UnavailableException;
import io.tenure.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A read/write lock under mixed load across {@code kill -9} of the leader, with real processes:
 * six clients, each with its own connection and lease, loop on one lock (about four reads in
 * five; one client downgrades each of its writes and reads back what it wrote), before, during
 * and after the kill, each holder using a {@link FencedReadWriteRegister} with its grant's token.
 * A reader held from before the kill is still a holder with the same token afterwards, and
 * cannot upgrade.
 *
 * <p>Afterwards: no writer was ever beside another holder while both trusted their grants, no
 * valid grant's read or write was refused, no update was lost; the readers really shared the lock
 * (at least two read holders at once, both in the register and in a description); tokens are
 * unique and in real-time order; every acknowledged grant is in the survivors' history (I9) and
 * ended in a release by its client or with a lost lease, and a lost lease needs a failover long
 * enough to explain it. Then the lock is free, with no stale holder, and a last writer gets it
 * with a token above every token seen. (The SDK's release also succeeds when the server no longer
 * ties the grant to the lease, so a release alone proves nothing; a grant the server dropped shows
 * in the pinned reader's description after the kill, in a downgrade, which fails on it, or as an
 * overlap in the register.)
 *
 * <p>CI: one kill, {@value #CI_GRANTS} grants before it and as many after. Long form:
 * {@code mvn -B -ntp test -pl tenure-it -Pfaults-long -Dtest=ReadWriteLockFailoverTest} (5 kills,
 * the killed member restarted before the next, 500 grants a phase); or set
 * {@code -Dtenure.it.rwKills=N -Dtenure.it.rwGrantsPerPhase=M}.
 */
@ExtendWith(ItLogs.class)
class ReadWriteLockFailoverTest {
    static final Duration TTL = Duration.ofSeconds(30);
    static final Duration LOCK_WAIT = Duration.ofSeconds(5);
    static final Duration PROGRESS_LIMIT = Duration.ofSeconds(60);
    static final String LOCK = "failover/rw";
    static final int CLIENTS = 6;
    /** Each client's share of write acquires; the first client's writes downgrade. */
    static final double WRITE_SHARE = 0.2;
    static final double DOWNGRADER_WRITE_SHARE = 0.5;
    static final int CI_GRANTS = 100;
    static final int KILLS = ItScale.of("rwKills", 1, 5);
    static final int GRANTS_PER_PHASE = ItScale.of("rwGrantsPerPhase", CI_GRANTS, 500);

    /** A grant a client received: who, in which mode, its token and lease, when the acquire was sent and when the grant arrived. */
    record Grant(String client, LockMode mode, long token, long leaseId, long sentNanos, long ackNanos) {
    }

    /** How a grant ended: released by its client with the lease valid, or with the lease lost. */
    enum End { RELEASED, LEASE_LOST }

    /** A grant and its handle. */
    record Held(LockHandle handle, Grant grant) {
    }

    /** How and when (the release call returned) a grant ended. */
    record Ended(End how, long atNanos) {
    }

    @TempDir
    Path work;

    private final FencedReadWriteRegister register = new FencedReadWriteRegister();
    private final ConcurrentLinkedQueue<Grant> grants = new ConcurrentLinkedQueue<>();
    private final Map<Long, Ended> ends = new ConcurrentHashMap<>();
    /** What the clients count: UNAVAILABLE retried, waits timed out, leases lost, violations and unexpected errors. */
    private final WorkerLease.Tally tally = new WorkerLease.Tally();
    private final AtomicLong downgrades = new AtomicLong();
    private final AtomicInteger maxReadersDescribed = new AtomicInteger();
    private final AtomicBoolean stop = new AtomicBoolean();

    @Test
    @Timeout(value = 30, unit = TimeUnit.MINUTES) // a ceiling for the long form; every wait inside has its own deadline
    void readersWritersAndADowngradeSurviveALeaderKill() throws Exception {
        long started = System.nanoTime();
        List<String> rounds = new ArrayList<>();
        List<Long> outages = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        List<TenureClient> clients = new ArrayList<>();
        try (Cluster cluster = Cluster.start(work, 3);
             TenureClient probe = TenureClient.connect(cluster.endpoints())) {
            long clusterReady = System.nanoTime();
            for (int i = 0; i < CLIENTS; i++) {
                List<String> endpoints = new ArrayList<>(cluster.endpoints());
                Collections.rotate(endpoints, i % endpoints.size()); // the clients start on different members
                TenureClient client = TenureClient.connect(endpoints);
                clients.add(client);
                Worker worker = new Worker("c" + i, client, i == 0 ? DOWNGRADER_WRITE_SHARE : WRITE_SHARE, i == 0, new Random(1700 + i));
                Thread thread = new Thread(worker, "rw-client-" + i);
                thread.setDaemon(true);
                threads.add(thread);
            }
            threads.forEach(Thread::start);
            TenureReadWriteLock lock = probe.readWriteLock(LOCK);
            awaitGrants(lock, GRANTS_PER_PHASE, 0, "before the first kill", () -> maxReadersDescribed.get() >= 2);

            for (int kill = 1; kill <= KILLS; kill++) {
                String leader = cluster.leader();
                // A reader of the test's own holds across the kill: its grant must outlive the leader.
                WorkerLease pinnedWorker = new WorkerLease(probe, "pinned-" + kill, TTL, tally);
                Lease pinnedLease = Await.PROCESSES.value("a lease for the pinned reader", PROGRESS_LIMIT, pinnedWorker::valid);
                TenureReadWriteLock pinnedLock = probe.readWriteLock(LOCK, pinnedLease);
                Held held = pinnedRead(pinnedLock, pinnedLease);
                LockHandle pinned = held.handle();
                Grant pinnedGrant = held.grant();
                grants.add(pinnedGrant);
                register.enter(pinnedGrant.client(), LockMode.READ, pinned.fencingToken(), pinned::isValid);
                assertThat(register.read(pinnedGrant.client())).as("the pinned reader's read before the kill").isPresent();

                List<String> insideAtKill = register.insideNow();
                long killedAt = System.nanoTime();
                cluster.kill9(leader);
                long deadAt = System.nanoTime();
                String newLeader = cluster.awaitNewLeader(leader, Cluster.ELECTION_LIMIT);
                long electedMillis = Await.millisSince(killedAt);

                LockDescription after = Await.PROCESSES.value("a description of " + LOCK + " from the new leader " + newLeader,
                        PROGRESS_LIMIT, lock::describe);
                observe(after);
                assertThat(after.holders()).as("the holders after " + leader + " was killed (" + newLeader + " leads): " + after)
                        .contains(holderOf(after, pinnedGrant));
                assertThat(after.mode()).isEqualTo(LockMode.READ);
                assertThat(pinned.isValid()).as("the pinned reader's grant is still valid").isTrue();
                TenureLock upgrade = pinnedLock.writeLock();
                assertThatThrownBy(upgrade::tryAcquire).as("a reader asking for the write lock")
                        .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("cannot upgrade");
                assertThat(register.read(pinnedGrant.client())).as("the pinned reader's read after the kill").isPresent();
                register.exit(pinnedGrant.client());
                release(pinnedWorker, pinnedGrant, pinned);
                pinnedWorker.close();

                if (kill < KILLS) {
                    cluster.restart(leader);
                    cluster.awaitCaughtUp(leader);
                }
                awaitGrants(lock, GRANTS_PER_PHASE, deadAt, "after kill " + kill + " of " + KILLS + " (" + leader + ")",
                        () -> grantsAfter(deadAt, LockMode.WRITE) > 0);
                long firstAfter = grants.stream().filter(g -> g.ackNanos() > deadAt && !g.client().startsWith("pinned"))
                        .mapToLong(Grant::ackNanos).min().orElseThrow();
                outages.add(TimeUnit.NANOSECONDS.toMillis(firstAfter - killedAt));
                long across = grants.stream().filter(g -> !g.client().startsWith("pinned") && g.ackNanos() < killedAt
                        && ends.containsKey(g.token()) && ends.get(g.token()).atNanos() > deadAt).count();
                rounds.add(String.format("kill %d of %s: %s inside at the kill, %d client grants released only after it, new leader %s in %d ms,"
                                + " first client grant after %d ms",
                        kill, leader, insideAtKill, across, newLeader, electedMillis, outages.get(outages.size() - 1)));
            }

            stop.set(true);
            for (Thread thread : threads) {
                thread.join(LOCK_WAIT.plus(TTL).toMillis());
                assertThat(thread.isAlive()).as(thread.getName() + " finished").isFalse();
            }
            clients.forEach(TenureClient::close);

            LockDescription idle = lock.describe();
            long reads = grants.stream().filter(g -> g.mode() == LockMode.READ).count();
            long endedLost = ends.values().stream().filter(e -> e.how() == End.LEASE_LOST).count();
            System.out.printf("ReadWriteLockFailoverTest: %d grants (%d read, %d write, %d downgraded and read back; %d ended with a lost"
                            + " lease), %d reads and %d writes accepted, at most %d readers inside at once (%d in one description),"
                            + " %d UNAVAILABLE retried, %d lock waits timed out, %d leases lost, %d overlaps or refusals excused by a lost"
                            + " lease; cluster ready in %d ms, load and kills %d ms%n",
                    grants.size(), reads, grants.size() - reads, downgrades.get(), endedLost, register.reads(), register.accepted().size(),
                    register.maxReadersInside(), maxReadersDescribed.get(), tally.unavailable().get(), tally.lockTimeouts().get(), tally.leasesLost().size(),
                    register.excused().size(), TimeUnit.NANOSECONDS.toMillis(clusterReady - started), Await.millisSince(clusterReady));
            rounds.forEach(round -> System.out.println("ReadWriteLockFailoverTest: " + round));
            tally.leasesLost().forEach(loss -> System.out.println("ReadWriteLockFailoverTest: lease lost: " + loss));
            register.excused().stream().limit(5).forEach(e -> System.out.println("ReadWriteLockFailoverTest: excused: " + e));

            assertThat(idle.held()).as("no stale holder once every client released: " + idle).isFalse();
            assertThat(idle.holders()).isEmpty();
            assertThat(idle.waiters()).isEmpty();
            checkClients();
            checkRegister();
            FailoverChecks.tokensInRealTimeOrder(grants.stream()
                    .map(g -> new FailoverChecks.Told(g.toString(), g.token(), g.sentNanos(), g.ackNanos())).toList(), "grants");
            FailoverChecks.lostLeasesExplained(tally.leasesLost(), TTL, outages);
            String history = GrantHistory.check(cluster.member(cluster.leader()), LOCK,
                    grants.stream().map(g -> new GrantHistory.Grant(LOCK, g.token(), g.leaseId(), g.toString())).toList());
            long finalToken = finalWrite(probe);
            System.out.printf("ReadWriteLockFailoverTest: %s; the last writer's token %d; %d ms in all%n", history, finalToken,
                    Await.millisSince(started));
        } finally {
            stop.set(true);
            clients.forEach(TenureClient::close);
        }
    }

    /**
     * The pinned reader's grant: beside a client's reader if it can be (a try right after a client's
     * reader entered, while no writer waits), so that a client's grant spans the kill too; otherwise,
     * after a few seconds, whenever the lock lets it in.
     */
    private Held pinnedRead(TenureReadWriteLock pinnedLock, Lease lease) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() - deadline < 0) {
            long entries = register.readerEntries();
            if (Await.within(Duration.ofSeconds(1), () -> register.readerEntries() > entries)) {
                long sent = System.nanoTime();
                Optional<LockHandle> beside = pinnedLock.readLock().tryAcquire();
                if (beside.isPresent()) {
                    return new Held(beside.get(), new Grant(lease.clientId(), LockMode.READ, beside.get().fencingToken(), lease.id(), sent,
                            System.nanoTime()));
                }
            }
        }
        long sent = System.nanoTime();
        LockHandle handle = pinnedLock.readLock().acquire(PROGRESS_LIMIT);
        return new Held(handle, new Grant(lease.clientId(), LockMode.READ, handle.fencingToken(), lease.id(), sent, System.nanoTime()));
    }

    /**
     * Waits for {@code count} more grants acknowledged after {@code since} and for {@code also}, a
     * minute plus 100 ms a grant at most; fails at once on a violation.
     */
    private void awaitGrants(TenureReadWriteLock lock, int count, long since, String when, Supplier<Boolean> also) {
        long target = grantsAfter(since, null) + count;
        Await.PROCESSES.until(() -> count + " grants " + when + " (at " + grantsAfter(since, null) + " of " + target + ", "
                        + maxReadersDescribed.get() + " readers at most in a description, unexpected " + tally.unexpected() + ")",
                PROGRESS_LIMIT.plusMillis(100L * count), () -> {
                    observe(lock.describe());
                    return grantsAfter(since, null) >= target && also.get() || !tally.violations().isEmpty() || !register.violations().isEmpty();
                });
        assertThat(tally.violations()).as("violations seen by the clients " + when).isEmpty();
        assertThat(register.violations()).as("violations seen by the register " + when).isEmpty();
    }

    /** Client grants (not the pinned reader's) acknowledged after {@code since}, of {@code mode} (null: any). */
    private long grantsAfter(long since, LockMode mode) {
        return grants.stream().filter(g -> g.ackNanos() > since && !g.client().startsWith("pinned") && (mode == null || g.mode() == mode))
                .count();
    }

    /** Notes how many readers a description shows, and that a lock in write mode has one holder. */
    private void observe(LockDescription d) {
        if (!d.held()) {
            return;
        }
        if (d.mode() == LockMode.WRITE && d.holders().size() != 1) {
            tally.violations().add("a description in write mode with " + d.holders().size() + " holders: " + d);
        }
        if (d.mode() == LockMode.READ) {
            maxReadersDescribed.accumulateAndGet(d.holders().size(), Math::max);
        }
    }

    private static LockDescription.Holder holderOf(LockDescription d, Grant grant) {
        return d.holders().stream().filter(h -> h.fencingToken() == grant.token() && h.leaseId() == grant.leaseId()).findFirst()
                .orElseThrow(() -> new AssertionError(grant + " is not among the holders of " + d + ": " + d.holders()));
    }

    private void checkClients() {
        assertThat(tally.unexpected()).as("unexpected client errors").isEmpty();
        assertThat(tally.violations()).as("violations seen by the clients").isEmpty();
        List<Grant> unended = grants.stream().filter(g -> !ends.containsKey(g.token())).toList();
        assertThat(unended).as("grants neither released by their client nor ended with a lost lease").isEmpty();
        assertThat(downgrades.get()).as("downgrades that kept the token and read back their write").isPositive();
    }

    private void checkRegister() {
        assertThat(register.violations()).as("the register's violations (overlaps of valid grants, stale reads or writes of valid"
                + " grants, lost updates)").isEmpty();
        List<FencedReadWriteRegister.Write> writes = register.accepted();
        for (int i = 1; i < writes.size(); i++) {
            assertThat(writes.get(i).token()).as("accepted writes' tokens increase").isGreaterThan(writes.get(i - 1).token());
        }
        assertThat(register.value()).as("every accepted read-modify-write counted once (no lost update)").isEqualTo(writes.size());
        assertThat(register.maxReadersInside()).as("readers inside the register at once: the readers shared the lock").isGreaterThanOrEqualTo(2);
        assertThat(maxReadersDescribed.get()).as("read holders in one description").isGreaterThanOrEqualTo(2);
    }

    /** After every client let go: a new writer gets the lock with a token above every token seen, and is its only holder. */
    private long finalWrite(TenureClient probe) {
        try (Lease lease = probe.grantLease(TTL, "last-writer")) {
            TenureReadWriteLock lock = probe.readWriteLock(LOCK, lease);
            LockHandle last = lock.writeLock().acquire(LOCK_WAIT);
            long highest = grants.stream().mapToLong(Grant::token).max().orElseThrow();
            assertThat(last.fencingToken()).as("the last writer's token").isGreaterThan(highest).isGreaterThan(register.highestSeen());
            register.enter("last-writer", LockMode.WRITE, last.fencingToken(), last::isValid);
            OptionalLong value = register.read("last-writer");
            assertThat(value).isPresent();
            assertThat(register.write("last-writer", value.getAsLong() + 1)).as("the last writer's write").isTrue();
            register.exit("last-writer");
            LockDescription held = lock.describe();
            assertThat(held.mode()).isEqualTo(LockMode.WRITE);
            assertThat(held.holders()).extracting(LockDescription.Holder::fencingToken).containsExactly(last.fencingToken());
            last.release();
            assertThat(lock.describe().held()).as("free after the last writer").isFalse();
            return last.fencingToken();
        }
    }

    /** Releases (see {@link WorkerLease#release}) and records how the grant ended. */
    private void release(WorkerLease lease, Grant grant, LockHandle handle) {
        boolean released = lease.release(handle) && handle.lease().isValid();
        ends.put(grant.token(), new Ended(released ? End.RELEASED : End.LEASE_LOST, System.nanoTime()));
    }

    /**
     * One client: acquire the read or the write lock, use the register with the grant's token,
     * release; again until stopped. A writer reads, then writes the value plus one; the
     * downgrading client then downgrades and reads back its own write beside other readers.
     */
    private final class Worker implements Runnable {
        private final String name;
        private final TenureClient client;
        private final double writeShare;
        private final boolean downgrading;
        private final Random random;
        private final WorkerLease lease;

        Worker(String name, TenureClient client, double writeShare, boolean downgrading, Random random) {
            this.name = name;
            this.client = client;
            this.writeShare = writeShare;
            this.downgrading = downgrading;
            this.random = random;
            this.lease = new WorkerLease(client, name, TTL, tally);
        }

        @Override
        public void run() {
            lease.loop(stop, () -> cycle(random.nextDouble() < writeShare ? LockMode.WRITE : LockMode.READ));
        }

        private void cycle(LockMode mode) {
            if (lease.valid() == null) {
                return;
            }
            long sent = System.nanoTime();
            LockHandle handle = lease.acquire(held -> {
                TenureReadWriteLock lock = client.readWriteLock(LOCK, held);
                return (mode == LockMode.READ ? lock.readLock() : lock.writeLock()).acquire(LOCK_WAIT);
            }, stop, mode + " lock");
            if (handle == null) {
                return;
            }
            Grant grant = new Grant(name, mode, handle.fencingToken(), handle.lease().id(), sent, System.nanoTime());
            grants.add(grant);
            if (handle.isValid()) {
                register.enter(name, mode, handle.fencingToken(), handle::isValid);
                try {
                    use(handle, mode);
                } finally {
                    register.exit(name);
                }
            }
            release(lease, grant, handle);
        }

        private void use(LockHandle handle, LockMode mode) {
            OptionalLong value = register.read(name);
            // Mostly short holds; one read in ten is slow, so that grants also span a kill.
            boolean slow = mode == LockMode.READ && random.nextInt(10) == 0;
            LockSupport.parkNanos(slow ? TimeUnit.MILLISECONDS.toNanos(50 + random.nextInt(100))
                    : TimeUnit.MICROSECONDS.toNanos(1000 + random.nextInt(3000)));
            if (mode == LockMode.READ || value.isEmpty() || !register.write(name, value.getAsLong() + 1) || !downgrading) {
                return;
            }
            register.downgrade(name);
            if (!downgrade(handle)) {
                return;
            }
            OptionalLong readBack = register.read(name);
            if (readBack.isPresent() && readBack.getAsLong() != value.getAsLong() + 1) {
                tally.violations().add(name + " downgraded " + handle + " after writing " + (value.getAsLong() + 1) + " but read back "
                        + readBack.getAsLong());
            }
            if (readBack.isPresent()) {
                downgrades.incrementAndGet();
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(1000 + random.nextInt(3000)));
        }

        /** Downgrades, retrying while members are unreachable; whether the handle now reads, keeping its token. */
        private boolean downgrade(LockHandle handle) {
            long token = handle.fencingToken();
            while (handle.isValid()) {
                try {
                    handle.downgrade();
                    if (handle.fencingToken() != token || handle.mode() != LockMode.READ) {
                        tally.violations().add(name + ": a downgrade of token " + token + " gave " + handle);
                    }
                    return true;
                } catch (UnavailableException e) {
                    tally.unavailable().incrementAndGet();
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
                } catch (LeaseLostException e) {
                    return false;
                } catch (TenureException e) {
                    if (handle.isValid()) {
                        tally.violations().add(name + ": the downgrade of " + handle + " failed while its lease was valid"
                                + " (an acknowledged grant lost?): " + e);
                    }
                    return false;
                }
            }
            return false;
        }
    }
}

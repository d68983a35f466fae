package io.tenure.it;

import io.tenure.client.ElectionObserver;
import io.tenure.client.LeaderInfo;
import io.tenure.client.Lease;
import io.tenure.client.LeaseNotFoundException;
import io.tenure.client.Leadership;
import io.tenure.client.LockMode;
import io.tenure.client.NotHolderException;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureElection;
import io.tenure.client.TenureException;
import io.tenure.client.UnavailableException;
import io.tenure.client.Watch;
import io.tenure.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A leader election across {@code kill -9} of the Raft leader, with real processes: four
 * clients, each with its own connection and lease, campaign on one election in a loop (lead
 * briefly: read a {@link FencedReadWriteRegister}, as its writer, with the leadership's token,
 * proclaim a value, write the value plus one, resign), and a fifth observes the election
 * throughout. At each kill
 * one client's leadership is held across it: after the failover the election still names it,
 * with the same token, and it proclaims, writes and resigns as if nothing happened; the other
 * clients wait as candidates meanwhile.
 *
 * <p>Afterwards: never two leaders at once by the register's view (no overlap of two trusted
 * leaderships, no trusted leadership's read or write refused, no lost update); every leadership
 * a client was told of has its own token, in real-time order, and ended in a successful
 * resignation or with a lost lease (and a lost lease needs a failover long enough to explain it),
 * and is in the survivors' history (I9); the observer saw every told leadership and every
 * acknowledged proclaim, tokens never going back, and each value from the leadership that
 * announced it, so never a deposed leader's value after a newer leader's. Then nobody leads, and
 * a last campaign is elected with a token above every token seen. (Resigning also succeeds when the server no longer has the leadership, so a
 * resignation alone proves little; a leadership the server dropped shows as a refused proclaim
 * while the lease is valid, in the observer, or at the register.)
 *
 * <p>CI: one kill, {@value #CI_TERMS} leaderships before it and as many after. Long form:
 * {@code mvn -B -ntp test -pl tenure-it -Pfaults-long -Dtest=ElectionFailoverTest} (5 kills, the
 * killed member restarted before the next, 400 leaderships a phase); or set
 * {@code -Dtenure.it.electionKills=N -Dtenure.it.electionTermsPerPhase=M}.
 */
@ExtendWith(ItLogs.class)
class ElectionFailoverTest {
    static final Duration TTL = Duration.ofSeconds(30);
    static final Duration CAMPAIGN_WAIT = Duration.ofSeconds(5);
    static final Duration PROGRESS_LIMIT = Duration.ofSeconds(60);
    static final String ELECTION = "failover/leader";
    static final int CLIENTS = 4;
    /** The longest a leader works between its read and its proclaim, in ms. */
    static final int MAX_WORK_MILLIS = 20;
    static final int CI_TERMS = 40;
    static final int KILLS = ItScale.of("electionKills", 1, 5);
    static final int TERMS_PER_PHASE = ItScale.of("electionTermsPerPhase", CI_TERMS, 400);

    /** A leadership a client was told of: who, its token and lease, its campaign's value, when the campaign was sent and answered. */
    record Term(String client, long token, long leaseId, String value, long sentNanos, long ackNanos) {
    }

    /** How a leadership ended: resigned with the lease valid, or with the lease lost. */
    enum End { RESIGNED, LEASE_LOST }

    /** An acknowledged proclaim: the leadership's token, the value, the revision the server named, when the answer came. */
    record Proclaimed(long token, String value, long revision, long ackNanos) {
    }

    /** What the observer was told, and when. */
    record Seen(Optional<LeaderInfo> leader, long atNanos) {
    }

    @TempDir
    Path work;

    /** The leaders' storage; every leader uses it as a writer, so two leaders inside at once are an overlap. */
    private final FencedReadWriteRegister register = new FencedReadWriteRegister();
    private final ConcurrentLinkedQueue<Term> terms = new ConcurrentLinkedQueue<>();
    private final Map<Long, End> ends = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Proclaimed> proclaims = new ConcurrentLinkedQueue<>();
    /** Every value a campaign stood with, and its lease: a leadership nobody was told of (a lost answer) carries one. */
    private final Map<String, Long> campaignValues = new ConcurrentHashMap<>();
    /** Every value a leadership tried to proclaim, by token (also those whose answer was lost). */
    private final Map<Long, Set<String>> proclaimValues = new ConcurrentHashMap<>();
    private final List<Seen> observed = new CopyOnWriteArrayList<>();
    private final List<String> observerErrors = new CopyOnWriteArrayList<>();
    /** What the clients count: UNAVAILABLE retried, campaigns not elected in time, leases lost, violations and unexpected errors. */
    private final WorkerLease.Tally tally = new WorkerLease.Tally();
    private final AtomicBoolean stop = new AtomicBoolean();
    /** While a kill is being prepared: the next client to lead holds its leadership until {@link #unpin} opens. */
    private final AtomicBoolean pinWanted = new AtomicBoolean();
    private final AtomicReference<Term> pinned = new AtomicReference<>();
    private volatile CountDownLatch unpin = new CountDownLatch(0);

    @Test
    @Timeout(value = 30, unit = TimeUnit.MINUTES) // a ceiling for the long form; every wait inside has its own deadline
    void campaignsProclaimsAndResignationsSurviveALeaderKill() throws Exception {
        long started = System.nanoTime();
        List<String> rounds = new ArrayList<>();
        List<Long> outages = new ArrayList<>();
        List<Term> heldAcrossKills = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        List<TenureClient> clients = new ArrayList<>();
        try (Cluster cluster = Cluster.start(work, 3);
             TenureClient probe = TenureClient.connect(cluster.endpoints());
             TenureClient observer = TenureClient.connect(cluster.endpoints())) {
            long clusterReady = System.nanoTime();
            Watch observing = observer.election(ELECTION).observe(new ElectionObserver() {
                @Override
                public void leaderChanged(Optional<LeaderInfo> leader) {
                    observed.add(new Seen(leader, System.nanoTime()));
                }

                @Override
                public void onError(TenureException error) {
                    observerErrors.add(error.toString());
                }
            });
            for (int i = 0; i < CLIENTS; i++) {
                List<String> endpoints = new ArrayList<>(cluster.endpoints());
                Collections.rotate(endpoints, i % endpoints.size()); // the clients start on different members
                TenureClient client = TenureClient.connect(endpoints);
                clients.add(client);
                Thread thread = new Thread(new Worker("c" + i, client, new Random(1900 + i)), "election-client-" + i);
                thread.setDaemon(true);
                threads.add(thread);
            }
            threads.forEach(Thread::start);
            awaitTerms(TERMS_PER_PHASE, 0, "before the first kill");

            for (int kill = 1; kill <= KILLS; kill++) {
                String leader = cluster.leader();
                CountDownLatch release = new CountDownLatch(1);
                unpin = release;
                pinned.set(null);
                pinWanted.set(true);
                Term held = Await.PROCESSES.value("a client leading, to hold its leadership across kill " + kill, PROGRESS_LIMIT,
                        pinned::get);
                List<String> insideAtKill = register.insideNow();
                long killedAt = System.nanoTime();
                cluster.kill9(leader);
                long deadAt = System.nanoTime();
                String newLeader = cluster.awaitNewLeader(leader, Cluster.ELECTION_LIMIT);
                long electedMillis = Await.millisSince(killedAt);

                // The election still names the leadership held across the kill, with the same token.
                LeaderInfo after = Await.PROCESSES.value("the leader of " + ELECTION + " from the new Raft leader " + newLeader,
                        PROGRESS_LIMIT, () -> leaderOrNull(probe));
                assertThat(after.fencingToken()).as("the election's leader after " + leader + " was killed: " + after + "; held: " + held)
                        .isEqualTo(held.token());
                assertThat(after.leaseId()).isEqualTo(held.leaseId());
                assertThat(after.clientId()).isEqualTo(held.client());
                heldAcrossKills.add(held);
                release.countDown();

                if (kill < KILLS) {
                    cluster.restart(leader);
                    cluster.awaitCaughtUp(leader);
                }
                awaitTerms(TERMS_PER_PHASE, deadAt, "after kill " + kill + " of " + KILLS + " (" + leader + ")");
                long firstAfter = terms.stream().filter(t -> t.ackNanos() > deadAt && t.token() != held.token())
                        .mapToLong(Term::ackNanos).min().orElseThrow();
                outages.add(TimeUnit.NANOSECONDS.toMillis(firstAfter - killedAt));
                long stoodAcross = terms.stream().filter(t -> t.sentNanos() < killedAt && t.ackNanos() > deadAt).count();
                rounds.add(String.format("kill %d of %s: leading at the kill %s, new Raft leader %s in %d ms, the first leadership"
                                + " after the held one %d ms after the kill, %d leaderships of campaigns that stood across the kill",
                        kill, leader, insideAtKill, newLeader, electedMillis, outages.get(outages.size() - 1), stoodAcross));
            }

            stop.set(true);
            for (Thread thread : threads) {
                thread.join(CAMPAIGN_WAIT.plus(TTL).toMillis());
                assertThat(thread.isAlive()).as(thread.getName() + " finished").isFalse();
            }
            clients.forEach(TenureClient::close);

            Optional<LeaderInfo> idle = probe.election(ELECTION).leader();
            assertThat(idle).as("nobody leads once every client resigned").isEmpty();
            Term last = lastCampaign(probe);
            Await.PROCESSES.until("the observer to see the last leadership and its end", PROGRESS_LIMIT,
                    () -> observedEndOf(last.token()) || !observerErrors.isEmpty());
            observing.close();

            long resigned = ends.values().stream().filter(e -> e == End.RESIGNED).count();
            System.out.printf("ElectionFailoverTest: %d leaderships (%d resigned, %d ended with a lost lease), %d proclaims acknowledged,"
                            + " %d writes accepted, %d observer events, %d campaigns not elected in %d ms, %d UNAVAILABLE retried,"
                            + " %d leases lost, %d overlaps or refusals excused by a lost lease; cluster ready in %d ms, load and kills %d ms%n",
                    terms.size(), resigned, ends.size() - resigned, proclaims.size(), register.accepted().size(), observed.size(),
                    tally.lockTimeouts().get(), CAMPAIGN_WAIT.toMillis(), tally.unavailable().get(), tally.leasesLost().size(),
                    register.excused().size(),
                    TimeUnit.NANOSECONDS.toMillis(clusterReady - started), Await.millisSince(clusterReady));
            rounds.forEach(round -> System.out.println("ElectionFailoverTest: " + round));
            tally.leasesLost().forEach(loss -> System.out.println("ElectionFailoverTest: lease lost: " + loss));
            register.excused().stream().limit(5).forEach(e -> System.out.println("ElectionFailoverTest: excused: " + e));

            checkClients();
            checkRegister();
            FailoverChecks.tokensInRealTimeOrder(terms.stream()
                    .map(t -> new FailoverChecks.Told(t.toString(), t.token(), t.sentNanos(), t.ackNanos())).toList(), "leaderships");
            checkHeldAcrossKills(heldAcrossKills, outages);
            String seen = checkObserver();
            FailoverChecks.lostLeasesExplained(tally.leasesLost(), TTL, outages);
            String history = GrantHistory.check(cluster.member(cluster.leader()), ELECTION,
                    terms.stream().map(t -> new GrantHistory.Grant(ELECTION, t.token(), t.leaseId(), t.toString())).toList());
            System.out.printf("ElectionFailoverTest: %s; %s; the last leader's token %d; %d ms in all%n", seen, history, last.token(),
                    Await.millisSince(started));
        } finally {
            stop.set(true);
            unpin.countDown();
            clients.forEach(TenureClient::close);
        }
    }

    /** Waits for {@code count} more leaderships told after {@code since}, a minute plus 100 ms each at most; fails at once on a violation. */
    private void awaitTerms(int count, long since, String when) {
        long target = termsAfter(since) + count;
        Await.PROCESSES.until(() -> count + " leaderships " + when + " (at " + termsAfter(since) + " of " + target + ", "
                        + tally.lockTimeouts().get() + " campaigns not elected, unexpected " + tally.unexpected() + ")",
                PROGRESS_LIMIT.plusMillis(100L * count),
                () -> termsAfter(since) >= target || !tally.violations().isEmpty() || !register.violations().isEmpty());
        assertThat(tally.violations()).as("violations seen by the clients " + when).isEmpty();
        assertThat(register.violations()).as("violations seen by the register " + when).isEmpty();
    }

    private long termsAfter(long since) {
        return terms.stream().filter(t -> t.ackNanos() > since).count();
    }

    private static LeaderInfo leaderOrNull(TenureClient probe) {
        try {
            return probe.election(ELECTION).leader().orElseThrow(() -> new AssertionError("nobody leads " + ELECTION
                    + " after the kill, but a leadership was held across it"));
        } catch (UnavailableException e) {
            return null;
        }
    }

    /** Whether the observer saw leadership {@code token} and then someone else, or nobody, lead. */
    private boolean observedEndOf(long token) {
        boolean led = false;
        for (Seen seen : observed) {
            long now = seen.leader().map(LeaderInfo::fencingToken).orElse(0L);
            if (now == token) {
                led = true;
            } else if (led) {
                return true;
            }
        }
        return false;
    }

    private void checkClients() {
        assertThat(tally.unexpected()).as("unexpected client errors").isEmpty();
        assertThat(tally.violations()).as("violations seen by the clients").isEmpty();
        List<Term> unended = terms.stream().filter(t -> !ends.containsKey(t.token())).toList();
        assertThat(unended).as("leaderships neither resigned nor ended with a lost lease").isEmpty();
    }

    private void checkRegister() {
        assertThat(register.violations()).as("the register's violations (two trusted leaders at once, a trusted leader's read or"
                + " write refused, lost updates)").isEmpty();
        List<FencedReadWriteRegister.Write> writes = register.accepted();
        for (int i = 1; i < writes.size(); i++) {
            assertThat(writes.get(i).token()).as("accepted writes' tokens increase (one write a leadership)")
                    .isGreaterThan(writes.get(i - 1).token());
        }
        assertThat(register.value()).as("every accepted read-modify-write counted once (no lost update)").isEqualTo(writes.size());
    }

    /** A leadership held across a kill proclaimed after it and resigned, unless its lease was lost (which a long outage explains). */
    private void checkHeldAcrossKills(List<Term> held, List<Long> outages) {
        for (Term term : held) {
            if (ends.get(term.token()) == End.LEASE_LOST) {
                assertThat(outages.stream().mapToLong(Long::longValue).max().orElse(0)).as(term + " lost its lease")
                        .isGreaterThanOrEqualTo(FailoverChecks.explainsLossMillis(TTL));
                continue;
            }
            assertThat(ends.get(term.token())).as(term + " resigned").isEqualTo(End.RESIGNED);
            assertThat(proclaims).as("a proclaim of " + term + ", held across the kill").anyMatch(p -> p.token() == term.token());
        }
    }

    /**
     * The observer's view: no error; tokens never go back; every value it saw is one the leadership
     * of that token stood or proclaimed with (so no deposed leader's value after a newer leader's);
     * every leadership told and every acknowledged proclaim is among its events.
     */
    private String checkObserver() {
        assertThat(observerErrors).as("errors the observer was told of").isEmpty();
        Map<Long, Term> byToken = new HashMap<>();
        terms.forEach(t -> byToken.put(t.token(), t));
        long lastToken = 0;
        long lastRevision = -1;
        Set<Long> tokensSeen = new HashSet<>();
        Set<Long> untold = new HashSet<>();
        Map<Long, String> valueAtRevision = new HashMap<>();
        List<String> wrong = new ArrayList<>();
        for (Seen seen : observed) {
            if (seen.leader().isEmpty()) {
                continue;
            }
            LeaderInfo info = seen.leader().get();
            if (info.fencingToken() < lastToken) {
                wrong.add(info + " (" + info.valueAsString() + ") after token " + lastToken);
            }
            if (info.revision() <= lastRevision) {
                wrong.add(info + " at revision " + info.revision() + " after revision " + lastRevision);
            }
            lastToken = Math.max(lastToken, info.fencingToken());
            lastRevision = Math.max(lastRevision, info.revision());
            tokensSeen.add(info.fencingToken());
            valueAtRevision.put(info.revision(), info.valueAsString());
            String value = info.valueAsString();
            Term term = byToken.get(info.fencingToken());
            if (term == null) {
                // A leadership no client was told of: a campaign whose answer was lost, given back by the SDK.
                untold.add(info.fencingToken());
                if (!Long.valueOf(info.leaseId()).equals(campaignValues.get(value))) {
                    wrong.add(info + " with value '" + value + "', which no campaign of lease " + info.leaseId() + " stood with");
                }
            } else if (term.leaseId() != info.leaseId() || !term.client().equals(info.clientId())
                    || !(term.value().equals(value) || proclaimValues.getOrDefault(term.token(), Set.of()).contains(value))) {
                wrong.add(info + " with value '" + value + "', which is not " + term + "'s");
            }
        }
        assertThat(wrong).as("observed leaders out of order, or with a value not their leadership's").isEmpty();
        List<Term> unseen = terms.stream().filter(t -> !tokensSeen.contains(t.token())).toList();
        assertThat(unseen).as("leaderships told to a client that the observer never saw").isEmpty();
        List<Proclaimed> unseenProclaims = proclaims.stream().filter(p -> !p.value().equals(valueAtRevision.get(p.revision()))).toList();
        assertThat(unseenProclaims).as("acknowledged proclaims the observer did not see at their revision").isEmpty();
        return observed.size() + " observer events: " + tokensSeen.size() + " leaderships (" + untold.size()
                + " that no client was told of), " + proclaims.size() + " acknowledged proclaims, all in order";
    }

    /** After every client let go: a new campaign is elected at once, with a token above every token seen, and leads alone. */
    private Term lastCampaign(TenureClient probe) {
        try (WorkerLease worker = new WorkerLease(probe, "last", TTL, tally)) {
            Lease lease = Await.PROCESSES.value("a lease for the last campaign", PROGRESS_LIMIT, worker::valid);
            TenureElection election = probe.election(ELECTION, lease);
            campaignValues.put("last#1", lease.id());
            // Every token seen so far, before the campaign (the observer may see the new leader before the campaign returns).
            long highest = Math.max(terms.stream().mapToLong(Term::token).max().orElseThrow(), register.highestSeen());
            long highestObserved = observed.stream().flatMap(s -> s.leader().stream()).mapToLong(LeaderInfo::fencingToken).max().orElse(0);
            long sent = System.nanoTime();
            Leadership leading = election.campaign("last#1", CAMPAIGN_WAIT);
            Term last = new Term("last", leading.fencingToken(), lease.id(), "last#1", sent, System.nanoTime());
            assertThat(last.token()).as("the last leader's token").isGreaterThan(highest).isGreaterThan(highestObserved);
            terms.add(last);
            assertThat(election.leader()).as("the election's leader").hasValueSatisfying(info -> {
                assertThat(info.fencingToken()).isEqualTo(last.token());
                assertThat(info.leaseId()).isEqualTo(lease.id());
            });
            lead(worker, last, leading, new Random(1));
            assertThat(ends.get(last.token())).isEqualTo(End.RESIGNED);
            assertThat(election.leader()).as("nobody leads after the last leader resigned").isEmpty();
            return last;
        }
    }

    /** Leads: enters the register, reads, works, proclaims, writes the value read plus one, leaves, resigns. */
    private void lead(WorkerLease lease, Term term, Leadership leading, Random random) {
        register.enter(term.client(), LockMode.WRITE, term.token(), leading::isValid);
        try {
            if (pinWanted.get() && pinned.compareAndSet(null, term)) {
                pinWanted.set(false);
                awaitUnpin(term);
            }
            if (leading.isValid()) {
                OptionalLong value = register.read(term.client());
                if (value.isPresent()) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(random.nextInt(MAX_WORK_MILLIS + 1)));
                    if (proclaim(term, leading, term.value() + "@" + term.token())) {
                        register.write(term.client(), value.getAsLong() + 1);
                    }
                }
            }
        } finally {
            register.exit(term.client());
        }
        if (lease.resign(leading)) {
            ends.put(term.token(), leading.lease().isValid() ? End.RESIGNED : End.LEASE_LOST);
        }
    }

    /** The pinned leader waits for the kill to be over. */
    private void awaitUnpin(Term term) {
        try {
            if (!unpin.await(Cluster.ELECTION_LIMIT.plus(PROGRESS_LIMIT).toMillis(), TimeUnit.MILLISECONDS)) {
                tally.unexpected().add(term + " was held across a kill that did not end");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Proclaims {@code value}, again after UNAVAILABLE while the leadership is valid; whether it was acknowledged. */
    private boolean proclaim(Term term, Leadership leading, String value) {
        proclaimValues.computeIfAbsent(term.token(), t -> ConcurrentHashMap.newKeySet()).add(value);
        while (true) {
            try {
                long revision = leading.proclaim(value);
                proclaims.add(new Proclaimed(term.token(), value, revision, System.nanoTime()));
                return true;
            } catch (UnavailableException e) {
                tally.unavailable().incrementAndGet();
                if (!leading.isValid()) {
                    return false;
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
            } catch (NotHolderException | LeaseNotFoundException e) {
                if (leading.lease().isValid()) {
                    tally.violations().add(term + ": a proclaim was refused while the lease was valid (the server lost the leadership): "
                            + e);
                }
                return false;
            } catch (TenureException e) {
                tally.unexpected().add(term + " proclaim: " + e);
                return false;
            }
        }
    }

    /** One client: campaign with its lease, lead briefly ({@link #lead}), resign; again until stopped. */
    private final class Worker implements Runnable {
        private final String name;
        private final TenureClient client;
        private final Random random;
        private final WorkerLease lease;
        private int campaigns;

        Worker(String name, TenureClient client, Random random) {
            this.name = name;
            this.client = client;
            this.random = random;
            this.lease = new WorkerLease(client, name, TTL, tally);
        }

        @Override
        public void run() {
            lease.loop(stop, this::cycle);
        }

        private void cycle() {
            Lease held = lease.valid();
            if (held == null) {
                return;
            }
            String value = name + "#" + ++campaigns;
            campaignValues.put(value, held.id());
            long sent = System.nanoTime();
            // Not elected in time: withdrawn, stand again. UNAVAILABLE: the SDK withdrew (or gave back a leadership
            // that won the race), and the campaign is retried with the same lease and value.
            Leadership leading = lease.acquire(l -> client.election(ELECTION, l).campaign(value, CAMPAIGN_WAIT), stop, "campaign");
            if (leading == null) {
                return;
            }
            Term term = new Term(name, leading.fencingToken(), leading.lease().id(), value, sent, System.nanoTime());
            terms.add(term);
            lead(lease, term, leading, random);
        }
    }
}

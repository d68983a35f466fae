package io.tenure.it.safety;

import io.tenure.it.Cluster;
import io.tenure.testing.MemberProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The seeded schedule of faults. Faults run one at a time, in rounds: each round runs every
 * fault kind asked for once, in an order drawn from the seed; between two faults the cluster
 * gets 1-3 s of quiet and must have a leader. Rounds go on until the run's time is up, and at
 * least {@code minRounds} complete (so a short run still covers every kind). Each fault logs
 * its start and end to {@code nemesis.jsonl}.
 *
 * <p>A fault the harness could not carry out (no client held a lock, a member did not come
 * back) is a <em>problem</em>, reported apart from safety violations; everything is healed and
 * the schedule goes on.
 */
final class Nemesis implements AutoCloseable {
    private final Lab lab;
    private final MemberFaults members;
    private final ClientFaults clients;
    private final SnapshotFault snapshots;
    private final Optional<Path> libfaketime = ClockSkew.library();
    final List<String> problems = new CopyOnWriteArrayList<>();
    /** Fault kinds asked for but not run, and why. */
    final Map<String, String> skipped = new LinkedHashMap<>();

    Nemesis(Lab lab) {
        this.lab = lab;
        this.members = new MemberFaults(lab);
        this.clients = new ClientFaults(lab);
        this.snapshots = new SnapshotFault(lab);
    }

    ClientFaults clients() {
        return clients;
    }

    /** The fault kinds that can run here, noting the others in {@link #skipped}. */
    List<Fault> runnable() {
        List<Fault> kinds = new ArrayList<>();
        for (Fault fault : EnumSet.copyOf(lab.config.faults())) {
            if (fault == Fault.F11 && !lab.cluster.hasPeerProxies()) {
                skipped.put(fault.name(), "F11 not available on this run (the members have no peer proxies)");
            } else if (fault.needsNetwork() && lab.network == null) {
                skipped.put(fault.name(), "F6 not available on this run (no NetworkFaults implementation)");
            } else if (fault == Fault.F8 && libfaketime.isEmpty()) {
                skipped.put(fault.name(), "libfaketime not installed (Debian package faketime)");
            } else {
                kinds.add(fault);
            }
        }
        skipped.forEach((fault, why) -> System.out.println("nemesis: " + fault + " skipped: " + why));
        return kinds;
    }

    /** Runs rounds of faults until {@code deadlineNanos} and at least {@code minRounds} rounds are done. */
    void run(long deadlineNanos) {
        List<Fault> kinds = runnable();
        if (kinds.isEmpty()) {
            Waits.untilTime(deadlineNanos);
            return;
        }
        for (int round = 1; round <= lab.config.minRounds() || System.nanoTime() - deadlineNanos < 0; round++) {
            List<Fault> order = new ArrayList<>(kinds);
            Collections.shuffle(order, lab.random);
            for (Fault fault : order) {
                if (round > lab.config.minRounds() && System.nanoTime() - deadlineNanos >= 0) {
                    return;
                }
                quiet();
                inject(fault);
            }
        }
    }

    private void quiet() {
        Waits.untilTime(System.nanoTime() + lab.between(Duration.ofSeconds(1), Duration.ofSeconds(3)).toNanos());
        try {
            lab.cluster.awaitLeader(Cluster.ELECTION_LIMIT);
        } catch (AssertionError | RuntimeException e) {
            problems.add("no leader between faults: " + e.getMessage());
            healAll();
        }
    }

    private void inject(Fault fault) {
        try {
            switch (fault) {
                case F1 -> members.killLeaderLoop();
                case F2 -> members.killRandom();
                case F3 -> members.killAll();
                case F4 -> members.pauseLeader();
                case F5 -> clients.pauseHolder();
                case F6 -> partitions();
                case F7 -> clients.partitionHolder();
                case F8 -> members.skewClock(libfaketime.orElseThrow());
                case F9 -> members.changeMembership();
                case F10 -> snapshots.run();
                case F11 -> delays();
            }
        } catch (Exception | AssertionError e) {
            String problem = fault + " could not be carried out: " + e;
            problems.add(problem);
            System.out.println("nemesis: " + problem);
            healAll();
            lab.log.endIfOpen(fault, "aborted (" + e + "); everything healed", System.nanoTime());
        }
    }

    /** F6 (through {@link NetworkFaults}): isolate the leader, isolate a follower, a bridge around the leader; each healed. */
    private void partitions() {
        String leader = lab.cluster.leader();
        network(Fault.F6, leader, "isolate the leader", () -> lab.network.isolate(leader), lab.network::heal, leader);
        String follower = lab.pick(lab.cluster.followers());
        network(Fault.F6, follower, "isolate a follower", () -> lab.network.isolate(follower), lab.network::heal, follower);
        List<String> names = new ArrayList<>(lab.cluster.names());
        String middle = lab.cluster.leader();
        names.remove(middle);
        Collections.shuffle(names, lab.random);
        network(Fault.F6, names.get(0) + "," + middle + "," + names.get(1), "bridge: " + names.get(0) + " and " + names.get(1)
                + " reach only " + middle, () -> lab.network.bridge(names.get(0), middle, names.get(1)), lab.network::heal, null);
    }

    /** F11 (through the members' peer proxies): delay and loss on a random member's peer links. */
    private void delays() {
        String target = lab.pick(lab.cluster.names());
        Duration delay = lab.between(Duration.ofMillis(20), lab.electionTimeout());
        double loss = lab.random.nextInt(11) / 100.0;
        // Through the member's own peer proxy: every peer connection into it, both ways.
        network(Fault.F11, target, "delay " + delay.toMillis() + " ms, loss " + (int) (loss * 100)
                        + "% on every peer link into it (its peer proxy; a lost chunk waits 200 ms more)",
                () -> unchecked(() -> lab.cluster.peerProxies().delay(target, delay, loss)),
                () -> unchecked(() -> lab.cluster.peerProxies().heal(target)), null);
    }

    private static void unchecked(Step step) {
        try {
            step.run();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Applies a network fault, holds it, heals it. When {@code minority} is a member cut off from
     * the majority, it is probed once the majority had time to elect (two election timeouts and a
     * second): it must serve neither a linearizable read nor a write.
     */
    private void network(Fault fault, String target, String what, Runnable apply, Runnable heal, String minority) {
        Duration hold = lab.between(lab.electionTimeout().multipliedBy(5), lab.ttl().plusSeconds(2));
        long at = System.nanoTime();
        apply.run();
        lab.log.start(fault, target, what + " for " + hold.toMillis() + " ms", at);
        if (minority != null) {
            Waits.untilTime(at + lab.electionTimeout().multipliedBy(2).plusSeconds(1).toNanos());
            long probeAt = System.nanoTime();
            String answer = MinorityProbe.probe(lab.cluster, lab.cluster.member(minority).endpoint(), Duration.ofSeconds(2), lab.ttl());
            lab.log.probe(fault, minority, answer, probeAt);
        }
        Waits.untilTime(at + hold.toNanos());
        long healAt = System.nanoTime();
        heal.run();
        long recovered = lab.awaitLeader(healAt);
        lab.log.end(fault, target, "healed; a leader agreed " + recovered + " ms after", healAt);
    }

    /** Undoes every fault in force: resumes paused processes, heals links and the network, restarts dead or skewed members. */
    void healAll() {
        for (String member : Set.copyOf(lab.pausedMembers)) {
            attempt("resume " + member, () -> lab.signalMember(member, "CONT"));
            lab.pausedMembers.remove(member);
        }
        for (String client : Set.copyOf(lab.pausedClients)) {
            attempt("resume client " + client, () -> lab.signalClient(client, "CONT"));
            lab.pausedClients.remove(client);
        }
        lab.links.healAll();
        if (lab.network != null) {
            attempt("heal the network", lab.network::heal);
        }
        if (lab.cluster.hasPeerProxies()) {
            for (String member : lab.everMembers) {
                if (lab.cluster.peerProxies().has(member)) {
                    attempt("heal the peer links of " + member, () -> lab.cluster.peerProxies().heal(member));
                }
            }
        }
        for (String member : Set.copyOf(lab.skewedMembers)) {
            attempt("restart " + member + " with the true clock", () -> {
                MemberProcess process = lab.cluster.member(member);
                process.kill9();
                process.environment(Map.of());
            });
            lab.skewedMembers.remove(member);
        }
        attempt("restart the dead members", () -> lab.relaunch(lab.cluster.names()));
        attempt("agree on a leader", () -> lab.cluster.awaitLeader(Cluster.ELECTION_LIMIT));
    }

    interface Step {
        void run() throws Exception;
    }

    private void attempt(String what, Step step) {
        try {
            step.run();
        } catch (Exception | AssertionError e) {
            problems.add("healing: could not " + what + ": " + e);
        }
    }

    @Override
    public void close() {
        snapshots.close();
    }
}

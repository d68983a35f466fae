package io.tenure.it.safety;

import io.tenure.it.Cluster;
import io.tenure.testing.MemberProcess;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The running parts of a safety run, as the nemesis sees them: the cluster, the client processes
 * and their links, the fenced resource, the run's settings and its seeded random. Also what is
 * currently broken, so that {@link Nemesis#healAll()} can undo it.
 */
final class Lab {
    final SafetyConfig config;
    final Path runDir;
    final Cluster cluster;
    final ClientLinks links;
    final FencedResource resource;
    final NemesisLog log;
    final Random random;
    final NetworkFaults network; // null: F6 and F11 are skipped
    final Signals signals;
    /** Client process name → its process; and its role. */
    final Map<String, Process> clients = new LinkedHashMap<>();
    final Map<String, String> roles = new LinkedHashMap<>();
    /** Every member that ever took part, in order of creation. */
    final List<String> everMembers = new ArrayList<>();
    /** What is broken right now. */
    final Set<String> pausedMembers = ConcurrentHashMap.newKeySet();
    final Set<String> pausedClients = ConcurrentHashMap.newKeySet();
    final Set<String> skewedMembers = ConcurrentHashMap.newKeySet();

    Lab(SafetyConfig config, Path runDir, Cluster cluster, ClientLinks links, FencedResource resource, NemesisLog log,
        NetworkFaults network, Signals signals) {
        this.config = config;
        this.runDir = runDir;
        this.cluster = cluster;
        this.links = links;
        this.resource = resource;
        this.log = log;
        this.network = network;
        this.signals = signals;
        this.random = new Random(config.seed());
        everMembers.addAll(cluster.names());
    }

    Duration ttl() {
        return config.ttl();
    }

    Duration electionTimeout() {
        return config.electionTimeout();
    }

    /** A set duration between {@code min} and {@code max}, drawn from the run's seeded random. */
    Duration between(Duration min, Duration max) {
        long span = max.toMillis() - min.toMillis();
        return min.plusMillis(span <= 0 ? 0 : (long) (random.nextDouble() * span));
    }

    <T> T pick(List<T> from) {
        return from.get(random.nextInt(from.size()));
    }

    List<String> lockClients() {
        return roles.entrySet().stream().filter(e -> e.getValue().equals("lock")).map(Map.Entry::getKey).toList();
    }

    /** SIGSTOP or SIGCONT of a client process. */
    void signalClient(String name, String signal) throws IOException {
        signals.send(signal, clients.get(name).pid());
    }

    /** SIGSTOP or SIGCONT of a member. */
    void signalMember(String name, String signal) throws IOException {
        signals.send(signal, cluster.member(name).pid());
    }

    /** Starts every named member that is not running, then waits until each serves and a leader is agreed. */
    /**
     * Starts the members again and waits until each serves clients (its process is back: the
     * fault is healed); returns that moment. A leader may not be agreed yet: the checker's
     * liveness bound (two election timeouts and a second) counts from here.
     */
    long relaunch(List<String> names) throws IOException {
        for (String name : names) {
            MemberProcess member = cluster.member(name);
            if (!member.isAlive()) {
                member.launch();
            }
        }
        for (String name : names) {
            cluster.member(name).awaitServing(Cluster.START_LIMIT, false);
        }
        return System.nanoTime();
    }

    /** Waits for a leader agreed by a majority; how long it took, in ms. */
    long awaitLeader(long sinceNanos) {
        cluster.awaitLeader(Cluster.ELECTION_LIMIT);
        return Waits.millisSince(sinceNanos);
    }
}

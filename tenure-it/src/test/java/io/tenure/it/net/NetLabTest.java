package io.tenure.it.net;

import io.tenure.client.LockDescription;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import io.tenure.client.UnavailableException;
import io.tenure.it.net.EchoAgent.Outcome;
import io.tenure.it.net.EchoAgent.Probe;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.testing.Await;
import io.tenure.testing.ChildJava;
import io.tenure.testing.MemberProcess;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@link NetLab} with real processes: echo agents in each namespace show which links carry
 * traffic under each partition; real {@code tenure server} members show that an isolated leader
 * is replaced and serves nothing until healed. Skipped, loudly, only where {@link NetLab#probe()}
 * says the machine cannot (not root, no iptables, ...); every wait has a deadline.
 */
class NetLabTest {
    static final int ECHO_PORT = 7500;
    static final Duration START_LIMIT = Duration.ofSeconds(120);
    static final Duration ELECTION_LIMIT = Duration.ofSeconds(60);
    /** A link that is up answers within this (retried until then: the machine is busy). */
    static final Duration UP_LIMIT = Duration.ofSeconds(20);
    /** A cut link must not answer within this: DROP gives no answer at all, so any wait shows it. */
    static final Duration CUT_PROBE = Duration.ofMillis(1500);
    private static final Pattern LAB_PREFIX = Pattern.compile("tnr-\\d+-");

    @BeforeAll
    static void sayWhatThisMachineCanDo() {
        System.out.println("NetLabTest: " + NetLab.probe().describe());
    }

    /** Skips with a loud message when the machine cannot partition; never passes silently. */
    static void requirePartitions() {
        Availability can = NetLab.probe();
        if (!can.partitions()) {
            String message = "!!! NETWORK FAULTS (F6) NOT TESTED on this machine: " + can.partitionsWhy();
            System.err.println(message);
            Assumptions.abort(message);
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void partitionsCutExactlyTheChosenLinksAndHealRestoresEveryOne() throws Exception {
        requirePartitions();
        String rootRulesBefore = rootRules();
        String prefix;
        try (NetLab lab = NetLab.create(3)) {
            prefix = lab.prefix();
            assertThat(NetLab.leftovers(prefix)).contains("interface " + prefix + "br", "namespace " + prefix + "n1",
                    "namespace " + prefix + "n3", "interface " + prefix + "v2");
            Map<String, EchoAgent.Handle> agents = new LinkedHashMap<>();
            try {
                for (String member : lab.members()) {
                    agents.put(member, EchoAgent.Handle.start(lab, member, ECHO_PORT, START_LIMIT));
                }
                assertLinks(lab, agents, Set.of());

                lab.isolate("n1");
                assertLinks(lab, agents, Set.of(Set.of("n1", "n2"), Set.of("n1", "n3")));
                assertThat(lab.rules("n1")).contains("-A INPUT -s " + lab.address("n2") + "/32 -j DROP",
                        "-A OUTPUT -d " + lab.address("n3") + "/32 -j DROP");

                lab.bridge("n1", "n2", "n3");
                assertLinks(lab, agents, Set.of(Set.of("n1", "n3")));

                lab.partition(Set.of("n1", "n2"), Set.of("n3"));
                assertLinks(lab, agents, Set.of(Set.of("n1", "n3"), Set.of("n2", "n3")));

                lab.heal();
                assertThat(lab.cuts()).isEmpty();
                assertThat(lab.rules("n1")).doesNotContain("DROP");
                assertLinks(lab, agents, Set.of());
            } finally {
                agents.values().forEach(EchoAgent.Handle::close);
            }
        }
        assertThat(NetLab.leftovers(prefix)).as("what close() left of " + prefix).isEmpty();
        assertThat(rootRules()).as("the root namespace's rules").isEqualTo(rootRulesBefore);
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void creationThatFailsHalfWayLeavesNothingBehind() throws Exception {
        requirePartitions();
        // 3 steps for the bridge, 8 per member: fail after the alias, inside each member, and before the last step.
        for (int failAfter : new int[] {1, 3, 5, 14, 26}) {
            IOException failure = null;
            try (NetLab unexpected = NetLab.create(List.of("n1", "n2", "n3"), failAfter)) {
                throw new AssertionError("created " + unexpected + " although told to fail after " + failAfter + " steps");
            } catch (IOException e) {
                failure = e;
            }
            assertThat(failure).hasMessageContaining("failing on purpose after " + failAfter);
            Matcher prefix = LAB_PREFIX.matcher(failure.getMessage());
            assertThat(prefix.find()).as("a lab prefix in: " + failure.getMessage()).isTrue();
            assertThat(NetLab.leftovers(prefix.group())).as("left after failing at step " + (failAfter + 1)).isEmpty();
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void theShutdownHookTearsTheLabDownWhenItsJvmEnds() throws Exception {
        requirePartitions();
        Process holder = startHolder();
        try {
            String prefix = awaitReady(holder);
            assertThat(NetLab.leftovers(prefix)).contains("interface " + prefix + "br", "namespace " + prefix + "n2");
            holder.destroy(); // SIGTERM: the JVM runs its shutdown hooks
            assertThat(holder.waitFor(60, TimeUnit.SECONDS)).as("the holder JVM ends within 60 s of SIGTERM").isTrue();
            assertThat(NetLab.leftovers(prefix)).as("what the shutdown hook left").isEmpty();
        } finally {
            holder.destroyForcibly();
            holder.waitFor(60, TimeUnit.SECONDS);
            NetLab.sweepStale(); // should the hook have failed: its owner is dead now
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aLabLeftByAKilledJvmIsSweptAndLiveLabsAreNot() throws Exception {
        requirePartitions();
        Process holder = startHolder();
        String prefix = null;
        try (NetLab mine = NetLab.create(1)) {
            prefix = awaitReady(holder);
            holder.destroyForcibly(); // SIGKILL: no shutdown hook runs
            assertThat(holder.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(NetLab.leftovers(prefix)).as("a killed JVM's lab stays").isNotEmpty();

            List<String> swept = NetLab.sweepStale();

            assertThat(swept).contains(prefix).doesNotContain(mine.prefix());
            assertThat(NetLab.leftovers(prefix)).isEmpty();
            assertThat(NetLab.leftovers(mine.prefix())).isNotEmpty();
        } finally {
            holder.destroyForcibly();
            if (prefix != null) {
                NetLab.teardown(Integer.parseInt(prefix.split("-")[1])); // should the assertions above have failed
            }
        }
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void withoutNetemDelayFailsClearlyInsteadOfDoingNothing() throws Exception {
        requirePartitions();
        Assumptions.assumeFalse(NetLab.probe().delay(), "netem works here: delayAndLossSlowAndDropAMembersPackets covers delay");
        try (NetLab lab = NetLab.create(1)) {
            assertThatThrownBy(() -> lab.delay("n1", Duration.ofMillis(100), Duration.ZERO, 0))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("netem");
            lab.clearDelay("n1"); // nothing to clear, and no error
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void delayAndLossSlowAndDropAMembersPackets() throws Exception {
        requirePartitions();
        Availability can = NetLab.probe();
        if (!can.delay()) {
            String message = "!!! DELAY AND LOSS (F11) NOT TESTED on this machine: " + can.delayWhy();
            System.err.println(message);
            Assumptions.abort(message);
        }
        Duration delay = Duration.ofMillis(300);
        try (NetLab lab = NetLab.create(2);
             EchoAgent.Handle n1 = EchoAgent.Handle.start(lab, "n1", ECHO_PORT, START_LIMIT);
             EchoAgent.Handle n2 = EchoAgent.Handle.start(lab, "n2", ECHO_PORT, START_LIMIT)) {
            awaitUp("root -> n1", () -> EchoAgent.probe(lab.address("n1"), ECHO_PORT, CUT_PROBE));

            lab.delay("n1", delay, Duration.ZERO, 0);
            // The SYN-ACK and the echo both leave n1: at least one delay per probe, whatever else is slow.
            assertThat(timedProbe(() -> EchoAgent.probe(lab.address("n1"), ECHO_PORT, Duration.ofSeconds(10))))
                    .as("root -> n1 with n1 delayed").isGreaterThanOrEqualTo(delay.toMillis());
            assertThat(timedProbe(() -> n1.probe(lab.address("n2"), ECHO_PORT, Duration.ofSeconds(10))))
                    .as("n1 -> n2 with n1 delayed").isGreaterThanOrEqualTo(delay.toMillis());

            lab.delay("n1", Duration.ZERO, Duration.ZERO, 100);
            assertThat(EchoAgent.probe(lab.address("n1"), ECHO_PORT, CUT_PROBE).outcome()).as("root -> n1 with 100% loss")
                    .isEqualTo(Outcome.BLOCKED);

            lab.clearDelay("n1");
            awaitUp("root -> n1 after clearDelay", () -> EchoAgent.probe(lab.address("n1"), ECHO_PORT, CUT_PROBE));
            Duration fast = Duration.ofMillis(delay.toMillis() / 2);
            await("a root -> n1 round trip under " + fast.toMillis() + " ms once the delay is cleared", UP_LIMIT, () -> {
                long start = System.nanoTime();
                Probe probe = EchoAgent.probe(lab.address("n1"), ECHO_PORT, CUT_PROBE);
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                return probe.outcome() == Outcome.OK && ms < fast.toMillis() ? ms : null;
            });
        }
    }

    /**
     * F6 with real members: the isolated leader is replaced by one of the other two, the majority
     * takes writes, the isolated member (still reachable from clients) grants nothing and answers
     * no linearizable read, and once healed it follows the new leader and has its writes.
     */
    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void anIsolatedLeaderIsReplacedServesNothingAndRejoinsWhenHealed(@TempDir Path work) throws Exception {
        requirePartitions();
        try (NetLab lab = NetLab.create(3)) {
            List<MemberProcess> members = NetMember.cluster(lab, work, List.of());
            Thread stopOnExit = new Thread(() -> members.forEach(MemberProcess::beginClose), "netlab-test-members-cleanup");
            Runtime.getRuntime().addShutdownHook(stopOnExit);
            try {
                for (MemberProcess member : members) {
                    member.launch();
                }
                for (MemberProcess member : members) {
                    member.awaitServing(START_LIMIT, true);
                }
                String leader = awaitLeader(members, null);
                MemberProcess old = member(members, leader);
                List<String> majority = members.stream().filter(m -> m != old).map(MemberProcess::endpoint).collect(Collectors.toList());

                long before;
                try (TenureClient client = client(members.stream().map(MemberProcess::endpoint).collect(Collectors.toList()), Duration.ofSeconds(10));
                     LockHandle lock = client.lock("netlab/before").acquire(Duration.ofSeconds(30))) {
                    before = lock.fencingToken();
                }

                long isolatedAt = System.nanoTime();
                lab.isolate(leader);
                String next = awaitLeader(members, leader);
                System.out.printf("NetLabTest: isolated leader %s; %s leads after %d ms%n", leader, next, Await.millisSince(isolatedAt));
                assertThat(tcpConnects(old.endpoint())).as("clients still reach the isolated " + leader).isTrue();

                try (TenureClient client = client(majority, Duration.ofSeconds(20));
                     LockHandle during = client.lock("netlab/during").acquire(Duration.ofSeconds(30))) {
                    assertThat(during.fencingToken()).as("a grant through the majority, after " + before).isGreaterThan(before);

                    try (TenureClient minority = client(List.of(old.endpoint()), Duration.ofSeconds(5))) {
                        Throwable write = catchThrowable(() -> minority.grantLease(Duration.ofSeconds(30)));
                        System.out.println("NetLabTest: a write sent only to the isolated " + leader + ": " + write);
                        assertThat(write).as("a write sent only to the isolated " + leader).isInstanceOf(UnavailableException.class);
                        Throwable read = catchThrowable(() -> minority.describe("netlab/during"));
                        System.out.println("NetLabTest: a linearizable read from the isolated " + leader + ": " + read);
                        assertThat(read).as("a linearizable read from the isolated " + leader).isInstanceOf(UnavailableException.class);
                    }

                    long healedAt = System.nanoTime();
                    lab.heal();
                    long commit = await("the commit index of " + next, ELECTION_LIMIT, () -> {
                        StatusResponse status = member(members, next).statusOrNull();
                        return status == null ? null : status.getCommitIndex();
                    });
                    await(leader + " follows " + next + " and applies up to " + commit + " after the heal", START_LIMIT, () -> {
                        StatusResponse status = old.statusOrNull();
                        return status != null && status.getLeader().equals(next) && status.getAppliedIndex() >= commit ? status : null;
                    });
                    System.out.printf("NetLabTest: healed; %s follows %s and caught up after %d ms%n", leader, next, Await.millisSince(healedAt));
                    try (TenureClient rejoined = client(List.of(old.endpoint()), Duration.ofSeconds(20))) {
                        LockDescription seen = rejoined.describe("netlab/during");
                        assertThat(seen.held()).as("the lock granted during the partition, read through " + leader).isTrue();
                        assertThat(seen.fencingToken()).isEqualTo(during.fencingToken());
                    }
                }
            } catch (Throwable failure) {
                for (MemberProcess member : members) {
                    System.out.println("----- last 40 lines of " + member.logFile() + "\n" + member.tail(40));
                }
                throw failure;
            } finally {
                for (MemberProcess member : members) {
                    member.close();
                }
                try {
                    Runtime.getRuntime().removeShutdownHook(stopOnExit);
                } catch (IllegalStateException shuttingDown) {
                    // The hook runs anyway.
                }
            }
        }
    }

    // ---- links ---------------------------------------------------------------------------

    /** Every member pair in {@code cut} gives no answer both ways; every other pair, and the root to each member, echoes. */
    private static void assertLinks(NetLab lab, Map<String, EchoAgent.Handle> agents, Set<Set<String>> cut) throws IOException {
        assertThat(lab.cuts()).isEqualTo(cut);
        for (String to : lab.members()) {
            awaitUp("root -> " + to, () -> EchoAgent.probe(lab.address(to), ECHO_PORT, CUT_PROBE));
        }
        for (String from : lab.members()) {
            for (String to : lab.members()) {
                if (from.equals(to)) {
                    continue;
                }
                EchoAgent.Handle agent = agents.get(from);
                String link = from + " -> " + to + " (cut: " + cut + ")";
                if (cut.contains(Set.of(from, to))) {
                    Probe probe = agent.probe(lab.address(to), ECHO_PORT, CUT_PROBE);
                    assertThat(probe.outcome()).as(link + ": " + probe.detail()).isEqualTo(Outcome.BLOCKED);
                } else {
                    awaitUp(link, () -> {
                        try {
                            return agent.probe(lab.address(to), ECHO_PORT, CUT_PROBE);
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    });
                }
            }
        }
    }

    /** Waits until a probe echoes; fails with the last outcome when {@link #UP_LIMIT} passes. */
    private static void awaitUp(String link, Supplier<Probe> probe) {
        Probe[] last = new Probe[1];
        try {
            await(link + " echoes", UP_LIMIT, () -> {
                last[0] = probe.get();
                return last[0].outcome() == Outcome.OK ? last[0] : null;
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last probe: " + last[0], e);
        }
    }

    private interface ProbeCall {
        Probe call() throws IOException;
    }

    /** Milliseconds one echo took; fails unless it echoed. */
    private static long timedProbe(ProbeCall call) throws IOException {
        long start = System.nanoTime();
        Probe probe = call.call();
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(probe.outcome()).as(probe.detail()).isEqualTo(Outcome.OK);
        return ms;
    }

    private static boolean tcpConnects(String endpoint) {
        String[] hostPort = endpoint.split(":");
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1])), 5_000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The root namespace's iptables rules (no comments, which carry timestamps), to show the lab never touches them. */
    private static String rootRules() {
        String iptables = NetLab.probe().iptables();
        return Commands.run(List.of(iptables + "-save")).output().lines().filter(l -> !l.startsWith("#"))
                .collect(Collectors.joining("\n"));
    }

    // ---- the holder JVM ------------------------------------------------------------------

    private static Process startHolder() throws IOException {
        List<String> java = new ArrayList<>(ChildJava.command("-Xmx64m", LabHolder.class.getName()));
        java.add("2");
        return new ProcessBuilder(java).redirectErrorStream(true).start();
    }

    /** Reads the holder's output until it prints {@code ready PREFIX}; returns the prefix. */
    private static String awaitReady(Process holder) throws Exception {
        CompletableFuture<String> ready = CompletableFuture.supplyAsync(() -> {
            StringBuilder seen = new StringBuilder();
            try {
                BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
                String line;
                while ((line = out.readLine()) != null) {
                    if (line.startsWith("ready ")) {
                        return line.substring("ready ".length()).trim();
                    }
                    seen.append(line).append('\n');
                }
            } catch (IOException e) {
                seen.append(e);
            }
            throw new IllegalStateException("the lab holder ended before it was ready:\n" + seen);
        });
        return ready.get(START_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    // ---- members -------------------------------------------------------------------------

    private static MemberProcess member(List<MemberProcess> members, String name) {
        return members.stream().filter(m -> m.name().equals(name)).findFirst().orElseThrow();
    }

    /**
     * Waits until a member other than {@code not} says it leads and a majority name it leader in
     * the same term (members that do not answer within 2 s count against it); returns its name.
     */
    private static String awaitLeader(List<MemberProcess> members, String not) {
        return await("a leader agreed by a majority" + (not == null ? "" : ", not " + not), not == null ? START_LIMIT : ELECTION_LIMIT, () -> {
            Map<String, StatusResponse> answers = new LinkedHashMap<>();
            for (MemberProcess member : members) {
                StatusResponse status = member.statusOrNull();
                if (status != null) {
                    answers.put(member.name(), status);
                }
            }
            for (Map.Entry<String, StatusResponse> self : answers.entrySet()) {
                StatusResponse status = self.getValue();
                if (self.getKey().equals(not) || !self.getKey().equals(status.getLeader())) {
                    continue;
                }
                long agreeing = answers.values().stream()
                        .filter(s -> s.getLeader().equals(self.getKey()) && s.getRaftTerm() == status.getRaftTerm()).count();
                if (agreeing >= members.size() / 2 + 1) {
                    return self.getKey();
                }
            }
            return null;
        });
    }

    private static TenureClient client(List<String> endpoints, Duration requestTimeout) {
        return TenureClient.builder().endpoints(endpoints).requestTimeout(requestTimeout).clientId("netlab-test").build();
    }

    private static <T> T await(String what, Duration limit, Supplier<T> probe) {
        return Await.PROCESSES.value(what, limit, probe);
    }
}

package io.tenure.it.safety;

import io.tenure.it.Cluster;
import io.tenure.testing.ChildJava;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A safety run (issue 6): real {@code tenure server} members, client processes
 * ({@link SafetyWorker}) doing fenced read-modify-writes under locks, fenced writes under semaphores and as elections'
 * leaders, keeping leases and
 * watching, the fenced resource they share ({@link FencedResource}), and the seeded
 * {@link Nemesis}; everything recorded in a run directory for the checker:
 *
 * <pre>
 * runDir/
 *   run.json                    {@link RunInfo}
 *   history/&lt;process&gt;.jsonl     an {@link Op} per line, per client process (and the F10 filler)
 *   resource.jsonl              a {@link ResourceWrite} per line: every accept and refusal, in order
 *   permits.jsonl               a {@link PermitDecision} per line: the semaphores' writes, ends and displacements, in order
 *   leaders.jsonl               a {@link PermitDecision} per line: the same for the elections' leaders (one permit each)
 *   ranges.jsonl                a {@link RangeDecision} per line: the range writers' writes, ends and displacements, in order
 *   nemesis.jsonl               a {@link NemesisEvent} per line: each fault's start and end
 *   members/&lt;name&gt;/audit.jsonl  the member's applied commands (the server's --audit-log; on unless --auditLog false)
 *   members/&lt;name&gt;/member.log   the member's output; members/&lt;name&gt;/data its data directory
 *   clients/&lt;process&gt;.log       the client process's output
 *   harness.md                  the harness's own findings and figures ({@link HarnessChecks})
 * </pre>
 *
 * Usable from a test ({@link #run}) and from the command line ({@link #main}; see
 * {@code tenure-it.sh} and {@link SafetyConfig} for the options). Every process it starts is
 * stopped when it ends, also on failure, and by a shutdown hook should the JVM end first.
 */
public final class SafetyRun {
    /** The hot keys: few, so that lock workers contend. */
    public static final List<String> KEYS = List.of("safety/k0", "safety/k1");
    /**
     * The semaphore every lock worker also takes permits of (1 to its limit at a time, beside its
     * lock cycles; {@link SemaphoreWorker}): one name, so that the workers contend, wait in its
     * queue and hold it together.
     */
    public static final Map<String, Integer> SEMAPHORES = Map.of("safety/s0", 3);
    /**
     * The election every lock worker also campaigns in (lead, write, proclaim, resign, beside its
     * lock cycles; {@link ElectionWorker}): one name, so that the workers stand in line for it.
     */
    public static final List<String> ELECTIONS = List.of("safety/e0");
    /**
     * The inode every lock worker's range writer writes byte ranges of under lock scopes ({@link RangeWorker},
     * issue 21): one small file, so that the writers' ranges collide often.
     */
    public static final long RANGE_INODE = 7;
    /** The counter every lock worker also increments ({@link CounterWorker}); read after the run into {@value #COUNTERS_FILE}. */
    public static final String COUNTER = "safety/n0";
    public static final String COUNTERS_FILE = "counters.json";
    /** Heap of each client process. */
    static final String CLIENT_HEAP = "-Xmx128m";
    static final Duration CLIENT_START_LIMIT = Duration.ofSeconds(120);

    /**
     * What a run did.
     *
     * @param problems what the harness could not do (a fault not carried out, no progress after the heal): not safety violations
     */
    public record Result(Path runDir, SafetyConfig config, Map<Fault, Integer> faults, Map<String, String> skipped,
                         List<String> problems, List<ClientFaults.PauseOutcome> pauses,
                         List<ClientFaults.PartitionOutcome> partitions, long progressAfterHealMillis,
                         HarnessChecks.Findings findings) {
    }

    private SafetyRun() {
    }

    /**
     * Runs with the {@link NetworkFaults} named by {@code -Dtenure.safety.networkFaults}, or else,
     * when F6 is asked for and this machine can, with the members in network namespaces
     * ({@link NamespaceNetwork}). F11 needs none: it goes through the members' peer proxies.
     */
    public static Result run(SafetyConfig config) throws Exception {
        NetworkFaults network = networkFaultsFromProperty();
        if (network == null && config.faults().contains(Fault.F6)) {
            if (NamespaceNetwork.available()) {
                network = NamespaceNetwork.create(config.members());
            } else {
                System.out.println("safety run: F6 needs network namespaces, which this machine cannot make: "
                        + NamespaceNetwork.unavailableWhy());
            }
        }
        return run(config, network);
    }

    /** Runs with {@code network} (null: F6 and F11 are skipped). */
    public static Result run(SafetyConfig config, NetworkFaults network) throws Exception {
        Path runDir = config.runDir();
        if (Files.exists(runDir.resolve(RunInfo.FILE))) {
            throw new IOException(runDir + " already holds a run");
        }
        for (String sub : List.of("history", "members", "clients")) {
            Files.createDirectories(runDir.resolve(sub));
        }
        List<AutoCloseable> toClose = new ArrayList<>();
        Map<String, Process> clients = new LinkedHashMap<>();
        Thread killOnExit = new Thread(() -> clients.values().forEach(Process::destroyForcibly), "safety-clients-cleanup");
        Runtime.getRuntime().addShutdownHook(killOnExit);
        try {
            return runIn(config, network, runDir, clients, toClose);
        } finally {
            stopClients(clients);
            for (int i = toClose.size() - 1; i >= 0; i--) {
                try {
                    toClose.get(i).close();
                } catch (Exception e) {
                    System.err.println("safety run: closing " + toClose.get(i) + ": " + e);
                }
            }
            if (network != null) {
                network.close();
            }
            try {
                Runtime.getRuntime().removeShutdownHook(killOnExit);
            } catch (IllegalStateException exiting) {
                // the JVM is ending; the hook runs anyway
            }
        }
    }

    private static Result runIn(SafetyConfig config, NetworkFaults network, Path runDir, Map<String, Process> clients,
                                List<AutoCloseable> toClose) throws Exception {
        FencedResource resource = new FencedResource(runDir.resolve("resource.jsonl"), config.fence(), runDir.resolve("permits.jsonl"),
                SEMAPHORES, runDir.resolve("leaders.jsonl"), ELECTIONS, config.ranges() ? runDir.resolve("ranges.jsonl") : null,
                config.ranges() ? RANGE_INODE : 0);
        toClose.add(resource);
        SecuredRun secured = config.secured() ? SecuredRun.create(runDir) : null;
        io.tenure.it.Placement placement = network instanceof io.tenure.it.Placement p ? p : io.tenure.it.Placement.LOOPBACK;
        Cluster.Options options = clusterOptions(config, runDir, placement, secured);
        Cluster cluster = Cluster.start(runDir.resolve("members"), options);
        toClose.add(cluster);
        if (secured != null) {
            secured.switchOn(cluster.endpoints());
        }
        ClientLinks links = new ClientLinks(config.members() + 1);
        toClose.add(links);
        for (String name : cluster.names()) {
            links.assign(name, cluster.member(name).host(), cluster.member(name).clientPort());
        }
        NemesisLog log = new NemesisLog(runDir.resolve("nemesis.jsonl"));
        toClose.add(log);
        Signals signals = new Signals();
        toClose.add(signals);
        Lab lab = new Lab(config, runDir, cluster, links, resource, log, network, signals);
        if (network != null) {
            Map<String, String> peers = new LinkedHashMap<>();
            cluster.names().forEach(n -> peers.put(n, cluster.member(n).peerAddress()));
            network.attach(peers);
        }

        List<RunInfo.Client> clientInfo = new ArrayList<>();
        Map<String, List<String>> endpoints = new LinkedHashMap<>();
        for (int i = 1; i <= config.clients(); i++) {
            String name = "c" + i;
            clientInfo.add(new RunInfo.Client(name, config.roleOf(i)));
            lab.roles.put(name, config.roleOf(i));
            endpoints.put(name, links.add(name));
        }
        long startNanos = System.nanoTime();
        RunInfo info = new RunInfo(config.ttl().toMillis(), config.electionTimeout().toMillis(), RunInfo.EXPIRY_PERIOD_MILLIS,
                lab.everMembers, KEYS, startNanos, 0, config.seed(), config.faults().stream().sorted().map(Fault::name).toList(),
                clientInfo, config.fence().name(), config.snapshotEvery(), Map.of(), SEMAPHORES, ELECTIONS,
                config.ranges() ? RANGE_INODE : 0);
        info.write(runDir);
        for (int i = 1; i <= config.clients(); i++) {
            String name = "c" + i;
            clients.put(name, startClient(config, runDir, name, i, endpoints.get(name), resource.endpoint(), secured));
        }
        lab.clients.putAll(clients);
        awaitClientsStarted(runDir, clients);
        System.out.printf("safety run: %d members, %d clients %s, TTL %d ms, election timeout %d ms, seed %d; faults %s for %d s%s%n",
                config.members(), config.clients(), lab.roles, config.ttl().toMillis(), config.electionTimeout().toMillis(),
                config.seed(), info.faults(), config.time().toSeconds(),
                secured == null ? "" : "; secured: TLS on client and peer ports, authentication on, clients as user worker");

        Nemesis nemesis = new Nemesis(lab);
        toClose.add(nemesis);
        nemesis.run(System.nanoTime() + config.time().toNanos());
        nemesis.healAll();
        long healAt = System.nanoTime();
        long progress = awaitProgress(lab, healAt, nemesis.problems);

        stopClients(clients);
        long endNanos = System.nanoTime();
        writeCounters(cluster, runDir);
        cluster.close();
        info.ended(endNanos, List.copyOf(lab.everMembers), nemesis.skipped).write(runDir);

        HarnessChecks.Findings findings = HarnessChecks.check(runDir);
        Files.writeString(runDir.resolve("harness.md"), findings.markdown(nemesis.problems));
        return new Result(runDir, config, log.started(), Map.copyOf(nemesis.skipped), List.copyOf(nemesis.problems),
                List.copyOf(nemesis.clients().pauses), List.copyOf(nemesis.clients().partitions), progress, findings);
    }

    /**
     * The run's counter as the healed cluster reads it, linearizably, once no client increments
     * any more: {@code {"safety/n0": value}}, or {@code {"error": text}} when no member answered.
     */
    private static void writeCounters(Cluster cluster, Path runDir) throws IOException {
        List<String> endpoints = cluster.names().stream().map(cluster::member).filter(io.tenure.testing.MemberProcess::isAlive)
                .map(io.tenure.testing.MemberProcess::endpoint).toList();
        String json;
        try (io.tenure.client.TenureClient reader = cluster.client(endpoints).build()) {
            json = "{\"" + COUNTER + "\": " + reader.counter(COUNTER).get() + "}";
        } catch (RuntimeException e) {
            json = "{\"error\": " + com.fasterxml.jackson.databind.node.TextNode.valueOf(String.valueOf(e)) + "}";
        }
        Files.writeString(runDir.resolve(COUNTERS_FILE), json + "\n");
    }

    private static Cluster.Options clusterOptions(SafetyConfig config, Path runDir, io.tenure.it.Placement placement,
                                                  SecuredRun secured) {
        Cluster.Options options = new Cluster.Options().size(config.members()).electionTimeout(config.electionTimeout())
                .snapshotEvery(config.snapshotEvery()).nested().placement(placement);
        if (secured != null) {
            options.secured(secured.caFile(), secured::rootToken);
        }
        if (config.faults().contains(Fault.F11)) {
            // F11 slows a member's peer links through a proxy in front of its peer port.
            options.peerProxies();
        }
        // The members run on JRaft unless -Dtenure.it.raftEngine names an engine (Cluster then
        // passes that one). On Ratis, F10 intermittently finds the restarted follower never sent
        // the leader's snapshot, and the run fails as a harness error (docs/safety.md).
        List<String> engine = System.getProperty("tenure.it.raftEngine", "").isEmpty() ? List.of("--raft-engine", "jraft") : List.of();
        options.memberArgs(name -> {
            List<String> args = new java.util.ArrayList<>(engine);
            if (config.auditLog()) {
                // The member's applied-command log, which the checker reads (server option --audit-log).
                args.addAll(List.of("--audit-log", runDir.resolve("members").resolve(name).resolve("audit.jsonl").toString()));
            }
            if (secured != null) {
                args.addAll(secured.memberArgs(name, placement.host(name)));
            }
            return args;
        });
        return options;
    }

    private static Process startClient(SafetyConfig config, Path runDir, String name, int number, List<String> endpoints,
                                       String resource, SecuredRun secured) throws IOException {
        List<String> command = new ArrayList<>(ChildJava.command(SafetyWorker.class.getName()));
        command.set(1, CLIENT_HEAP);
        command.addAll(List.of("--name", name, "--number", Integer.toString(number), "--role", config.roleOf(number),
                "--run-dir", runDir.toString(), "--endpoints", String.join(",", endpoints), "--resource", resource,
                "--seed", Long.toString(config.seed())));
        if (secured != null) {
            command.addAll(List.of("--ca", secured.caFile().toString(), "--token-file", secured.workerTokenFile().toString()));
        }
        // Standard input stays a pipe: closing it (or this JVM's death) ends the client.
        return new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(runDir.resolve("clients").resolve(name + ".log").toFile())
                .start();
    }

    private static void awaitClientsStarted(Path runDir, Map<String, Process> clients) {
        for (Map.Entry<String, Process> client : clients.entrySet()) {
            Path history = runDir.resolve("history").resolve(client.getKey() + ".jsonl");
            Waits.until("client " + client.getKey() + " records its first operation (see clients/" + client.getKey() + ".log)",
                    CLIENT_START_LIMIT, () -> {
                        if (!client.getValue().isAlive()) {
                            throw new Waits.HarnessException("client " + client.getKey() + " exited with " + client.getValue().exitValue());
                        }
                        return sizeOf(history) > 0;
                    });
        }
    }

    private static long sizeOf(Path file) {
        try {
            return Files.exists(file) ? Files.size(file) : 0;
        } catch (IOException e) {
            return 0;
        }
    }

    /**
     * Liveness after the heal: every lock worker gets a write accepted again, within two TTLs
     * plus a minute. Returns how long that took (ms), or -1 (with a problem) when it did not.
     */
    private static long awaitProgress(Lab lab, long healAt, List<String> problems) {
        List<String> workers = lab.lockClients();
        Duration limit = lab.ttl().multipliedBy(2).plusSeconds(60);
        boolean all = Waits.within(limit, Duration.ofMillis(100), () -> workers.stream().allMatch(w -> lab.resource.decisions().stream()
                .anyMatch(d -> d.accepted() && d.atNanos() > healAt && FencedResource.processOf(d.writer()).equals(w))));
        if (!all) {
            problems.add("after the final heal, not every lock worker " + workers + " had a write accepted within " + limit.toSeconds() + " s");
            return -1;
        }
        return Waits.millisSince(healAt);
    }

    /** Ends each client: resumed, then its standard input closed (it records open operations as INFO and exits); killed if it lingers. */
    private static void stopClients(Map<String, Process> clients) {
        for (Process p : clients.values()) {
            if (p.isAlive()) {
                try {
                    new ProcessBuilder("kill", "-CONT", Long.toString(p.pid())).start().waitFor(5, TimeUnit.SECONDS);
                    p.getOutputStream().close();
                } catch (IOException | InterruptedException e) {
                    p.destroy();
                }
            }
        }
        for (Process p : clients.values()) {
            try {
                if (!p.waitFor(20, TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    static NetworkFaults networkFaultsFromProperty() throws ReflectiveOperationException {
        String className = System.getProperty(SafetyConfig.PREFIX + "networkFaults");
        if (className == null || className.isBlank()) {
            return null;
        }
        return (NetworkFaults) Class.forName(className).getConstructor().newInstance();
    }

    /**
     * The command line ({@code tenure-it.sh} calls it): {@code --time S --faults LIST --seed N
     * --members 3|5 --clients N --out DIR} and the other {@link SafetyConfig} settings. Exits 0
     * when the run found nothing, 1 on a safety violation, 2 when the harness could not do
     * everything it was asked (see the problems printed).
     */
    public static void main(String[] args) throws Exception {
        SafetyConfig config = SafetyConfig.fromArgs(args);
        System.out.println("safety run: writing " + config.runDir());
        Result result = run(config);
        Verdict verdict = SafetyChecker.check(result.runDir());
        java.nio.file.Files.writeString(result.runDir().resolve("report.md"), verdict.report());
        HarnessChecks.Findings findings = result.findings();
        System.out.println();
        System.out.println(findings.summary());
        System.out.println("faults injected: " + result.faults() + (result.skipped().isEmpty() ? "" : "; skipped: " + result.skipped()));
        System.out.println("every lock worker wrote again " + result.progressAfterHealMillis() + " ms after the final heal");
        result.problems().forEach(p -> System.out.println("PROBLEM: " + p));
        System.out.println("run directory: " + result.runDir());
        System.out.println("checker:       " + (verdict.clean() ? "no violation" : verdict.violations().size() + " violation(s), first: "
                + verdict.violations().get(0).title()));
        System.out.println("report:        " + result.runDir().resolve("report.md") + " (harness: " + result.runDir().resolve("harness.md") + ")");
        boolean violated = !findings.violations().isEmpty() || !verdict.clean();
        System.exit(violated ? 1 : !result.problems().isEmpty() ? 2 : 0);
    }
}

package io.tenure.it.net;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * A small network of this machine's own, for partition (F6) and delay (F11) faults between real
 * {@code tenure server} processes: one Linux network namespace per member, each joined by a veth
 * pair to a bridge in the root namespace, on a /24 of 10.77.0.0/16 that nothing on the machine
 * uses.
 *
 * <pre>
 *   root namespace: tests and clients          bridge tnr-R-br  10.77.R.254/24
 *                                               |          |          |
 *                                           tnr-R-v1   tnr-R-v2   tnr-R-v3     (veth, host side)
 *   namespace tnr-R-n1: eth0 10.77.R.1      tnr-R-n2: eth0 10.77.R.2    tnr-R-n3: eth0 10.77.R.3
 * </pre>
 *
 * R is the run number, claimed atomically by creating the bridge (so labs of concurrent JVMs
 * never share a name or a subnet). Members are started with {@link #wrap} ({@code ip netns exec})
 * and bind their own address; clients stay in the root namespace and reach every member through
 * the bridge's connected /24, the only route this adds to the host.
 *
 * <h2>Faults</h2>
 * {@link #partition}, {@link #isolate}, {@link #bridge} and {@link #heal} each set the whole
 * partition, replacing the one in force (as a Jepsen nemesis's grudge): the filter table of every
 * member namespace is rewritten at once with {@code iptables-restore}, DROP in INPUT from and in
 * OUTPUT to each cut-off peer. Packets vanish without an answer, so connections hang as in a real
 * partition rather than fail fast; established connections are cut too. The root namespace
 * (10.77.R.254) is never cut off: the minority side keeps talking to clients, which is how a
 * test sees that it serves nothing. No rule is ever added outside the lab's namespaces.
 * {@link #delay} puts a netem queueing discipline on a member's {@code eth0} (its egress).
 *
 * <h2>Clean-up</h2>
 * Every interface and namespace is named {@code tnr-R-...}. {@link #close()} removes them (and the
 * rules and queueing disciplines with the namespaces), and so does a shutdown hook should the JVM
 * end without closing, and so does creation when it fails half-way. A lab left by a JVM that died
 * by {@code kill -9} is recognised by its bridge's alias (the owner's pid) and removed by the next
 * {@link #create} ({@link #sweepStale()}). Processes still running in a namespace are not killed
 * here: stop the members first.
 *
 * <p>Needs root, iproute2 and iptables ({@code apt-get install -y iptables}); delay also needs
 * netem in the kernel. {@link #probe()} says what this machine can do. On a host whose root
 * namespace filters bridged traffic ({@code br_netfilter} with a FORWARD policy of DROP, as
 * Docker sets), member-to-member traffic is dropped there too; the lab does not change the host's
 * rules to fix that.
 */
public final class NetLab implements AutoCloseable {
    /** The start of every name this lab gives (namespaces, interfaces); its owner's mark follows. */
    static final String PREFIX = "tnr-";
    /** The bridge's alias, followed by the owning JVM's pid, so a dead owner's lab can be swept. */
    static final String OWNER_MARK = "tenure-netlab pid=";
    /** The member's side of its veth pair, inside its namespace. */
    static final String MEMBER_INTERFACE = "eth0";
    /** Addresses are 10.77.R.i; the bridge (the clients' side) is .254. */
    static final int ROOT_HOST = 254;
    static final int MAX_MEMBERS = 253;
    static final int MAX_RUN = 250;
    private static final Pattern PROBE_NAMESPACE = Pattern.compile(Pattern.quote(PREFIX) + "probe-(\\d+)");
    private static final Pattern IPV4_PREFIX = Pattern.compile("(\\d+)\\.(\\d+)\\.(\\d+)\\.(\\d+)(?:/(\\d+))?");

    private static volatile Availability availability;

    private final List<String> members;
    private final String iptables;
    /** Steps of creation after which to fail on purpose (0: never); tests of the half-way clean-up. */
    private final int failAfterSteps;
    private final Thread cleanup;
    /** The pairs of members that cannot talk, each a two-member set. Guarded by this. */
    private final Set<Set<String>> cuts = new LinkedHashSet<>();
    private int run;
    private int steps;
    private boolean closed;

    private NetLab(List<String> members, String iptables, int failAfterSteps) {
        this.members = List.copyOf(members);
        this.iptables = iptables;
        this.failAfterSteps = failAfterSteps;
        this.cleanup = new Thread(this::closeFromHook, "tenure-netlab-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
    }

    /**
     * What this machine can do, with the reason; probed once per JVM in a scratch namespace.
     * A harness skips network faults, loudly, when {@link Availability#partitions()} is false.
     */
    public static Availability probe() {
        Availability known = availability;
        if (known == null) {
            synchronized (NetLab.class) {
                if (availability == null) {
                    availability = Availability.detect();
                }
                known = availability;
            }
        }
        return known;
    }

    /** A lab of {@code size} members named n1, n2, ... */
    public static NetLab create(int size) throws IOException {
        return create(IntStream.rangeClosed(1, size).mapToObj(i -> "n" + i).collect(Collectors.toList()));
    }

    public static NetLab create(String... members) throws IOException {
        return create(List.of(members));
    }

    /**
     * Creates the bridge, and for each member (in order: the i-th gets 10.77.R.i) a namespace with
     * loopback up and a veth pair into the bridge. On any failure everything created so far is
     * removed before this throws.
     *
     * @throws IllegalStateException if {@link #probe()} says the machine cannot (the message says why)
     * @throws IOException           if a command failed; the message names it and what it printed
     */
    public static NetLab create(List<String> members) throws IOException {
        return create(members, 0);
    }

    /** As {@link #create(List)}, failing on purpose after {@code failAfterSteps} commands (0: never). */
    static NetLab create(List<String> members, int failAfterSteps) throws IOException {
        checkMembers(members);
        Availability can = probe();
        if (!can.partitions()) {
            throw new IllegalStateException("network faults are not available on this machine: " + can.partitionsWhy());
        }
        sweepStale();
        NetLab lab = new NetLab(members, can.iptables(), failAfterSteps);
        try {
            lab.build();
            return lab;
        } catch (IOException | RuntimeException | Error e) {
            try {
                lab.close();
            } catch (RuntimeException cleanupFailed) {
                e.addSuppressed(cleanupFailed);
            }
            throw e;
        }
    }

    private static void checkMembers(List<String> members) {
        if (members.isEmpty() || members.size() > MAX_MEMBERS) {
            throw new IllegalArgumentException("a lab has 1 to " + MAX_MEMBERS + " members, not " + members.size());
        }
        if (new LinkedHashSet<>(members).size() != members.size() || members.stream().anyMatch(m -> m == null || m.isBlank())) {
            throw new IllegalArgumentException("member names must be distinct and not blank: " + members);
        }
    }

    private synchronized void build() throws IOException {
        run = claimRun();
        String bridge = bridgeName(run);
        step(List.of("ip", "link", "set", "dev", bridge, "alias", OWNER_MARK + ProcessHandle.current().pid()
                + " since=" + Instant.now()));
        disableIpv6(bridge);
        step(List.of("ip", "addr", "add", rootAddress() + "/24", "dev", bridge));
        step(List.of("ip", "link", "set", "dev", bridge, "up"));
        for (int i = 1; i <= members.size(); i++) {
            String ns = namespaceName(run, i);
            String veth = vethName(run, i);
            step(List.of("ip", "netns", "add", ns));
            step(List.of("ip", "netns", "exec", ns, "sh", "-c",
                    "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6 && echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6"));
            step(List.of("ip", "link", "add", veth, "type", "veth", "peer", "name", MEMBER_INTERFACE, "netns", ns));
            disableIpv6(veth);
            step(List.of("ip", "link", "set", "dev", veth, "master", bridge));
            step(List.of("ip", "link", "set", "dev", veth, "up"));
            step(List.of("ip", "-n", ns, "addr", "add", addressOf(run, i) + "/24", "dev", MEMBER_INTERFACE));
            step(List.of("ip", "-n", ns, "link", "set", "dev", MEMBER_INTERFACE, "up"));
            step(List.of("ip", "-n", ns, "link", "set", "dev", "lo", "up"));
        }
        applyCuts();
    }

    /** No IPv6 on the lab's links: no router solicitations or other chatter, only the tests' own IPv4. */
    private void disableIpv6(String rootInterface) throws IOException {
        Path setting = Path.of("/proc/sys/net/ipv6/conf", rootInterface, "disable_ipv6");
        if (Files.exists(setting)) {
            Files.writeString(setting, "1", StandardCharsets.US_ASCII);
        }
    }

    private void step(List<String> command) throws IOException {
        steps++;
        if (failAfterSteps > 0 && steps > failAfterSteps) {
            throw new IOException(prefix() + ": failing on purpose after " + failAfterSteps + " steps, before: " + String.join(" ", command));
        }
        Commands.Result result = Commands.run(command);
        if (!result.ok()) {
            throw new IOException(prefix() + ": " + result.describe());
        }
    }

    /**
     * Claims a run number R whose 10.77.R.0/24 no address or route of the root namespace overlaps
     * and for which no tnr-R- name exists, by creating its bridge: {@code ip link add} fails if
     * another lab created it first, so two JVMs never share a run.
     */
    private static int claimRun() throws IOException {
        int start = (int) (ProcessHandle.current().pid() % MAX_RUN);
        for (int k = 0; k < MAX_RUN; k++) {
            int candidate = (start + k) % MAX_RUN + 1;
            if (inUse(candidate)) {
                continue;
            }
            Commands.Result add = Commands.run(List.of("ip", "link", "add", "name", bridgeName(candidate), "type", "bridge"));
            if (add.ok()) {
                return candidate;
            }
            if (!add.output().contains("exists")) {
                throw new IOException("cannot create a bridge: " + add.describe());
            }
        }
        throw new IOException("no free run number: every 10.77.R.0/24 with R in 1.." + MAX_RUN + " is in use");
    }

    private static boolean inUse(int run) throws IOException {
        String prefix = prefixOf(run);
        if (rootLinks().stream().anyMatch(l -> l.startsWith(prefix)) || namespaces().stream().anyMatch(n -> n.startsWith(prefix))) {
            return true;
        }
        String addresses = Commands.check(List.of("ip", "-4", "-o", "addr", "show"));
        String routes = Commands.check(List.of("ip", "-4", "route", "show", "table", "all"));
        long subnet = (10L << 24) | (77L << 16) | ((long) run << 8);
        for (String line : (addresses + "\n" + routes).split("\n")) {
            for (String token : line.trim().split("\\s+")) {
                Matcher m = IPV4_PREFIX.matcher(token);
                if (!m.matches()) {
                    continue;
                }
                long address = (Long.parseLong(m.group(1)) << 24) | (Long.parseLong(m.group(2)) << 16)
                        | (Long.parseLong(m.group(3)) << 8) | Long.parseLong(m.group(4));
                int length = m.group(5) == null ? 32 : Integer.parseInt(m.group(5));
                // Shorter prefixes (a default route, 10.0.0.0/8) are not a use of this /24: our
                // connected /24 only keeps our own addresses off them.
                int common = Math.min(length, 24);
                long mask = common == 0 ? 0 : (0xFFFFFFFFL << (32 - common)) & 0xFFFFFFFFL;
                if (length >= 16 && (address & mask) == (subnet & mask)) {
                    return true;
                }
            }
        }
        return false;
    }

    // ---- names and addresses -------------------------------------------------------------

    static String prefixOf(int run) {
        return PREFIX + run + "-";
    }

    static String bridgeName(int run) {
        return prefixOf(run) + "br";
    }

    static String namespaceName(int run, int index) {
        return prefixOf(run) + "n" + index;
    }

    static String vethName(int run, int index) {
        return prefixOf(run) + "v" + index;
    }

    static String addressOf(int run, int host) {
        return "10.77." + run + "." + host;
    }

    /** The start of every name this lab created, {@code tnr-R-}. */
    public String prefix() {
        return prefixOf(run);
    }

    public List<String> members() {
        return members;
    }

    /** The member's IPv4 address, 10.77.R.i: what it binds ({@code --host}) and what others dial. */
    public String address(String member) {
        return addressOf(run, index(member));
    }

    /** The root namespace's address on the bridge: where clients' connections come from. */
    public String rootAddress() {
        return addressOf(run, ROOT_HOST);
    }

    /** The member's network namespace, {@code tnr-R-ni}. */
    public String namespace(String member) {
        return namespaceName(run, index(member));
    }

    /** {@code ip netns exec NAMESPACE command...}: runs {@code command} in the member's namespace (same pid). */
    public List<String> wrap(String member, List<String> command) {
        List<String> wrapped = new ArrayList<>(List.of("ip", "netns", "exec", namespace(member)));
        wrapped.addAll(command);
        return wrapped;
    }

    private int index(String member) {
        int i = members.indexOf(member);
        if (i < 0) {
            throw new IllegalArgumentException("no member " + member + " in this lab (members: " + members + ")");
        }
        return i + 1;
    }

    // ---- partitions ----------------------------------------------------------------------

    /**
     * Drops all traffic between every member of {@code sideA} and every member of
     * {@code sideB}, both ways, replacing the partition in force. Members on neither side keep
     * talking to everyone; clients in the root namespace reach everyone.
     */
    public synchronized void partition(Set<String> sideA, Set<String> sideB) throws IOException {
        Set<String> overlap = new TreeSet<>(sideA);
        overlap.retainAll(sideB);
        if (sideA.isEmpty() || sideB.isEmpty() || !overlap.isEmpty()) {
            throw new IllegalArgumentException("two non-empty, disjoint sides needed: " + sideA + " | " + sideB);
        }
        Set<Set<String>> next = new LinkedHashSet<>();
        for (String a : sideA) {
            index(a);
            for (String b : sideB) {
                index(b);
                next.add(Set.of(a, b));
            }
        }
        setCuts(next);
    }

    /** Cuts {@code member} off from every other member, not from clients (the root namespace). */
    public void isolate(String member) throws IOException {
        Set<String> others = new LinkedHashSet<>(members);
        others.remove(member);
        index(member);
        partition(Set.of(member), others);
    }

    /**
     * A bridge: {@code a}–{@code b} and {@code b}–{@code c} up, {@code a}–{@code c} down (b sees both
     * sides, neither side sees the other). Replaces the partition in force; any further members keep
     * all their links.
     */
    public void bridge(String a, String b, String c) throws IOException {
        if (Set.of(a, b, c).size() != 3) {
            throw new IllegalArgumentException("a bridge needs three distinct members: " + a + ", " + b + ", " + c);
        }
        index(b);
        partition(Set.of(a), Set.of(c));
    }

    /** Removes every partition rule: all members talk to all again. */
    public synchronized void heal() throws IOException {
        setCuts(Set.of());
    }

    /** The member pairs that cannot talk now, each as a two-member set. */
    public synchronized Set<Set<String>> cuts() {
        return Set.copyOf(cuts);
    }

    private void setCuts(Set<Set<String>> next) throws IOException {
        checkOpen();
        cuts.clear();
        cuts.addAll(next);
        applyCuts();
    }

    /** Rewrites every member namespace's filter table (atomically per namespace) from {@link #cuts}. */
    private void applyCuts() throws IOException {
        for (String member : members) {
            StringBuilder table = new StringBuilder("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
            for (Set<String> cut : cuts) {
                if (cut.contains(member)) {
                    String peer = address(cut.stream().filter(m -> !m.equals(member)).findFirst().orElseThrow());
                    table.append("-A INPUT -s ").append(peer).append("/32 -j DROP\n");
                    table.append("-A OUTPUT -d ").append(peer).append("/32 -j DROP\n");
                }
            }
            table.append("COMMIT\n");
            Commands.Result result = Commands.run(wrap(member, List.of(iptables + "-restore", "-w")), table.toString());
            if (!result.ok()) {
                throw new IOException(prefix() + ": cannot set the rules of " + member + ": " + result.describe());
            }
        }
    }

    /** The member namespace's rules as {@code iptables -S} prints them, for diagnostics and tests. */
    public String rules(String member) throws IOException {
        return Commands.check(wrap(member, List.of(iptables, "-w", "-S")));
    }

    // ---- delay and loss (F11) ------------------------------------------------------------

    /**
     * Delays every packet the member sends by {@code delay} (± {@code jitter}, uniformly) and
     * drops {@code lossPercent} of them, with netem on its {@code eth0}; replaces any delay set
     * before. Only the member's egress: to slow a link both ways, delay both ends. Traffic to
     * clients is delayed too.
     *
     * @throws UnsupportedOperationException if the kernel has no netem (the message says why)
     */
    public synchronized void delay(String member, Duration delay, Duration jitter, double lossPercent) throws IOException {
        checkOpen();
        if (delay.isNegative() || jitter.isNegative() || !(lossPercent >= 0 && lossPercent <= 100)) {
            throw new IllegalArgumentException("delay and jitter must not be negative and loss must be 0-100%: "
                    + delay + ", " + jitter + ", " + lossPercent);
        }
        Availability can = probe();
        if (!can.delay()) {
            throw new UnsupportedOperationException("cannot delay " + member + ": " + can.delayWhy());
        }
        List<String> tc = new ArrayList<>(List.of("tc", "qdisc", "replace", "dev", MEMBER_INTERFACE, "root", "netem",
                "delay", micros(delay)));
        if (!jitter.isZero()) {
            tc.add(micros(jitter));
        }
        if (lossPercent > 0) {
            tc.addAll(List.of("loss", String.format(Locale.ROOT, "%.4f%%", lossPercent)));
        }
        Commands.Result result = Commands.run(wrap(member, tc));
        if (!result.ok()) {
            throw new IOException(prefix() + ": cannot delay " + member + ": " + result.describe());
        }
    }

    /** Removes the member's delay and loss, if any. */
    public synchronized void clearDelay(String member) throws IOException {
        checkOpen();
        String qdiscs = Commands.check(wrap(member, List.of("tc", "qdisc", "show", "dev", MEMBER_INTERFACE)));
        if (qdiscs.contains("netem")) {
            Commands.check(wrap(member, List.of("tc", "qdisc", "del", "dev", MEMBER_INTERFACE, "root")));
        }
    }

    private static String micros(Duration d) {
        return (d.toNanos() / 1000) + "us";
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException(prefix() + ": this lab is closed");
        }
    }

    // ---- clean-up ------------------------------------------------------------------------

    /**
     * Removes every interface and namespace of this lab (rules and queueing disciplines go with
     * the namespaces). Idempotent.
     *
     * @throws IllegalStateException if something of the lab's could not be removed (named)
     */
    @Override
    public void close() {
        List<String> left = closeQuietly();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException shuttingDown) {
            // The hook is running or about to: it finds the lab closed.
        }
        if (!left.isEmpty()) {
            throw new IllegalStateException(prefix() + ": could not remove everything: " + String.join("; ", left));
        }
    }

    private synchronized List<String> closeQuietly() {
        if (closed) {
            return List.of();
        }
        closed = true;
        return run == 0 ? List.of() : teardown(run);
    }

    private void closeFromHook() {
        List<String> left = closeQuietly();
        if (!left.isEmpty()) {
            System.err.println("tenure-netlab: " + prefix() + ": could not remove everything: " + String.join("; ", left));
        }
    }

    /**
     * Removes everything named {@code tnr-R-}: veth pairs first (both ends go together), then the
     * namespaces, the bridge last, so that a lab whose bridge is gone has nothing else left.
     * Returns what is still there afterwards, with why; empty when all is gone.
     */
    static List<String> teardown(int run) {
        String prefix = prefixOf(run);
        Map<String, String> failures = new LinkedHashMap<>();
        try {
            for (String link : rootLinks()) {
                if (link.startsWith(prefix) && !link.equals(bridgeName(run))) {
                    remember(failures, link, Commands.run(List.of("ip", "link", "del", "dev", link)));
                }
            }
            for (String ns : namespaces()) {
                if (ns.startsWith(prefix)) {
                    remember(failures, ns, Commands.run(List.of("ip", "netns", "del", ns)));
                }
            }
            if (rootLinks().contains(bridgeName(run))) {
                remember(failures, bridgeName(run), Commands.run(List.of("ip", "link", "del", "dev", bridgeName(run))));
            }
            List<String> left = new ArrayList<>();
            for (String name : leftovers(prefix)) {
                left.add(name + (failures.containsKey(name) ? " (" + failures.get(name) + ")" : ""));
            }
            return left;
        } catch (IOException e) {
            return List.of("cannot list interfaces or namespaces: " + e.getMessage());
        }
    }

    private static void remember(Map<String, String> failures, String name, Commands.Result result) {
        if (!result.ok()) {
            failures.put(name, result.describe());
        }
    }

    /** Interfaces of the root namespace and namespaces whose names start with {@code prefix}. */
    static List<String> leftovers(String prefix) throws IOException {
        List<String> left = new ArrayList<>();
        rootLinks().stream().filter(l -> l.startsWith(prefix)).forEach(l -> left.add("interface " + l));
        namespaces().stream().filter(n -> n.startsWith(prefix)).forEach(n -> left.add("namespace " + n));
        return left;
    }

    /**
     * Removes labs left by JVMs that died without their shutdown hook (kill -9): those whose
     * bridge names a process that no longer runs, the remains of an interrupted tear-down (names
     * of a run without its bridge), and probe namespaces of dead processes. Labs of live
     * processes, this one's included, are left alone. Returns the prefixes (and probe namespaces)
     * removed; what cannot be removed is reported on stderr.
     */
    public static List<String> sweepStale() throws IOException {
        List<String> swept = new ArrayList<>();
        List<String> links = rootLinks();
        List<String> namespaces = namespaces();
        Set<Integer> runs = new TreeSet<>();
        Pattern named = Pattern.compile(Pattern.quote(PREFIX) + "(\\d+)-.*");
        for (String name : concat(links, namespaces)) {
            Matcher m = named.matcher(name);
            if (m.matches()) {
                runs.add(Integer.parseInt(m.group(1)));
            }
        }
        for (int run : runs) {
            String bridge = bridgeName(run);
            boolean stale;
            if (links.contains(bridge)) {
                Long owner = owner(bridge);
                // A bridge without an owner is one being claimed this instant: leave it.
                stale = owner != null && ProcessHandle.of(owner).map(p -> !p.isAlive()).orElse(true);
            } else {
                stale = true;
            }
            if (stale) {
                List<String> left = teardown(run);
                if (left.isEmpty()) {
                    swept.add(prefixOf(run));
                } else {
                    // Not this lab's business to fail over: say so loudly and go on.
                    System.err.println("tenure-netlab: cannot remove the stale lab " + prefixOf(run) + ": " + String.join("; ", left));
                }
            }
        }
        for (String ns : namespaces) {
            Matcher m = PROBE_NAMESPACE.matcher(ns);
            if (m.matches() && ProcessHandle.of(Long.parseLong(m.group(1))).map(p -> !p.isAlive()).orElse(true)) {
                Commands.run(List.of("ip", "netns", "del", ns));
                swept.add(ns);
            }
        }
        return swept;
    }

    private static Long owner(String bridge) {
        try {
            String alias = Files.readString(Path.of("/sys/class/net", bridge, "ifalias"), StandardCharsets.UTF_8).strip();
            if (!alias.startsWith(OWNER_MARK)) {
                return null;
            }
            String pid = alias.substring(OWNER_MARK.length()).split("\\s+")[0];
            return Long.parseLong(pid);
        } catch (IOException | NumberFormatException e) {
            return null;
        }
    }

    private static List<String> concat(Collection<String> a, Collection<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    /** Names of the root namespace's interfaces ({@code veth@if2} becomes {@code veth}). */
    static List<String> rootLinks() throws IOException {
        List<String> names = new ArrayList<>();
        for (String line : Commands.check(List.of("ip", "-o", "link", "show")).split("\n")) {
            String[] parts = line.split(":\\s+", 3);
            if (parts.length >= 2) {
                String name = parts[1].trim();
                int at = name.indexOf('@');
                names.add(at >= 0 ? name.substring(0, at) : name);
            }
        }
        return names;
    }

    /** Names of the named network namespaces ({@code ip netns list}). */
    static List<String> namespaces() throws IOException {
        List<String> names = new ArrayList<>();
        for (String line : Commands.check(List.of("ip", "netns", "list")).split("\n")) {
            if (!line.isBlank()) {
                names.add(line.trim().split("\\s+")[0]);
            }
        }
        return names;
    }

    @Override
    public String toString() {
        return "NetLab(" + prefix() + ", " + members.stream().map(m -> m + "=" + (run == 0 ? "?" : address(m)))
                .collect(Collectors.joining(", ")) + (cuts.isEmpty() ? "" : ", cut " + cuts) + ")";
    }
}

package io.tenure.it.safety;

import io.tenure.it.Placement;
import io.tenure.it.net.NetLab;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Network faults (F6) over a {@link NetLab}: every member runs in a network namespace of its
 * own (this is also the cluster's {@link Placement}), and partitions are iptables rules inside
 * those namespaces. Clients and the harness stay in the root namespace and reach every member
 * through the lab's bridge, so a minority member keeps answering clients, which is how the
 * nemesis sees that it serves nothing.
 *
 * <p>The lab has room for members that join later (F9): {@code n1} to {@code nK} for K the
 * initial size plus {@link #SPARE}.
 */
final class NamespaceNetwork implements NetworkFaults, Placement {
    /** Namespaces made beyond the initial members, for the members F9 adds. */
    static final int SPARE = 8;

    private final NetLab lab;

    private NamespaceNetwork(NetLab lab) {
        this.lab = lab;
    }

    /** Whether this machine can run members in namespaces and cut links (root, iproute2, iptables). */
    static boolean available() {
        return NetLab.probe().partitions();
    }

    static String unavailableWhy() {
        return NetLab.probe().partitionsWhy();
    }

    static NamespaceNetwork create(int members) throws IOException {
        List<String> names = IntStream.rangeClosed(1, members + SPARE).mapToObj(i -> "n" + i).collect(Collectors.toList());
        return new NamespaceNetwork(NetLab.create(names));
    }

    @Override
    public String host(String member) {
        return lab.address(member);
    }

    @Override
    public List<String> wrap(String member, List<String> command) {
        return lab.wrap(member, command);
    }

    @Override
    public void attach(Map<String, String> peerAddresses) {
        for (String member : peerAddresses.keySet()) {
            lab.address(member); // fails now, not mid-run, for a member the lab has no namespace for
        }
    }

    @Override
    public void isolate(String member) {
        run(() -> lab.isolate(member));
    }

    @Override
    public void bridge(String a, String b, String c) {
        run(() -> lab.bridge(a, b, c));
    }

    @Override
    public void heal() {
        run(lab::heal);
    }

    @Override
    public void close() {
        lab.close();
    }

    @Override
    public String toString() {
        return lab.toString();
    }

    private interface Step {
        void run() throws IOException;
    }

    private static void run(Step step) {
        try {
            step.run();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

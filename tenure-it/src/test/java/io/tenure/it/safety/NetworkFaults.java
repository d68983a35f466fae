package io.tenure.it.safety;

import java.util.Map;

/**
 * The hook for network faults F6 (partitions), which need the members in network namespaces
 * ({@link NamespaceNetwork}, over {@code io.tenure.it.net.NetLab}). When none is given, the
 * nemesis says "F6 not available on this run" and skips it. (F11, delay and loss on peer links,
 * goes through the members' peer proxies instead: {@link io.tenure.it.PeerProxy}.)
 *
 * <p>How a run finds one: {@link SafetyRun#run(SafetyConfig, NetworkFaults)}; or, from the command
 * line, a {@link NamespaceNetwork} whenever F6 or F11 is asked for and the machine can (root,
 * iproute2, iptables), unless the system property {@code tenure.safety.networkFaults} names another
 * class with a public no-argument constructor. An implementation that is also a
 * {@link io.tenure.it.Placement} decides where the members run. Every method is called from the nemesis thread only, one fault at a time;
 * {@link #heal()} must undo whatever is in force, and {@link #close()} must tear everything down
 * (also after a failure).
 */
public interface NetworkFaults extends AutoCloseable {
    /**
     * Called once, after the members started and before any fault: each member's name and its
     * peer address ({@code host:port}). Members that join later (F9) are told by {@link #joined}.
     */
    void attach(Map<String, String> peerAddresses);

    /** A member joined the cluster (F9). */
    default void joined(String member, String peerAddress) {
    }

    /** Cuts {@code member} off from every other member, both ways. */
    void isolate(String member);

    /** A bridge: {@code a}-{@code b} and {@code b}-{@code c} connected, {@code a}-{@code c} cut. */
    void bridge(String a, String b, String c);

    /** Undoes every partition in force. */
    void heal();

    @Override
    void close();
}

package io.tenure.it.safety;

import java.time.Duration;
import java.util.Map;

/**
 * The hook for network faults F6 (partitions) and F11 (delay and loss on peer links), which need
 * network namespaces and iptables ({@code io.tenure.it.net.NetLab} does the namespace work; an
 * implementation of this interface over it, which must also start the members inside the
 * namespaces, is still to be written). When none is given, the nemesis says "F6/F11 not available
 * on this run" and skips both.
 *
 * <p>How a run finds one: {@link SafetyRun.Builder#networkFaults(NetworkFaults)}, or the system
 * property {@code tenure.safety.networkFaults} naming a class with a public no-argument
 * constructor. Every method is called from the nemesis thread only, one fault at a time;
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

    /** Delays every packet of {@code member}'s peer links by {@code delay} and drops {@code lossRatio} (0..1) of them. */
    void delay(String member, Duration delay, double lossRatio);

    /** Undoes every partition and delay in force. */
    void heal();

    @Override
    void close();
}

package io.tenure.it.safety;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/** The nemesis's fault kinds (issue 6). F6 needs {@link NetworkFaults}; F11 goes through the members' peer proxies. */
public enum Fault {
    F1("kill -9 the leader, restart it a few seconds later (twice per round)"),
    F2("kill -9 a random member and restart it; then a majority at once"),
    F3("kill -9 every member, restart them all"),
    F4("SIGSTOP the leader shorter than the election timeout, between it and the TTL, and longer than the TTL"),
    F5("SIGSTOP a client holding a lock, between its read and its write, for longer than the TTL"),
    F6("network partitions: isolate the leader, isolate a follower, a bridge (needs NetworkFaults)"),
    F7("cut a client holding a lock off from the cluster (blackhole its links) until its SDK declares the lease lost"),
    F8("restart a member under libfaketime with its clock offset by minutes to hours"),
    F9("membership change under load: add a member, remove another"),
    F10("kill a follower until the leader purges its log, restart it (snapshot installation), kill it during the install"),
    F11("delay and loss on a member's peer links (through its peer proxy)");

    public final String description;

    Fault(String description) {
        this.description = description;
    }

    /** Whether this fault needs a {@link NetworkFaults} implementation. */
    public boolean needsNetwork() {
        return this == F6;
    }

    /** {@code all}, or a comma-separated list such as {@code f1,f4,F5}. */
    public static Set<Fault> parse(String list) {
        String text = list.trim();
        if (text.equalsIgnoreCase("all")) {
            return EnumSet.allOf(Fault.class);
        }
        Set<Fault> faults = EnumSet.noneOf(Fault.class);
        for (String part : text.split("[,\\s]+")) {
            if (!part.isEmpty()) {
                try {
                    faults.add(Fault.valueOf(part.toUpperCase(Locale.ROOT)));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("unknown fault '" + part + "' (known: F1 ... F11, or all)");
                }
            }
        }
        if (faults.isEmpty()) {
            throw new IllegalArgumentException("no fault in '" + list + "'");
        }
        return faults;
    }
}

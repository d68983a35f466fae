package io.tenure.it.net;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Whether this machine can run the network faults, and why not: partitions need root, network
 * namespaces, veth pairs, a bridge and a working iptables inside a namespace; delay and loss
 * (F11) also need the kernel's netem queueing discipline. Found by {@link NetLab#probe()}, which
 * tries each thing in a scratch namespace of its own rather than guessing from file names.
 *
 * @param partitions    whether {@link NetLab} can be created and partition its members
 * @param partitionsWhy what works (the iptables backend used) or what is missing and how to get it
 * @param delay         whether {@link NetLab#delay} works (netem)
 * @param delayWhy      what works or what is missing
 * @param iptables      the iptables command that worked in a namespace ({@code iptables},
 *                      {@code iptables-legacy} or {@code iptables-nft}), or null
 */
public record Availability(boolean partitions, String partitionsWhy, boolean delay, String delayWhy, String iptables) {

    /** One line for logs and skip messages. */
    public String describe() {
        return "partitions: " + (partitions ? "yes (" : "NO (") + partitionsWhy + "); delay/loss: "
                + (delay ? "yes (" : "NO (") + delayWhy + ")";
    }

    /** The scratch namespace of one probe; {@link NetLab#sweepStale()} removes it should this JVM die mid-probe. */
    static String scratchNamespace() {
        return NetLab.PREFIX + "probe-" + ProcessHandle.current().pid();
    }

    /** Tries everything in a scratch namespace and removes it again. */
    static Availability detect() {
        if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
            return unavailable("not Linux (" + System.getProperty("os.name") + "): network namespaces are Linux only");
        }
        Commands.Result id = Commands.run(List.of("id", "-u"));
        if (!id.ok() || !id.output().strip().equals("0")) {
            return unavailable("not root (" + id.describe() + "): network namespaces, iptables and tc need root");
        }
        Commands.Result ip = Commands.run(List.of("ip", "-V"));
        if (!ip.ok()) {
            return unavailable("no `ip` command (" + ip.describe() + "): apt-get install -y iproute2");
        }
        String ns = scratchNamespace();
        Commands.run(List.of("ip", "netns", "del", ns)); // left by an earlier probe of a process with this pid
        Commands.Result add = Commands.run(List.of("ip", "netns", "add", ns));
        if (!add.ok()) {
            return unavailable("cannot create a network namespace: " + add.describe());
        }
        try {
            return detectIn(ns);
        } finally {
            Commands.run(List.of("ip", "netns", "del", ns));
        }
    }

    private static Availability detectIn(String ns) {
        for (List<String> step : List.of(
                List.of("ip", "-n", ns, "link", "set", "lo", "up"),
                List.of("ip", "-n", ns, "link", "add", "probe-a", "type", "veth", "peer", "name", "probe-b"),
                List.of("ip", "-n", ns, "link", "add", "probe-br", "type", "bridge"))) {
            Commands.Result result = Commands.run(step);
            if (!result.ok()) {
                return unavailable("the kernel refused a namespace, veth or bridge step: " + result.describe());
            }
        }
        List<String> tried = new ArrayList<>();
        String iptables = null;
        for (String candidate : List.of("iptables", "iptables-legacy", "iptables-nft")) {
            String failure = iptablesFailure(ns, candidate);
            if (failure == null) {
                iptables = candidate;
                break;
            }
            tried.add(candidate + ": " + failure);
        }
        if (iptables == null) {
            return unavailable("no iptables works inside a network namespace (apt-get install -y iptables); tried "
                    + String.join("; ", tried));
        }
        String version = Commands.run(List.of(iptables, "--version")).output().strip();
        String partitionsWhy = "root, ip netns, veth, bridge, " + iptables + " (" + version + ")"
                + (tried.isEmpty() ? "" : " after " + String.join("; ", tried));
        Commands.Result netem = Commands.run(List.of("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root",
                "netem", "delay", "1ms"));
        if (netem.ok()) {
            return new Availability(true, partitionsWhy, true, "tc netem", iptables);
        }
        String delayWhy = netem.exitCode() == 127 || netem.output().contains("No such file")
                ? "no `tc` command (apt-get install -y iproute2): " + netem.describe()
                : "the kernel has no netem qdisc (module sch_netem / CONFIG_NET_SCH_NETEM): " + netem.describe();
        return new Availability(true, partitionsWhy, false, delayWhy, iptables);
    }

    /** Null when {@code candidate} can install a DROP rule in the namespace and list it back; else why not. */
    private static String iptablesFailure(String ns, String candidate) {
        Commands.Result version = Commands.run(List.of(candidate, "--version"));
        if (!version.ok()) {
            return "not installed";
        }
        String rule = "-A INPUT -s 10.77.255.1/32 -j DROP";
        Commands.Result restore = Commands.run(List.of("ip", "netns", "exec", ns, candidate + "-restore", "-w"),
                "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n" + rule + "\nCOMMIT\n");
        if (!restore.ok()) {
            return restore.describe();
        }
        Commands.Result list = Commands.run(List.of("ip", "netns", "exec", ns, candidate, "-w", "-S", "INPUT"));
        if (!list.ok() || !list.output().contains(rule)) {
            return "the rule did not show in " + list.describe();
        }
        return null;
    }

    private static Availability unavailable(String why) {
        return new Availability(false, why, false, "needs what partitions need: " + why, null);
    }
}

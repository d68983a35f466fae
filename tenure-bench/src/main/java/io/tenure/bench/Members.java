package io.tenure.bench;

import io.tenure.proto.v1.StatusResponse;
import io.tenure.testing.Await;
import io.tenure.testing.FreePorts;
import io.tenure.testing.MemberProcess;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The Tenure members a run measures: 1 or 3 real {@code tenure server} child JVMs on 127.0.0.1
 * with free ports and default durability, data in a temporary directory. Each is a
 * {@link MemberProcess} (tenure-testing's child-process member, run here with the bench's JVM
 * options and this JVM's class path as it is), so only the processes started here are ever
 * signalled, by their own PID.
 */
public final class Members implements AutoCloseable {
    /** The last line of {@code jcmd PID GC.class_histogram}: instances and bytes of every live object. */
    private static final Pattern LIVE_BYTES = Pattern.compile("(?m)^Total\\s+\\d+\\s+(\\d+)\\s*$");
    /** Asking the members who leads: polling child processes, as there is nothing to wait on. */
    private static final Await.Polling POLL = Await.every(Duration.ofMillis(100));

    private final Path dir;
    private final List<MemberProcess> members = new ArrayList<>();
    /** The run's certificates when its members and clients speak mutual TLS; else null. */
    private BenchTls tls;
    /** The bearer token every client shows when authentication is on; else null. */
    private String token;
    private boolean keepDir;

    private Members(Path dir) {
        this.dir = dir;
    }

    /** Starts {@code count} (1 or 3) members and waits until every one names a leader. */
    public static Members start(int count, List<String> jvmOptions) throws IOException, InterruptedException {
        return start(count, jvmOptions, false, false);
    }

    /**
     * Starts {@code count} (1 or 3) members, with {@code tls} on mutual TLS on their client ports
     * (certificates made for the run), and waits until every one names a leader.
     */
    public static Members start(int count, List<String> jvmOptions, boolean tls, boolean auth) throws IOException, InterruptedException {
        Members m = new Members(Files.createTempDirectory("tenure-bench"));
        try {
            m.tls = tls ? BenchTls.make(m.dir.resolve("tls")) : null;
            int[] ports = FreePorts.take(count * 3);
            StringBuilder peers = new StringBuilder();
            for (int i = 0; i < count; i++) {
                peers.append(i == 0 ? "" : ",").append("n").append(i + 1).append("=127.0.0.1:").append(ports[i * 3 + 1]);
            }
            for (int i = 0; i < count; i++) {
                String name = "n" + (i + 1);
                // The class path as it is: `tenure bench` may run from a jar whose manifest names the others.
                MemberProcess.Builder member = MemberProcess.builder(name, m.dir.resolve(name)).logFile(m.dir.resolve(name + ".log"))
                        .clientPort(ports[i * 3]).peerPort(ports[i * 3 + 1]).httpPort(ports[i * 3 + 2])
                        .jvmOptions(jvmOptions, true);
                if (count > 1) {
                    member.peers(peers.toString());
                }
                if (m.tls != null) {
                    member.args(m.tls.memberArgs()).clientTls(m.tls.ca(), m.tls.clientCert(), m.tls.clientKey());
                }
                m.members.add(member.build());
            }
            for (MemberProcess member : m.members) {
                member.launch();
            }
            m.leader(Duration.ofSeconds(90));
            if (auth) {
                m.token = switchAuthenticationOn(m);
            }
            return m;
        } catch (IOException | RuntimeException | InterruptedException e) {
            m.keepDir = true;
            m.close();
            throw e;
        }
    }

    /** An SDK builder for these members' {@code endpoints}, with the run's client certificate and token when they ask for them. */
    public io.tenure.client.TenureClient.Builder client(List<String> endpoints) {
        io.tenure.client.TenureClient.Builder builder = io.tenure.client.TenureClient.builder().endpoints(endpoints);
        if (tls != null) {
            builder.tls(tls.ca(), tls.clientCert(), tls.clientKey());
        }
        return token == null ? builder : builder.token(token);
    }

    /**
     * Adds a root user (authentication needs one), and the user the workload runs as: not root, but
     * a role with write on every name of every kind, so that each call takes the permission check
     * a production user's does. Switches authentication on and returns a token of that user.
     */
    private static String switchAuthenticationOn(Members m) {
        String password = "bench-" + java.util.UUID.randomUUID();
        try (io.tenure.client.TenureClient admin = m.client(m.endpoints()).build()) {
            admin.auth().addUser("bench-admin", password);
            admin.auth().grantRole("bench-admin", "root");
            admin.auth().addRole("bench");
            admin.auth().grantPermission("bench", "*", "", io.tenure.proto.v1.PermissionLevel.WRITE);
            admin.auth().addUser("bench", password);
            admin.auth().grantRole("bench", "bench");
            admin.auth().enable();
            return admin.auth().authenticate("bench", password, Duration.ofDays(1));
        }
    }

    /** Client endpoints, {@code 127.0.0.1:port}, in member order. */
    public List<String> endpoints() {
        return members.stream().map(MemberProcess::endpoint).toList();
    }

    /** Each member's text (dflockd protocol) port, in member order. */
    public List<Integer> textPorts() {
        return members.stream().map(MemberProcess::textPort).toList();
    }

    public int size() {
        return members.size();
    }

    public long pid(int i) {
        return members.get(i).pid();
    }

    /** The index of the current leader as the members themselves report it. */
    public int leader(Duration limit) throws InterruptedException, IOException {
        int[] leader = {-1};
        String[] exited = {null};
        boolean found = POLL.within(limit, () -> {
            leader[0] = reportedLeader();
            exited[0] = leader[0] < 0 ? exited() : null;
            return leader[0] >= 0 || exited[0] != null;
        });
        if (exited[0] != null) {
            throw new IOException(exited[0]);
        }
        if (!found) {
            throw new IOException("no leader among the members within " + limit + "; logs in " + dir + "\n" + tails());
        }
        return leader[0];
    }

    /** The index of the live member that a live member names as leader, or -1. */
    private int reportedLeader() {
        for (MemberProcess asked : members) {
            StatusResponse status = asked.statusOrNull();
            for (int j = 0; status != null && j < members.size(); j++) {
                if (members.get(j).name().equals(status.getLeader()) && members.get(j).isAlive()) {
                    return j;
                }
            }
        }
        return -1;
    }

    /** Waits until member {@code i} itself names a leader (a restarted member has rejoined). */
    public void awaitRejoined(int i, Duration limit) throws InterruptedException, IOException {
        MemberProcess member = members.get(i);
        String[] exited = {null};
        boolean rejoined = POLL.within(limit, () -> {
            StatusResponse status = member.statusOrNull();
            if (status != null && !status.getLeader().isEmpty()) {
                return true;
            }
            exited[0] = exited();
            return exited[0] != null;
        });
        if (exited[0] != null) {
            throw new IOException(exited[0]);
        }
        if (!rejoined) {
            throw new IOException("member " + member.name() + " did not rejoin within " + limit + "\n" + member.tail(20));
        }
    }

    /** What went wrong when a member exited other than by this object's kill -9 (and keeps the logs), or null. */
    private String exited() {
        for (MemberProcess m : members) {
            if (m.launched() && !m.isAlive() && m.exitValue() != 137) {
                keepDir = true;
                return "member " + m.name() + " exited with " + m.exitValue() + "; log " + m.logFile() + "\n" + m.tail(20);
            }
        }
        return null;
    }

    /** kill -9 of member {@code i} (a process this object started), waiting until it is gone. */
    public void kill9(int i) throws InterruptedException {
        members.get(i).kill9();
    }

    /** Starts member {@code i} again with its data and ports; returns without waiting. */
    public void restart(int i) throws IOException {
        members.get(i).launch();
    }

    /**
     * The bytes of live objects on member {@code i}: the total of {@code jcmd PID GC.class_histogram},
     * which collects the whole heap first and counts only what is reachable, whatever the
     * collector (G1's or ZGC's "used" figures after {@code GC.run} are not comparable). -1 when jcmd
     * is unavailable.
     */
    public long liveHeapBytes(int i) {
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        String pid = Long.toString(pid(i));
        try {
            Matcher live = LIVE_BYTES.matcher(run(jcmd, pid, "GC.class_histogram"));
            return live.find() ? Long.parseLong(live.group(1)) : -1;
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static String run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        p.waitFor(60, TimeUnit.SECONDS);
        return new String(out, StandardCharsets.UTF_8);
    }

    private String tails() {
        StringBuilder s = new StringBuilder();
        for (MemberProcess m : members) {
            s.append("--- ").append(m.name()).append('\n').append(m.tail(20));
        }
        return s.toString();
    }

    /** Stops every member started here (SIGTERM, then SIGKILL after 20 s) and deletes the data unless a start failed. */
    @Override
    public void close() throws InterruptedException {
        for (MemberProcess m : members) {
            m.beginClose();
        }
        for (MemberProcess m : members) {
            m.close();
        }
        if (keepDir) {
            System.err.println("tenure bench: member logs kept in " + dir);
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException e) {
            System.err.println("tenure bench: could not delete " + dir + ": " + e.getMessage());
        }
    }

    @Override
    public String toString() {
        return "members " + Arrays.toString(endpoints().toArray()) + " in " + dir;
    }
}

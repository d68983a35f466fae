package io.tenure.bench;

import io.tenure.client.TenureClient;
import io.tenure.proto.v1.StatusResponse;
import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
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
 * with free ports and default durability, data in a temporary directory. Only the processes
 * started here are ever signalled (by their own {@link Process} handle, so by PID).
 */
public final class Members implements AutoCloseable {
    /** The CLI's entry point; when it is not on the class path, {@link MemberMain}. */
    static final String CLI_MAIN = "io.tenure.cli.TenureCli";
    /** The last line of {@code jcmd PID GC.class_histogram}: instances and bytes of every live object. */
    private static final Pattern LIVE_BYTES = Pattern.compile("(?m)^Total\\s+\\d+\\s+(\\d+)\\s*$");

    private final Path dir;
    private final List<String> jvmOptions;
    private final List<Member> members = new ArrayList<>();
    private boolean keepDir;

    /** One member process: its fixed command line (restartable with the same data and ports) and its log. */
    private static final class Member {
        final String name;
        final int clientPort;
        final List<String> command;
        final Path log;
        Process process;

        Member(String name, int clientPort, List<String> command, Path log) {
            this.name = name;
            this.clientPort = clientPort;
            this.command = command;
            this.log = log;
        }
    }

    private Members(Path dir, List<String> jvmOptions) {
        this.dir = dir;
        this.jvmOptions = List.copyOf(jvmOptions);
    }

    /** Starts {@code count} (1 or 3) members and waits until every one names a leader. */
    public static Members start(int count, List<String> jvmOptions) throws IOException, InterruptedException {
        Members m = new Members(Files.createTempDirectory("tenure-bench"), jvmOptions);
        try {
            int[] ports = freePorts(count * 3);
            StringBuilder peers = new StringBuilder();
            for (int i = 0; i < count; i++) {
                peers.append(i == 0 ? "" : ",").append("n").append(i + 1).append("=127.0.0.1:").append(ports[i * 3 + 1]);
            }
            for (int i = 0; i < count; i++) {
                String name = "n" + (i + 1);
                List<String> args = new ArrayList<>(List.of("server", "--id", name,
                        "--client-port", Integer.toString(ports[i * 3]), "--peer-port", Integer.toString(ports[i * 3 + 1]),
                        "--http-port", Integer.toString(ports[i * 3 + 2]), "--data-dir", m.dir.resolve(name).toString()));
                if (count > 1) {
                    args.addAll(List.of("--peers", peers.toString()));
                }
                List<String> command = new ArrayList<>(m.javaCommand());
                command.addAll(args);
                m.members.add(new Member(name, ports[i * 3], command, m.dir.resolve(name + ".log")));
            }
            for (int i = 0; i < count; i++) {
                m.launch(i);
            }
            m.awaitLeader(Duration.ofSeconds(90));
            return m;
        } catch (IOException | RuntimeException | InterruptedException e) {
            m.keepDir = true;
            m.close();
            throw e;
        }
    }

    private List<String> javaCommand() {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass()));
        return command;
    }

    private static String mainClass() {
        try {
            Class.forName(CLI_MAIN, false, Members.class.getClassLoader());
            return CLI_MAIN;
        } catch (ClassNotFoundException e) {
            return MemberMain.class.getName();
        }
    }

    private void launch(int i) throws IOException {
        Member member = members.get(i);
        member.process = new ProcessBuilder(member.command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(member.log.toFile())).start();
    }

    /** Client endpoints, {@code 127.0.0.1:port}, in member order. */
    public List<String> endpoints() {
        return members.stream().map(m -> "127.0.0.1:" + m.clientPort).toList();
    }

    public int size() {
        return members.size();
    }

    public long pid(int i) {
        return members.get(i).process.pid();
    }

    /** The index of the current leader as the members themselves report it. */
    public int leader(Duration limit) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (true) {
            for (int i = 0; i < members.size(); i++) {
                if (!members.get(i).process.isAlive()) {
                    continue;
                }
                try (TenureClient c = TenureClient.builder().endpoints(List.of(endpoints().get(i)))
                        .requestTimeout(Duration.ofSeconds(2)).build()) {
                    StatusResponse status = c.status();
                    for (int j = 0; j < members.size(); j++) {
                        if (members.get(j).name.equals(status.getLeader()) && members.get(j).process.isAlive()) {
                            return j;
                        }
                    }
                } catch (RuntimeException notYet) {
                    // not serving yet, or no leader: ask again
                }
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IOException("no leader among the members within " + limit + "; logs in " + dir + "\n" + tails());
            }
            checkAlive();
            TimeUnit.MILLISECONDS.sleep(100); // polling a child process: there is nothing to wait on
        }
    }

    /** Waits until member {@code i} itself names a leader (a restarted member has rejoined). */
    public void awaitRejoined(int i, Duration limit) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + limit.toNanos();
        try (TenureClient c = TenureClient.builder().endpoints(List.of(endpoints().get(i)))
                .requestTimeout(Duration.ofSeconds(2)).build()) {
            while (true) {
                try {
                    if (!c.status().getLeader().isEmpty()) {
                        return;
                    }
                } catch (RuntimeException notYet) {
                    // still starting
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new IOException("member " + members.get(i).name + " did not rejoin within " + limit + "\n" + tail(members.get(i).log));
                }
                checkAlive();
                TimeUnit.MILLISECONDS.sleep(100);
            }
        }
    }

    private void awaitLeader(Duration limit) throws IOException, InterruptedException {
        leader(limit);
    }

    private void checkAlive() throws IOException {
        for (Member m : members) {
            if (m.process != null && !m.process.isAlive() && m.process.exitValue() != 137) {
                keepDir = true;
                throw new IOException("member " + m.name + " exited with " + m.process.exitValue() + "; log " + m.log + "\n" + tail(m.log));
            }
        }
    }

    /** kill -9 of member {@code i} (a process this object started), waiting until it is gone. */
    public void kill9(int i) throws InterruptedException {
        Process p = members.get(i).process;
        p.destroyForcibly();
        p.waitFor(30, TimeUnit.SECONDS);
    }

    /** Starts member {@code i} again with its data and ports; returns without waiting. */
    public void restart(int i) throws IOException {
        launch(i);
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
        for (Member m : members) {
            s.append("--- ").append(m.name).append('\n').append(tail(m.log));
        }
        return s.toString();
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size())) + "\n";
        } catch (IOException e) {
            return "";
        }
    }

    /** Stops every member started here (SIGTERM, then SIGKILL after 20 s) and deletes the data unless a start failed. */
    @Override
    public void close() throws InterruptedException {
        for (Member m : members) {
            if (m.process != null && m.process.isAlive()) {
                m.process.destroy();
            }
        }
        for (Member m : members) {
            if (m.process != null && !m.process.waitFor(20, TimeUnit.SECONDS)) {
                m.process.destroyForcibly();
                m.process.waitFor(10, TimeUnit.SECONDS);
            }
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

    static int[] freePorts(int n) throws IOException {
        List<ServerSocket> held = new ArrayList<>();
        try {
            int[] ports = new int[n];
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                held.add(s);
                ports[i] = s.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
    }

    @Override
    public String toString() {
        return "members " + Arrays.toString(endpoints().toArray()) + " in " + dir;
    }
}

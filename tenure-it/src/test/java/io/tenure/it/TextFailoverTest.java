package io.tenure.it;

import io.tenure.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The text protocol against three {@code tenure server} processes while the leader is killed, with
 * a client written from the protocol description alone ({@link Line}: three lines out, one line
 * back): holds taken on a follower and their two-phase places survive the leader change, a token
 * is valid on every member (a client whose member died renews and releases on another), writes
 * sent to followers are forwarded (never {@code error_not_leader}), and workers cycling one lock
 * on every member through the kill never see it held twice and see its fencing tokens only increase.
 *
 * <p>CI runs one kill; {@code mvn -B -ntp test -pl tenure-it -Pfaults-long -Dtest=TextFailoverTest}
 * runs {@code tenure.it.textKills} of them.
 */
@ExtendWith(ItLogs.class)
class TextFailoverTest {
    static final int KILLS = ItScale.of("textKills", 1, 5);
    /** The cluster's shortest TTL (10 election timeouts, at least 5 s): a dead worker's hold ends this soon. */
    static final int TTL_S = 5;

    @TempDir
    Path work;

    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void holdsPlacesAndTokensSurviveALeaderKillAndNoLockIsHeldTwice() throws Exception {
        try (Cluster cluster = Cluster.start(work, 3)) {
            for (int round = 0; round < KILLS; round++) {
                int kill = round;
                String leader = cluster.leader();
                List<String> followers = cluster.followers();
                String follower = followers.get(0);
                int followerPort = cluster.member(follower).textPort();

                try (Line holder = Line.open(followerPort);
                     Line queued = Line.open(followerPort);
                     Line onLeader = Line.open(cluster.member(leader).textPort())) {
                    String held = holder.call("l", "held-" + kill, "10 30");
                    assertThat(held).matches("ok [0-9a-f]{32} 30 \\d+");
                    assertThat(queued.call("e", "held-" + kill, "30")).isEqualTo("queued");
                    String other = onLeader.call("l", "other-" + kill, "10 30");
                    assertThat(other).matches("ok [0-9a-f]{32} 30 \\d+");

                    Workers workers = new Workers(cluster, "job-" + kill, 3);
                    workers.start();
                    workers.awaitGrants(5);

                    cluster.kill9(leader);
                    String next = cluster.awaitNewLeader(leader, Cluster.ELECTION_LIMIT);

                    // The follower's holds stay valid: its connection renews them once a leader commits.
                    assertThat(retry(() -> holder.call("n", "held-" + kill, token(held) + " 30"))).isEqualTo("ok 30 " + fence(held));
                    // A token is valid on every member: the client whose member died renews and releases elsewhere.
                    try (Line elsewhere = Line.open(cluster.member(followers.get(1)).textPort())) {
                        assertThat(retry(() -> elsewhere.call("n", "other-" + kill, token(other) + " 30"))).isEqualTo("ok 30 " + fence(other));
                        assertThat(elsewhere.call("r", "other-" + kill, token(other))).isEqualTo("ok");
                    }
                    // The place queued on the follower before the kill is granted after the holder releases.
                    assertThat(holder.call("r", "held-" + kill, token(held))).isEqualTo("ok");
                    String handedOver = queued.call("w", "held-" + kill, "20");
                    assertThat(handedOver).matches("ok [0-9a-f]{32} 30 \\d+");
                    assertThat(Long.parseLong(fence(handedOver))).isGreaterThan(Long.parseLong(fence(held)));

                    int before = workers.grants();
                    workers.awaitGrants(before + 5);
                    workers.stop();
                    assertThat(workers.violations()).isEmpty();
                    assertThat(workers.notLeaderAnswers()).isZero();

                    cluster.restart(leader);
                    cluster.member(leader).awaitServing(Cluster.START_LIMIT, true);
                    cluster.awaitCaughtUp(leader);
                    assertThat(next).isNotEqualTo(leader);
                }
            }
        }
    }

    /** Retries a request answered {@code error} (no leader yet) until a deadline. */
    private static String retry(Request request) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        String answer;
        do {
            answer = request.send();
            if (!answer.equals("error")) {
                return answer;
            }
            Await.untilTime(System.nanoTime() + Duration.ofMillis(100).toNanos());
        } while (System.nanoTime() < deadline);
        return answer;
    }

    private interface Request {
        String send() throws Exception;
    }

    static String token(String grant) {
        return grant.split(" ")[1];
    }

    static String fence(String grant) {
        return grant.split(" ")[3];
    }

    /**
     * Workers that acquire and release one lock, each through the text port of a member it picks in
     * turn, in a loop. Each hold is recorded from its grant's answer to the sending of its release,
     * with the release's answer; a hold whose member died (no answer) is left out of the checks.
     */
    private static final class Workers {
        /** One hold as its worker saw it. */
        private record Hold(int worker, long fence, long granted, long releaseSent, String released) {}

        private final Cluster cluster;
        private final String key;
        private final int count;
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicInteger notLeader = new AtomicInteger();
        private final List<Hold> holds = java.util.Collections.synchronizedList(new ArrayList<>());
        private final List<CompletableFuture<Void>> loops = new ArrayList<>();

        Workers(Cluster cluster, String key, int count) {
            this.cluster = cluster;
            this.key = key;
            this.count = count;
        }

        void start() {
            for (int i = 0; i < count; i++) {
                int worker = i;
                loops.add(CompletableFuture.runAsync(() -> loop(worker)));
            }
        }

        private void loop(int worker) {
            int next = worker;
            while (running.get()) {
                List<String> live = cluster.live();
                String member = live.get(next++ % live.size());
                try (Line line = Line.open(cluster.member(member).textPort())) {
                    while (running.get()) {
                        String grant = line.call("l", key, "2 " + TTL_S);
                        if (grant.startsWith("error_not_leader")) {
                            notLeader.incrementAndGet();
                        }
                        if (!grant.startsWith("ok ")) {
                            continue;
                        }
                        long granted = System.nanoTime();
                        // Work while holding: a renewal through the log, so a hold spans a round trip or more.
                        line.call("n", key, token(grant));
                        long releaseSent = System.nanoTime();
                        String released = line.call("r", key, token(grant));
                        holds.add(new Hold(worker, Long.parseLong(fence(grant)), granted, releaseSent, released));
                    }
                } catch (IOException gone) {
                    // Its member died: the answer of its last request is unknown, and its lease ends what it held.
                }
            }
        }

        int grants() {
            return holds.size();
        }

        void awaitGrants(int n) {
            Await.PROCESSES.until(n + " grants to the workers", Duration.ofSeconds(90), () -> holds.size() >= n);
        }

        void stop() throws Exception {
            running.set(false);
            CompletableFuture.allOf(loops.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);
        }

        /**
         * A hold released with {@code ok} was still held when its release applied, so no other
         * grant may have been answered between its grant and its release; and a hold that began
         * after another ended has the greater fencing token. Fencing tokens are never repeated.
         */
        List<String> violations() {
            List<Hold> all = List.copyOf(holds);
            List<String> found = new ArrayList<>();
            java.util.Set<Long> fences = new java.util.HashSet<>();
            for (Hold a : all) {
                if (!fences.add(a.fence())) {
                    found.add("fence " + a.fence() + " granted twice");
                }
                for (Hold b : all) {
                    if (a == b) {
                        continue;
                    }
                    if (a.released().equals("ok") && b.granted() > a.granted() && b.granted() < a.releaseSent()) {
                        found.add("worker " + b.worker() + " was granted fence " + b.fence() + " while worker " + a.worker()
                                + " held fence " + a.fence() + " (released ok later)");
                    }
                    if (a.releaseSent() < b.granted() && a.fence() >= b.fence()) {
                        found.add("fence " + b.fence() + " granted after the hold with fence " + a.fence() + " ended");
                    }
                }
            }
            return found;
        }

        int notLeaderAnswers() {
            return notLeader.get();
        }
    }

    /** A text connection, from the protocol alone: a request is three lines, its answer one line. */
    static final class Line implements AutoCloseable {
        private final Socket socket;
        private final OutputStream out;
        private final BufferedReader in;

        private Line(Socket socket) throws IOException {
            this.socket = socket;
            this.out = socket.getOutputStream();
            this.in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        }

        static Line open(int port) throws IOException {
            Socket socket = new Socket();
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.setSoTimeout(60_000);
            return new Line(socket);
        }

        /** Sends a request and returns its answer, skipping push lines. */
        String call(String command, String key, String arg) throws IOException {
            out.write((command + "\n" + key + "\n" + arg + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            while (true) {
                String line = in.readLine();
                if (line == null) {
                    throw new IOException("connection closed");
                }
                if (!line.startsWith("leader ") && !line.startsWith("sig ") && !line.startsWith("watch ")) {
                    return line;
                }
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}

package io.tenure.it;

import com.google.protobuf.ByteString;
import io.tenure.core.TenureState;
import io.tenure.proto.v1.DescribeRequest;
import io.tenure.proto.v1.LeaseTimeToLiveRequest;
import io.tenure.proto.v1.LeaseTimeToLiveResponse;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.LockState;
import io.tenure.proto.v1.UnlockRequest;
import io.tenure.server.ServerConfig;
import io.tenure.testing.Await;
import io.tenure.testing.ChildJava;
import io.tenure.testing.FreePorts;
import io.tenure.testing.MemberProcess;
import io.tenure.testing.Waiters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Backup and disaster recovery end to end, with real processes: {@code tenure snapshot save} from a
 * running member, the member killed, {@code tenure snapshot restore} into a new data directory,
 * and a new member started from it with the locks, holders, waiters and leases of the backup,
 * granting fencing tokens above every one issued before.
 */
@ExtendWith(ItLogs.class)
class SnapshotBackupTest {
    /** A CLI JVM start and its work, on a loaded 2-core machine. */
    static final Duration CLI_LIMIT = Duration.ofSeconds(60);
    /** Long enough to outlive the kill, the restore and the restart: nothing renews these leases. */
    static final Duration LEASE_TTL = Duration.ofMinutes(10);

    @TempDir
    Path work;

    /** What a {@code tenure} command printed and how it exited. */
    record Run(int exit, String out, String err) {
        String field(String name) {
            Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + ": (.*)$").matcher(out);
            assertThat(m.find()).as(name + " in:\n" + out + err).isTrue();
            return m.group(1);
        }
    }

    private Run tenure(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(ChildJava.command(MemberProcess.CLI_MAIN));
        command.addAll(List.of(args));
        Path out = Files.createTempFile(work, "cli", ".out");
        Path err = Files.createTempFile(work, "cli", ".err");
        ItLogs.register(err);
        Process process = new ProcessBuilder(command).directory(work.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        try {
            assertThat(process.waitFor(CLI_LIMIT.toMillis(), TimeUnit.MILLISECONDS))
                    .as("tenure " + String.join(" ", args) + " exits within " + CLI_LIMIT).isTrue();
        } finally {
            if (process.isAlive()) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
        return new Run(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    }

    private static LockResponse lock(MemberProcess member, String name, long lease, String metadata) {
        return member.blocking().lock(LockRequest.newBuilder().setName(name).setLeaseId(lease)
                .setMetadata(ByteString.copyFromUtf8(metadata)).setTimeoutMs(0).build());
    }

    /** Queues {@code lease} for {@code name} with no time limit; returns once the member shows it waiting. */
    private static void queue(MemberProcess member, String name, long lease) {
        Waiters.queue(member.channel(), name, lease, Cluster.ELECTION_LIMIT);
    }

    private static LockState describe(MemberProcess member, String name) {
        return member.blocking().describe(DescribeRequest.newBuilder().setName(name).build()).getLock();
    }

    /** What a backup taken by {@link #backUpAMemberWithLocksThenLoseIt} holds, as the original member showed it. */
    record Backup(Path file, long revision, long highestToken, Map<String, LockState> locks, long alice, long bob,
                  long carol, long dave) {
    }

    /**
     * Starts a member, makes some lock history, holds two locks with three waiters between them,
     * saves a backup with {@code tenure snapshot save}, then kills the member (kill -9): the disaster.
     */
    private Backup backUpAMemberWithLocksThenLoseIt() throws Exception {
        Path backup = work.resolve("backups").resolve("tenure.snap");
        Map<String, LockState> before = new TreeMap<>();
        long highestToken = 0;
        try (MemberProcess original = ItLogs.single(work.resolve("original")).start()) {
            long alice = RawLease.grant(original, LEASE_TTL, "alice");
            long bob = RawLease.grant(original, LEASE_TTL, "bob");
            long carol = RawLease.grant(original, LEASE_TTL, "carol");
            long dave = RawLease.grant(original, LEASE_TTL, "dave");
            // Some history first: grants and releases, so that tokens have moved on.
            for (int i = 0; i < 5; i++) {
                LockResponse churn = lock(original, "churn", dave, "round " + i);
                assertThat(churn.getAcquired()).isTrue();
                highestToken = Math.max(highestToken, churn.getFencingToken());
                long next = original.blocking().unlock(UnlockRequest.newBuilder().setKey("churn").setLeaseId(dave)
                        .setFencingToken(churn.getFencingToken()).build()).getNextFencingToken();
                highestToken = Math.max(highestToken, next);
            }
            highestToken = Math.max(highestToken, lock(original, "jobs/report", alice, "report of the day").getFencingToken());
            highestToken = Math.max(highestToken, lock(original, "jobs/compact", bob, "").getFencingToken());
            queue(original, "jobs/report", bob);
            queue(original, "jobs/report", carol);
            queue(original, "jobs/compact", dave);
            for (String name : List.of("jobs/report", "jobs/compact")) {
                before.put(name, describe(original, name));
            }

            Run saved = tenure("snapshot", "save", backup.toString(), "--endpoints", original.endpoint());

            assertThat(saved.exit()).as(saved.err()).isZero();
            long revision = Long.parseLong(saved.field("revision"));
            assertThat(revision).isGreaterThanOrEqualTo(highestToken);
            assertThat(saved.field("size")).isEqualTo(Long.toString(Files.size(backup)));
            assertThat(saved.field("sha256")).matches("[0-9a-f]{64}");
            try (Stream<Path> files = Files.list(backup.getParent())) {
                assertThat(files).as("written atomically: no temporary file left").containsExactly(backup);
            }
            // The disaster: the only member is gone for good.
            original.kill9();
            return new Backup(backup, revision, highestToken, before, alice, bob, carol, dave);
        }
    }

    /** Checks that {@code member} has the backup's locks, holders, waiters (in order) and leases. */
    private static void assertHoldsTheBackup(MemberProcess member, Backup backup) {
        for (Map.Entry<String, LockState> was : backup.locks().entrySet()) {
            LockState is = describe(member, was.getKey());
            assertThat(is.getHeld()).isTrue();
            assertThat(is.getHolder()).isEqualTo(was.getValue().getHolder());
            assertThat(is.getLeaseId()).isEqualTo(was.getValue().getLeaseId());
            assertThat(is.getFencingToken()).isEqualTo(was.getValue().getFencingToken());
            assertThat(is.getMetadata()).isEqualTo(was.getValue().getMetadata());
            assertThat(is.getCreateRevision()).isEqualTo(was.getValue().getCreateRevision());
            assertThat(is.getWaitersList()).as("waiters of " + was.getKey() + ", in order")
                    .isEqualTo(was.getValue().getWaitersList());
        }
        for (long lease : List.of(backup.alice(), backup.bob(), backup.carol(), backup.dave())) {
            LeaseTimeToLiveResponse ttl = member.blocking().leaseTimeToLive(LeaseTimeToLiveRequest.newBuilder()
                    .setId(lease).setKeys(true).build());
            assertThat(ttl.getTtlMs()).as("lease " + lease + " lives on").isPositive();
            assertThat(ttl.getGrantedTtlMs()).isEqualTo(LEASE_TTL.toMillis());
        }
    }

    /** {@code --raft-engine ENGINE}, or nothing (the default engine) for {@code null}. */
    private static List<String> engine(String engine) {
        return engine == null ? List.of() : List.of("--raft-engine", engine);
    }

    /** {@code args} followed by {@code more}. */
    private static String[] args(List<String> more, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(more);
        return all.toArray(String[]::new);
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void aBackupRestoredIntoANewMemberKeepsLocksHoldersWaitersAndLeasesAndItsTokensStayLarger() throws Exception {
        restoreIntoANewMemberAlone(null);
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void aBackupRestoredIntoANewJRaftMemberKeepsLocksHoldersWaitersAndLeasesAndItsTokensStayLarger() throws Exception {
        restoreIntoANewMemberAlone("jraft");
    }

    /**
     * Restores a backup with {@code tenure snapshot restore [--raft-engine ENGINE]} and starts a
     * member alone (no {@code --peers}) on it, on that engine: the backup's state, larger tokens.
     */
    private void restoreIntoANewMemberAlone(String engineName) throws Exception {
        Backup backup = backUpAMemberWithLocksThenLoseIt();
        long alice = backup.alice();
        long bob = backup.bob();
        long carol = backup.carol();
        long highestToken = backup.highestToken();
        Map<String, LockState> before = backup.locks();

        Path restoredDir = work.resolve("restored");
        Run restored = tenure(args(engine(engineName), "snapshot", "restore", backup.file().toString(), "--data-dir",
                restoredDir.toString()));
        assertThat(restored.exit()).as(restored.err()).isZero();
        assertThat(restored.field("locks")).isEqualTo("2");
        assertThat(restored.field("waiters")).isEqualTo("3");
        assertThat(restored.field("leases")).isEqualTo("4");
        String made = engineName != null ? engineName : io.tenure.server.SnapshotRestore.DEFAULT_ENGINE.flag();
        assertThat(restored.field("raft_engine")).isEqualTo(made);
        assertThat(Files.readString(restoredDir.resolve("member.properties"))).contains("engine=" + made);
        assertThat(restoredDir.resolve(made.equals("jraft") ? "jraft" : "raft")).isDirectory();

        try (MemberProcess member = ItLogs.member("n1", restoredDir).args(engine(engineName)).build().start()) {
            assertHoldsTheBackup(member, backup);
            Run described = tenure("describe", "jobs/report", "--endpoints", member.endpoint());
            assertThat(described.exit()).as(described.err()).isZero();
            assertThat(described.field("holder")).isEqualTo("alice");
            assertThat(described.field("lease")).isEqualTo(Long.toString(alice));
            assertThat(described.field("metadata")).isEqualTo("report of the day");
            assertThat(described.out().lines().filter(l -> l.startsWith("waiter: ")).toList()).hasSize(2)
                    .satisfies(w -> assertThat(w.get(0)).contains("lease=" + bob + " client_id=bob"))
                    .satisfies(w -> assertThat(w.get(1)).contains("lease=" + carol + " client_id=carol"));
            long fresh = RawLease.grant(member, Duration.ofMinutes(1), "after-the-restore");
            LockResponse grant = lock(member, "jobs/new", fresh, "");
            assertThat(grant.getAcquired()).isTrue();
            assertThat(grant.getFencingToken()).as("a new grant's token is above every token before the backup")
                    .isGreaterThan(highestToken);
            // A hand-off to a restored waiter takes a larger token still.
            long handedOver = member.blocking().unlock(UnlockRequest.newBuilder().setKey("jobs/report").setLeaseId(alice)
                    .setFencingToken(before.get("jobs/report").getFencingToken()).build()).getNextFencingToken();
            assertThat(handedOver).isGreaterThan(grant.getFencingToken());
            assertThat(describe(member, "jobs/report").getHolder()).isEqualTo("bob");
        }
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void aRestoredMemberGrowsIntoANewClusterThatOutlivesIt() throws Exception {
        restoreAndGrowIntoANewCluster(null);
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void aRestoredJRaftMemberGrowsIntoANewClusterThatOutlivesIt() throws Exception {
        restoreAndGrowIntoANewCluster("jraft");
    }

    /**
     * Restores a backup with {@code tenure snapshot restore [--raft-engine ENGINE]}, starts it with
     * {@code --peers} naming only itself, adds two new members ({@code --join}, {@code tenure member
     * add}), all on that engine, and kills the seed: the other two have the backup and go on.
     */
    private void restoreAndGrowIntoANewCluster(String engineName) throws Exception {
        Backup backup = backUpAMemberWithLocksThenLoseIt();
        Path restoredDir = work.resolve("n1");
        Run restored = tenure(args(engine(engineName), "snapshot", "restore", backup.file().toString(), "--data-dir",
                restoredDir.toString(), "--id", "n1", "--cluster", "recovered"));
        assertThat(restored.exit()).as(restored.err()).isZero();
        List<String> cluster = new ArrayList<>(List.of("--cluster", "recovered"));
        cluster.addAll(engine(engineName));

        List<MemberProcess> started = new ArrayList<>();
        try {
            int[] p1 = FreePorts.take(3);
            MemberProcess n1 = ItLogs.member("n1", restoredDir).logFile(work.resolve("n1.log")).clientPort(p1[0]).peerPort(p1[1])
                    .httpPort(p1[2]).peers("n1=127.0.0.1:" + p1[1]).args(cluster).build();
            started.add(n1);
            n1.start();
            // Members are added one at a time, each new and empty, joining and brought up to date by the leader.
            String peers = "n1=" + n1.peerAddress();
            for (String name : List.of("n2", "n3")) {
                int[] p = FreePorts.take(3);
                peers += "," + name + "=127.0.0.1:" + p[1];
                MemberProcess joining = ItLogs.member(name, work.resolve(name)).logFile(work.resolve(name + ".log")).clientPort(p[0])
                        .peerPort(p[1]).httpPort(p[2]).peers(peers).args(cluster).args(List.of("--join")).build();
                started.add(joining);
                joining.launch();
                joining.awaitServing(Cluster.START_LIMIT, false);
                Run added = tenure("member", "add", name, joining.peerAddress(), "--endpoints", n1.endpoint(),
                        "--request-timeout", "60s");
                assertThat(added.exit()).as(added.out() + added.err()).isZero();
            }
            MemberProcess n3 = started.get(2);
            Await.PROCESSES.until("n3 has the backup's state", Cluster.START_LIMIT, () -> describe(n3, "jobs/report").getHeld());
            assertHoldsTheBackup(n3, backup);

            // The seed is not special once the others have the state: the cluster goes on without it.
            n1.kill9();
            MemberProcess n2 = started.get(1);
            long fresh = Await.PROCESSES.value("a lease from the cluster without n1", Cluster.ELECTION_LIMIT,
                    () -> RawLease.grant(n2, Duration.ofSeconds(60), "after-the-seed"));
            LockResponse grant = lock(n2, "jobs/after-seed", fresh, "");
            assertThat(grant.getAcquired()).isTrue();
            assertThat(grant.getFencingToken()).isGreaterThan(backup.highestToken());
            assertHoldsTheBackup(n3, backup);
        } finally {
            for (MemberProcess member : started) {
                member.close();
            }
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aDamagedBackupOrANonEmptyDirectoryIsRefusedAndNothingIsWritten() throws Exception {
        Path good = work.resolve("good.snap");
        try (OutputStream out = Files.newOutputStream(good)) {
            new TenureState().writeSnapshot(out);
        }
        byte[] bytes = Files.readAllBytes(good);
        byte[] flipped = bytes.clone();
        flipped[bytes.length - 1] ^= 0x01; // the stored CRC32C: the content no longer matches it
        Path corrupt = Files.write(work.resolve("corrupt.snap"), flipped);

        Run refused = tenure("snapshot", "restore", corrupt.toString(), "--data-dir", work.resolve("from-corrupt").toString());
        assertThat(refused.exit()).as(refused.out() + refused.err()).isEqualTo(1);
        assertThat(refused.err()).contains("corrupt.snap").contains("is not a usable Tenure snapshot").contains("checksum");
        assertThat(work.resolve("from-corrupt")).doesNotExist();

        Path occupied = Files.createDirectories(work.resolve("occupied"));
        Files.writeString(occupied.resolve("old-member.properties"), "cluster=other\n");
        Run notEmpty = tenure("snapshot", "restore", good.toString(), "--data-dir", occupied.toString());
        assertThat(notEmpty.exit()).as(notEmpty.out() + notEmpty.err()).isEqualTo(1);
        assertThat(notEmpty.err()).contains("is not empty");
        try (Stream<Path> files = Files.list(occupied)) {
            assertThat(files).containsExactly(occupied.resolve("old-member.properties"));
        }

        Run intoAFile = tenure("snapshot", "restore", good.toString(), "--data-dir", good.toString());
        assertThat(intoAFile.exit()).isEqualTo(1);
        assertThat(intoAFile.err()).contains("is a file");
        assertThat(Files.readAllBytes(good)).isEqualTo(bytes);
    }
}

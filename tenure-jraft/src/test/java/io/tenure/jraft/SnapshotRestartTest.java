package io.tenure.jraft;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import com.alipay.sofa.jraft.Status;
import com.alipay.sofa.jraft.conf.Configuration;
import com.alipay.sofa.jraft.entity.PeerId;
import com.alipay.sofa.jraft.entity.Task;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A member that took a snapshot is stopped and restarted: it loads the snapshot, then the entries after it. */
class SnapshotRestartTest {
  private static final String GROUP = "snapshots";
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  @TempDir Path dir;
  private final Map<PeerId, RaftMember> members = new LinkedHashMap<>();

  @AfterEach
  void stopMembers() throws InterruptedException {
    for (RaftMember member : members.values()) {
      member.stop();
    }
  }

  @Test
  void aRestartedMemberLoadsItsSnapshotAndTheEntriesAfterIt() throws Exception {
    Set<PeerId> peers = new LinkedHashSet<>();
    while (peers.size() < 3) {
      peers.add(RaftMember.freePeer());
    }
    Configuration conf = new Configuration(peers);
    for (PeerId peer : peers) {
      members.put(peer, RaftMember.start(GROUP, peer, conf, memberDir(peer)));
    }
    RaftMember leader = awaitLeader();
    RaftMember follower = members.values().stream().filter(m -> m != leader).findFirst().orElseThrow();

    List<String> beforeSnapshot = entries("before-snapshot", 50);
    applyAndAwait(leader, beforeSnapshot);
    List<String> afterSnapshot = entries("after-snapshot", 30);
    List<String> whileStopped = entries("while-stopped", 20);

    // snapshot on the follower, once it applied the first 50
    Await.until(TIMEOUT, follower.id + " applied 50", () -> follower.stateMachine.size() == beforeSnapshot.size());
    CompletableFuture<Status> snapshot = new CompletableFuture<>();
    follower.node().snapshot(snapshot::complete);
    assertThat(snapshot.get(TIMEOUT.toSeconds(), SECONDS).isOk()).as("snapshot status").isTrue();

    applyAndAwait(leader, afterSnapshot);
    Await.until(TIMEOUT, follower.id + " applied 80",
        () -> follower.stateMachine.size() == beforeSnapshot.size() + afterSnapshot.size());
    members.remove(follower.id).stop();

    applyAndAwait(leader, whileStopped);
    RaftMember restarted = RaftMember.start(GROUP, follower.id, conf, memberDir(follower.id));
    members.put(restarted.id, restarted);

    List<String> all = new ArrayList<>(beforeSnapshot);
    all.addAll(afterSnapshot);
    all.addAll(whileStopped);
    Await.until(TIMEOUT, "the restarted member applied all " + all.size(),
        () -> restarted.stateMachine.size() >= all.size());
    assertThat(restarted.stateMachine.snapshotLoads()).isEqualTo(1);
    assertThat(restarted.stateMachine.loadedFromSnapshot()).containsExactlyElementsOf(beforeSnapshot);
    assertThat(restarted.stateMachine.entries()).containsExactlyElementsOf(all);
  }

  private Path memberDir(PeerId peer) {
    return dir.resolve("member-" + peer.getPort());
  }

  private RaftMember awaitLeader() throws InterruptedException {
    AtomicReference<RaftMember> leader = new AtomicReference<>();
    Await.until(TIMEOUT, "a leader", () -> {
      members.values().stream().filter(RaftMember::isLeader).findFirst().ifPresent(leader::set);
      return leader.get() != null;
    });
    return leader.get();
  }

  private static List<String> entries(String prefix, int count) {
    return IntStream.range(0, count).mapToObj(i -> prefix + "-" + i).toList();
  }

  /** Applies the entries through the leader and waits until each is committed and applied there. */
  private static void applyAndAwait(RaftMember leader, List<String> entries) throws InterruptedException {
    List<Status> failures = new ArrayList<>();
    CountDownLatch applied = new CountDownLatch(entries.size());
    for (String entry : entries) {
      leader.node().apply(new Task(ByteBuffer.wrap(entry.getBytes(UTF_8)), status -> {
        if (!status.isOk()) {
          synchronized (failures) {
            failures.add(status);
          }
        }
        applied.countDown();
      }));
    }
    assertThat(applied.await(TIMEOUT.toSeconds(), SECONDS)).as("every task's closure ran").isTrue();
    synchronized (failures) {
      assertThat(failures).isEmpty();
    }
  }
}

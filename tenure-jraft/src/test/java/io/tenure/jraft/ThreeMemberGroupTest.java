package io.tenure.jraft;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import com.alipay.sofa.jraft.Status;
import com.alipay.sofa.jraft.conf.Configuration;
import com.alipay.sofa.jraft.entity.PeerId;
import com.alipay.sofa.jraft.entity.Task;
import com.google.protobuf.RuntimeVersion;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Three JRaft members in this JVM, next to protobuf-java 4 on the same classpath. */
class ThreeMemberGroupTest {
  private static final String GROUP = "three";
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  @TempDir Path dir;
  private final List<RaftMember> members = new ArrayList<>();

  @AfterEach
  void stopMembers() throws InterruptedException {
    for (RaftMember member : members) {
      member.stop();
    }
  }

  @Test
  void aLeaderIsElectedAndEveryMemberAppliesItsEntriesInOrder() throws Exception {
    Set<PeerId> peers = new LinkedHashSet<>();
    while (peers.size() < 3) {
      peers.add(RaftMember.freePeer());
    }
    Configuration conf = new Configuration(peers);
    for (PeerId peer : peers) {
      members.add(RaftMember.start(GROUP, peer, conf, dir.resolve("member-" + peer.getPort())));
    }

    Await.until(TIMEOUT, "a leader among " + peers, () -> members.stream().anyMatch(RaftMember::isLeader));
    RaftMember leader = members.stream().filter(RaftMember::isLeader).findFirst().orElseThrow();
    for (RaftMember member : members) {
      Await.until(TIMEOUT, member.id + " knows the leader", () -> leader.id.equals(member.node().getLeaderId()));
    }

    List<String> entries = IntStream.range(0, 100).mapToObj(i -> "entry-" + i).toList();
    List<Status> failures = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch committed = new CountDownLatch(entries.size());
    for (String entry : entries) {
      leader.node().apply(new Task(ByteBuffer.wrap(entry.getBytes(UTF_8)), status -> {
        if (!status.isOk()) {
          failures.add(status);
        }
        committed.countDown();
      }));
    }
    assertThat(committed.await(TIMEOUT.toSeconds(), SECONDS)).as("every task's closure ran").isTrue();
    assertThat(failures).isEmpty();

    for (RaftMember member : members) {
      Await.until(TIMEOUT, member.id + " applied " + entries.size() + " entries",
          () -> member.stateMachine.size() >= entries.size());
      assertThat(member.stateMachine.entries()).as(member.id.toString()).containsExactlyElementsOf(entries);
    }

    // protobuf-java 4 (com.google.protobuf) works in the same JVM as JRaft's relocated 3.5.1
    RuntimeVersion.validateProtobufGencodeVersion(RuntimeVersion.RuntimeDomain.PUBLIC, 4, 33, 0, "", "this test");
    Struct struct = Struct.newBuilder()
        .putFields("leader", Value.newBuilder().setStringValue(leader.id.toString()).build())
        .putFields("entries", Value.newBuilder().setNumberValue(entries.size()).build())
        .build();
    assertThat(Struct.parseFrom(struct.toByteArray())).isEqualTo(struct);
  }
}

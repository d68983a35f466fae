package io.tenure.jraft;

import static org.assertj.core.api.Assertions.assertThat;

import com.alipay.sofa.jraft.conf.Configuration;
import com.alipay.sofa.jraft.entity.PeerId;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A group of one elects itself at once. Prints how long each fresh start took, from
 * RaftGroupService.start() to isLeader(), after one warm-up start: a figure, not an assertion.
 */
class SingleMemberTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final int MEASURED_STARTS = 5;

  @TempDir Path dir;

  @Test
  void aFreshSingleMemberBecomesLeader() throws Exception {
    List<Double> millis = new ArrayList<>();
    List<Double> inStart = new ArrayList<>();
    for (int start = 0; start <= MEASURED_STARTS; start++) {
      PeerId peer = RaftMember.freePeer();
      RaftMember member = RaftMember.start("single", peer, new Configuration(List.of(peer)), dir.resolve("start-" + start));
      try {
        Await.until(TIMEOUT, peer + " leads", member::isLeader);
        double elapsed = (System.nanoTime() - member.startNanos) / 1e6;
        if (start > 0) {
          millis.add(elapsed);
          inStart.add((member.startedNanos - member.startNanos) / 1e6);
        }
        assertThat(member.node().getLeaderId()).isEqualTo(peer);
      } finally {
        member.stop();
      }
    }
    System.out.printf("single member, start() to isLeader (ms) after one warm-up: %s, median %.1f; of which in start(): %s%n",
        format(millis), median(millis), format(inStart));
  }

  private static double median(List<Double> values) {
    return values.stream().sorted().toList().get(values.size() / 2);
  }

  private static List<String> format(List<Double> millis) {
    return millis.stream().map(ms -> String.format("%.1f", ms)).toList();
  }
}

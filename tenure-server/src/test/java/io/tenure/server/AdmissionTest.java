package io.tenure.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.server.metrics.ServerMetrics;
import io.tenure.server.raft.Proposer.Lane;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** When a member sheds new work: on the measured age and depth of what waits for the log, never on a guess. */
class AdmissionTest {
    private final Map<Lane, Long> oldestMillis = new EnumMap<>(Map.of(Lane.RENEWAL, 0L, Lane.WORK, 0L));
    private final Map<Lane, Integer> waiting = new EnumMap<>(Map.of(Lane.RENEWAL, 0, Lane.WORK, 0));
    private final ServerMetrics metrics = new ServerMetrics();
    private final Admission admission = new Admission(now -> new Admission.Backlog.Waits(
            TimeUnit.MILLISECONDS.toNanos(oldestMillis.get(Lane.RENEWAL)), TimeUnit.MILLISECONDS.toNanos(oldestMillis.get(Lane.WORK)),
            waiting.get(Lane.WORK)), metrics, Duration.ofMillis(200), () -> 0L);

    @Test
    void aMemberWhoseLogKeepsUpTakesEverything() {
        oldestMillis.put(Lane.WORK, 199L);
        oldestMillis.put(Lane.RENEWAL, 49L);
        waiting.put(Lane.WORK, Admission.MAX_WAITING - 1);

        admission.admit("acquire");
        admission.admit("grant");

        assertThat(metrics.scrape()).doesNotContain("overload_shed_total{");
    }

    @Test
    void newWorkThatWaitedTheLimitShedsTheNextWithAHintOfTwiceItsAge() {
        oldestMillis.put(Lane.WORK, 300L);

        assertThatThrownBy(() -> admission.admit("acquire")).isInstanceOfSatisfying(Overloaded.class, shed -> {
            assertThat(shed.kind()).isEqualTo("acquire");
            assertThat(shed.retryAfterMillis()).isEqualTo(600);
            assertThat(shed.getMessage()).contains("new work has waited 300 ms", "acquire not taken", "retry in about 600 ms");
        });
        assertThat(metrics.scrape()).contains("overload_shed_total{kind=\"acquire\"} 1.0");
    }

    @Test
    void aShedReadStartsNoBarrierAndAnAdmittedOneIsTheBarrier() {
        java.util.concurrent.atomic.AtomicInteger barriers = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.CompletableFuture<Void> barrier = new java.util.concurrent.CompletableFuture<>();

        assertThat(admission.admitRead(() -> {
            barriers.incrementAndGet();
            return barrier;
        })).isSameAs(barrier);

        oldestMillis.put(Lane.WORK, 300L);
        java.util.concurrent.CompletableFuture<Void> shed = admission.admitRead(() -> {
            barriers.incrementAndGet();
            return barrier;
        });
        assertThat(shed).isCompletedExceptionally();
        assertThatThrownBy(shed::join).hasCauseInstanceOf(Overloaded.class);
        assertThat(barriers).as("no barrier for the shed read").hasValue(1);
        assertThat(metrics.scrape()).contains("overload_shed_total{kind=\"read\"} 1.0");
    }

    @Test
    void renewalsWaitingAQuarterOfTheLimitShedNewWork() {
        oldestMillis.put(Lane.RENEWAL, 50L);

        assertThatThrownBy(() -> admission.admit("grant")).isInstanceOfSatisfying(Overloaded.class,
                shed -> assertThat(shed.getMessage()).contains("lease renewals have waited 50 ms"));
    }

    @Test
    void aDeepQueueShedsWhateverItsAgeAndTheHintStaysWithinItsBounds() {
        waiting.put(Lane.WORK, Admission.MAX_WAITING);
        assertThatThrownBy(() -> admission.admit("read")).isInstanceOfSatisfying(Overloaded.class,
                shed -> assertThat(shed.retryAfterMillis()).isEqualTo(Admission.MIN_HINT_MS));

        waiting.put(Lane.WORK, 0);
        oldestMillis.put(Lane.WORK, 60_000L);
        assertThatThrownBy(() -> admission.admit("watch")).isInstanceOfSatisfying(Overloaded.class,
                shed -> assertThat(shed.retryAfterMillis()).isEqualTo(Admission.MAX_HINT_MS));
        assertThat(metrics.scrape()).contains("overload_shed_total{kind=\"read\"} 1.0", "overload_shed_total{kind=\"watch\"} 1.0");
    }
}

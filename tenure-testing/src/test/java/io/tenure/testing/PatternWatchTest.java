package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.client.InvalidArgumentException;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureException;
import io.tenure.client.Watch;
import io.tenure.client.WatchEvent;
import io.tenure.client.WatchListener;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Watches on a pattern: every kind's events on the names it matches, in revision order, replayed from a past revision. */
class PatternWatchTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    private static final class Seen implements WatchListener {
        final List<WatchEvent> events = Collections.synchronizedList(new ArrayList<>());
        final AtomicReference<TenureException> error = new AtomicReference<>();

        @Override
        public void onEvent(WatchEvent event) {
            events.add(event);
        }

        @Override
        public void onCompacted(long compactRevision) {
        }

        @Override
        public void onError(TenureException e) {
            error.set(e);
        }

        List<String> lines() {
            synchronized (events) {
                return events.stream().map(e -> e.kind() + " " + e.type() + " " + e.key()).toList();
            }
        }
    }

    @Test
    void aPatternWatchSeesEveryKindOnTheNamesItMatchesAndReplaysFromAPastRevision() throws Exception {
        TenureClient client = tenure.client();
        Seen all = new Seen();
        Seen oneToken = new Seen();
        try (Watch rest = client.watchPattern("app.>", 0, all);
             Watch single = client.watchPattern("app.*", 0, oneToken)) {
            rest.started().get(20, TimeUnit.SECONDS);
            single.started().get(20, TimeUnit.SECONDS);

            LockHandle lock = client.lock("app.lock").acquire();
            client.counter("app.count").incrementAndGet();
            client.kv().put("app.cfg.mode", "on");
            client.queue("app.queue").offer("job".getBytes(StandardCharsets.UTF_8));
            client.counter("other.count").incrementAndGet();
            client.kv().put("application.x", "no");
            lock.release();

            List<String> expected = List.of("lock PUT app.lock", "counter PUT app.count", "kv PUT app.cfg.mode", "list PUT app.queue",
                    "lock DELETE app.lock");
            Await.until("the five changes under app.>", WAIT, () -> all.events.size() >= 5);
            assertThat(all.lines()).containsExactlyElementsOf(expected);
            assertThat(all.events).extracting(WatchEvent::revision).isSorted().doesNotHaveDuplicates();
            Await.until("the four one-token changes", WAIT, () -> oneToken.events.size() >= 4);
            assertThat(oneToken.lines()).as("app.* does not match app.cfg.mode")
                    .containsExactly("lock PUT app.lock", "counter PUT app.count", "list PUT app.queue", "lock DELETE app.lock");

            Seen replayed = new Seen();
            try (Watch again = client.watchPattern("app.>", all.events.get(1).revision(), replayed)) {
                Await.until("the replay", WAIT, () -> replayed.events.size() >= 4);
                assertThat(replayed.lines()).containsExactlyElementsOf(expected.subList(1, 5));
                assertThat(again.isPattern()).isTrue();
            }
        }
    }

    @Test
    void aMalformedPatternEndsTheWatchNamingTheField() throws Exception {
        Seen seen = new Seen();
        Watch watch = tenure.client().watchPattern("app.>.x", 0, seen);
        Await.until("the refusal", WAIT, () -> seen.error.get() != null);
        assertThat(seen.error.get()).isInstanceOf(InvalidArgumentException.class).hasMessageContaining("pattern")
                .hasMessageContaining("last");
        assertThat(watch.isOpen()).isFalse();
    }
}

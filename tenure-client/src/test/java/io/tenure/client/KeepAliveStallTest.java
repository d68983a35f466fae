package io.tenure.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A member that holds the keep-alive stream open but answers nothing (paused, cut off) must not
 * use up the lease's safe window: after TTL/10 unanswered the stream moves to the next member.
 */
class KeepAliveStallTest {
    // Whole milliseconds at every fraction the lease uses (3, 2, 10): the lease timers run on a millisecond grid.
    private static final Duration TTL = Duration.ofSeconds(9);

    private final InProcessMembers members = new InProcessMembers(2);
    private final ScriptedLockService first = members.service(0);
    private final ScriptedLockService second = members.service(1);
    private final FakeTime time = members.time;
    private final TenureClient client = members.client();

    @AfterEach
    void tearDown() {
        members.close();
    }

    private long at(Duration d) {
        return FakeTime.EPOCH + d.toNanos();
    }

    @Test
    void anUnansweredKeepAliveMovesToTheNextMemberWellInsideTheWindow() {
        Lease lease = client.grantLease(TTL, "worker-1");
        first.keepAlives = ScriptedLockService.KeepAlives.SILENT;
        Duration third = TTL.dividedBy(3);

        time.advanceTo(third);                                    // sent to the silent first member
        assertThat(first.keepAlivesReceived).hasSize(1);
        assertThat(second.keepAlivesReceived).isEmpty();

        time.advanceTo(third.plus(TTL.dividedBy(10)).minusNanos(1));
        assertThat(second.keepAlivesReceived).as("not before TTL/10").isEmpty();

        time.advanceTo(third.plus(TTL.dividedBy(10)));            // stalled: moved and re-sent
        assertThat(second.keepAlivesReceived).hasSize(1);
        assertThat(lease.safeUntil()).as("the re-sent keep-alive's own send time counts")
                .isEqualTo(at(third.plus(TTL.dividedBy(10)).plus(Duration.ofNanos(LeaseKeeper.safeWindowNanos(TTL.toNanos())))));

        time.advanceTo(TTL.multipliedBy(2));
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.lost()).isNotDone();
    }

    @Test
    void aMemberThatAnswersOtherLeasesOnTheStreamIsSlowNotGoneAndKeepsTheStream() {
        Lease slow = client.grantLease(TTL, "worker-1");
        time.advanceTo(Duration.ofMillis(500));
        Lease other = client.grantLease(TTL, "worker-2");
        time.advanceTo(Duration.ofMillis(1_300));
        Lease another = client.grantLease(TTL, "worker-3");
        first.unanswered.add(slow.id());
        Duration third = TTL.dividedBy(3);

        time.advanceTo(third);                                            // slow's keep-alive: never answered
        time.advanceTo(third.plus(Duration.ofMillis(500)));               // other's: answered
        time.advanceTo(third.plus(TTL.dividedBy(10)));                    // slow's stall check
        assertThat(second.keepAlivesReceived).as("the member answers others: slow, not gone; nothing moves").isEmpty();
        time.advanceTo(third.plus(Duration.ofMillis(1_300)));             // another's: answered
        time.advanceTo(third.plus(TTL.dividedBy(10).multipliedBy(2)));    // slow's next stall check
        assertThat(second.keepAlivesReceived).as("still answering others").isEmpty();
        assertThat(first.streamsOpened).hasValue(1);
        assertThat(another.isValid()).isTrue();

        // The unanswered lease still ends by its own window, its safe window after its last acknowledged send.
        time.advanceTo(Duration.ofNanos(LeaseKeeper.safeWindowNanos(TTL.toNanos())));
        assertThat(slow.lost()).isDone();
        assertThat(slow.lost().join().reason()).isEqualTo(LeaseLoss.Reason.UNREACHABLE);
        assertThat(other.isValid()).isTrue();
        time.advanceTo(third.multipliedBy(2).plus(Duration.ofMillis(600)));
        assertThat(other.isValid()).isTrue();
        assertThat(first.streamsOpened).as("the others keep their stream").hasValue(1);
        assertThat(second.streamsOpened).hasValue(0);
    }
}

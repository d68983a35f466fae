package io.tenure.server.kv;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Txn;
import io.tenure.core.kv.KvDelete;
import io.tenure.core.kv.KvExpire;
import io.tenure.core.kv.KvPut;
import io.tenure.core.kv.KvTable;
import io.tenure.core.kv.KvView;
import io.tenure.server.raft.Entry;
import io.tenure.server.raft.EntryCodec;
import io.tenure.server.raft.TenureStateMachine;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The deadline bookkeeping of keys with a TTL, with a fake monotonic clock and a real state
 * machine applying entries: a key is due exactly its TTL after this member applied its put, a
 * put refreshes it, a follower records deadlines without proposing, a new leader counts keys it
 * has no deadline for from its promotion, and an expiry of an earlier term changes nothing and is
 * proposed again.
 */
class KeyExpiryTest {
    private static final long TERM = 3;

    private final AtomicLong now = new AtomicLong(TimeUnit.SECONDS.toNanos(1_000));
    private final AtomicBoolean leading = new AtomicBoolean(true);
    private final TenureStateMachine stateMachine = new TenureStateMachine(now::get, 1_000);
    private final KeyExpiry expiry = KeyExpiry.unscheduled(stateMachine, leading::get, now::get);
    private long index;

    KeyExpiryTest() {
        stateMachine.setListener(listener(expiry));
    }

    private static TenureStateMachine.Listener listener(KeyExpiry expiry) {
        return new TenureStateMachine.Listener() {
            @Override
            public void applied(Entry entry, long index, List<Applied> results) {
                expiry.applied(entry, results);
            }

            @Override
            public void leadership(boolean ready) {
                expiry.leadership(ready);
            }

            @Override
            public void shutdown() {
            }

            @Override
            public void logFailed(Throwable cause) {
            }

            @Override
            public void reloaded(long index) {
            }
        };
    }

    private void advanceMillis(long millis) {
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
    }

    /** Applies {@code command} as the only command of the next entry, proposed in {@code proposerTerm}, committed in {@link #TERM}. */
    private void apply(long proposerTerm, Command command) {
        index++;
        stateMachine.apply(TERM, index, EntryCodec.encode(new Entry(1, index, proposerTerm, List.of(command))));
    }

    private void apply(Command command) {
        apply(TERM, command);
    }

    private KvView key(String key) {
        return stateMachine.read(s -> s.primitive(KvTable.class).get(key));
    }

    private long put(String key, long ttlMillis) {
        apply(new KvPut(key, "v".getBytes(), 0, ttlMillis, 0));
        return key(key).modRevision();
    }

    @Test
    void aKeyIsDueExactlyItsTtlAfterThisMemberAppliedItsPutAndGoesWithTheExpiry() {
        long revision = put("cache/a", 1_000);
        advanceMillis(999);
        assertThat(expiry.due()).as("1 ms before its TTL").isEmpty();
        assertThat(expiry.remainingMillis("cache/a", revision)).isEqualTo(1);
        advanceMillis(1);
        List<KvExpire> due = expiry.due();
        assertThat(due).containsExactly(new KvExpire("cache/a", revision));

        apply(due.get(0));
        assertThat(key("cache/a")).as("expired through the log").isNull();
        assertThat(expiry.known()).as("its deadline forgotten").isZero();
        advanceMillis(10_000);
        assertThat(expiry.due()).isEmpty();
    }

    @Test
    void aPutRefreshesTheTtlAndAnExpiryOfTheOlderPutChangesNothing() {
        long first = put("cache/b", 1_000);
        advanceMillis(600);
        long second = put("cache/b", 1_000);
        advanceMillis(400);
        assertThat(expiry.due()).as("1,000 ms after the first put, 400 ms after the second").isEmpty();
        apply(new KvExpire("cache/b", first));
        assertThat(key("cache/b")).as("an expiry naming the older put is a no-op").isNotNull();
        advanceMillis(599);
        assertThat(expiry.due()).isEmpty();
        advanceMillis(1);
        assertThat(expiry.due()).containsExactly(new KvExpire("cache/b", second));
    }

    @Test
    void aPutWithoutTtlOrADeleteForgetsTheDeadline() {
        put("cache/c", 1_000);
        put("cache/d", 1_000);
        assertThat(expiry.known()).isEqualTo(2);
        put("cache/c", 0);
        apply(new KvDelete("cache/d", KvDelete.ANY_REVISION, 0));
        assertThat(expiry.known()).isZero();
        advanceMillis(5_000);
        assertThat(expiry.due()).isEmpty();
        assertThat(key("cache/c")).as("a key without a TTL stays").isNotNull();
    }

    /** A transaction's puts and deletes keep the deadlines as they would on their own; its other branch changes none. */
    @Test
    void aTransactionsPutsAndDeletesKeepTheDeadlines() {
        put("cache/t1", 1_000);
        apply(new Txn(List.of(), List.of(new KvDelete("cache/t1", KvDelete.ANY_REVISION, 0),
                new KvPut("cache/t2", "v".getBytes(), 0, 2_000, 0), new KvPut("cache/t2", "w".getBytes(), 0, 1_500, 0)),
                List.of(new KvPut("cache/t3", "v".getBytes(), 0, 1_000, 0)), 0));
        long revision = key("cache/t2").modRevision();
        assertThat(expiry.known()).as("t1 deleted, t2 put with a TTL, t3 not put").isOne();
        advanceMillis(1_499);
        assertThat(expiry.due()).isEmpty();
        advanceMillis(1);
        assertThat(expiry.due()).as("the TTL of the transaction's last put of the key").containsExactly(new KvExpire("cache/t2", revision));
    }

    @Test
    void aFollowerRecordsDeadlinesButProposesNothingAndKeepsThemWhenItLeads() {
        leading.set(false);
        long revision = put("cache/e", 1_000);
        advanceMillis(2_000);
        assertThat(expiry.due()).as("a follower proposes nothing").isEmpty();
        leading.set(true);
        expiry.leadership(true);
        assertThat(expiry.due()).as("the deadline it recorded when it applied the put, not restarted")
                .containsExactly(new KvExpire("cache/e", revision));
    }

    @Test
    void aNewLeaderCountsKeysItHasNoDeadlineForFromItsPromotion() throws Exception {
        long revision = put("cache/f", 1_000);
        ByteArrayOutputStream snapshot = new ByteArrayOutputStream();
        stateMachine.writeSnapshot(snapshot);

        AtomicBoolean otherLeads = new AtomicBoolean(false);
        TenureStateMachine other = new TenureStateMachine(now::get, 1_000);
        KeyExpiry otherExpiry = KeyExpiry.unscheduled(other, otherLeads::get, now::get);
        other.setListener(listener(otherExpiry));
        advanceMillis(5_000);
        other.loadSnapshot(new ByteArrayInputStream(snapshot.toByteArray()), TERM, index, "test");
        assertThat(otherExpiry.known()).as("a put it did not apply: no deadline").isZero();

        advanceMillis(300);
        otherLeads.set(true);
        other.leaderReady();
        assertThat(otherExpiry.due()).as("counting starts at the promotion, so never early").isEmpty();
        advanceMillis(999);
        assertThat(otherExpiry.due()).isEmpty();
        advanceMillis(1);
        assertThat(otherExpiry.due()).containsExactly(new KvExpire("cache/f", revision));
    }

    @Test
    void anExpiryProposedInAnEarlierTermIsSkippedAndProposedAgain() {
        long revision = put("cache/g", 1_000);
        advanceMillis(1_000);
        List<KvExpire> due = expiry.due();
        assertThat(due).containsExactly(new KvExpire("cache/g", revision));

        apply(TERM - 1, due.get(0));
        assertThat(key("cache/g")).as("proposed by the previous term's leader: skipped").isNotNull();
        assertThat(expiry.due()).as("not again before the retry interval").isEmpty();
        advanceMillis(TimeUnit.NANOSECONDS.toMillis(KeyExpiry.RETRY_NANOS));
        assertThat(expiry.due()).as("proposed again").containsExactly(new KvExpire("cache/g", revision));
    }

    @Test
    void theBookkeepingNeverBringsADeadlineForward() {
        KeyDeadlines deadlines = new KeyDeadlines();
        deadlines.put("k", 20, 1_000, 0);
        deadlines.startIfUnknown("k", 10, 1_000, -TimeUnit.SECONDS.toNanos(5));
        deadlines.put("k", 10, 1, -TimeUnit.SECONDS.toNanos(5));
        assertThat(deadlines.remaining("k", 0)).as("an older put, however late it is told, changes nothing")
                .isEqualTo(TimeUnit.SECONDS.toNanos(1));
        deadlines.forget("k", 15);
        assertThat(deadlines.knows("k", 20)).as("a delete before the recorded put does not forget it").isTrue();
        deadlines.startIfUnknown("k", 20, 1, TimeUnit.SECONDS.toNanos(100));
        assertThat(deadlines.remaining("k", 0)).as("a known put keeps its deadline").isEqualTo(TimeUnit.SECONDS.toNanos(1));
        deadlines.forget("k", 21);
        assertThat(deadlines.size()).isZero();
        assertThat(deadlines.due(TimeUnit.SECONDS.toNanos(100), 1, 10)).isEmpty();
    }
}

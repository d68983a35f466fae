package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Kernel;
import io.tenure.core.kernel.Leases;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.Result.Rejected;
import io.tenure.core.kv.KvCompareAndSet;
import io.tenure.core.kv.KvDelete;
import io.tenure.core.kv.KvExpire;
import io.tenure.core.kv.KvPage;
import io.tenure.core.kv.KvPut;
import io.tenure.core.kv.KvResult.CompareFailed;
import io.tenure.core.kv.KvResult.Deleted;
import io.tenure.core.kv.KvResult.Expired;
import io.tenure.core.kv.KvResult.Put;
import io.tenure.core.kv.KvTable;
import io.tenure.core.kv.KvTtl;
import io.tenure.core.kv.KvView;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockResult;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static io.tenure.core.Replica.expect;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The key-value store, case by case: revisions and versions, comparisons, deletes, retries, leases, TTL expiry, limits, events, codec, snapshot checks. */
class KvTest {
    private final Replica replica = new Replica();

    @BeforeEach
    void leases() {
        for (long id = 1; id <= 3; id++) {
            replica.grantLease(id);
        }
    }

    private KvTable kv() {
        return replica.state.primitive(KvTable.class);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    private Put put(String key, String value) {
        return expect(replica.run(new KvPut(key, bytes(value), 0, 0, 0)), Put.class);
    }

    @Test
    void aPutCreatesThenUpdatesWithRevisionsAndVersion() {
        Applied first = replica.apply(new KvPut("config/a", bytes("one"), 0, 0, 0));
        Put created = expect(first.result(), Put.class);
        assertThat(created.created()).isTrue();
        assertThat(created.revision()).isEqualTo(replica.lastPosition());
        assertThat(created.version()).isEqualTo(1);

        Put updated = put("config/a", "two");

        assertThat(updated.created()).isFalse();
        assertThat(updated.prevModRevision()).isEqualTo(created.revision());
        assertThat(updated.revision()).isGreaterThan(created.revision());
        assertThat(updated.version()).isEqualTo(2);
        KvView view = kv().get("config/a");
        assertThat(text(view.value())).isEqualTo("two");
        assertThat(view.createRevision()).isEqualTo(created.revision());
        assertThat(view.modRevision()).isEqualTo(updated.revision());
        assertThat(view.version()).isEqualTo(2);
        assertThat(view.leaseId()).isZero();
        assertThat(view.ttlMillis()).isZero();
        assertThat(replica.state.revision()).isEqualTo(updated.revision());
        view.value()[0] = 'X';
        assertThat(text(kv().get("config/a").value())).as("a read gets a copy").isEqualTo("two");
    }

    @Test
    void aCompareAndSetAtRevisionZeroCreatesOnlyAnAbsentKey() {
        Put created = expect(replica.run(new KvCompareAndSet("leader", 0, null, bytes("n1"), 0, 0, 0)), Put.class);
        assertThat(created.created()).isTrue();

        CompareFailed second = expect(replica.run(new KvCompareAndSet("leader", 0, null, bytes("n2"), 0, 0, 0)), CompareFailed.class);

        assertThat(second.modRevision()).isEqualTo(created.revision());
        assertThat(text(second.value())).isEqualTo("n1");
        assertThat(text(kv().get("leader").value())).isEqualTo("n1");
        assertThat(kv().get("leader").version()).isEqualTo(1);
    }

    @Test
    void aCompareAndSetByValueSwapsOnlyOnTheSameBytes() {
        Put first = put("k", "old");

        CompareFailed miss = expect(replica.run(new KvCompareAndSet("k", -1, bytes("other"), bytes("new"), 0, 0, 0)), CompareFailed.class);
        assertThat(miss.modRevision()).isEqualTo(first.revision());
        assertThat(text(miss.value())).isEqualTo("old");
        assertThat(text(kv().get("k").value())).isEqualTo("old");

        Put hit = expect(replica.run(new KvCompareAndSet("k", -1, bytes("old"), bytes("new"), 0, 0, 0)), Put.class);
        assertThat(hit.prevModRevision()).isEqualTo(first.revision());
        assertThat(hit.version()).isEqualTo(2);
        assertThat(text(kv().get("k").value())).isEqualTo("new");

        CompareFailed absent = expect(replica.run(new KvCompareAndSet("nothing", -1, new byte[0], bytes("x"), 0, 0, 0)), CompareFailed.class);
        assertThat(absent.modRevision()).isZero();
        assertThat(absent.value()).as("an absent key has no value, not even an empty one").isNull();
        assertThat(kv().get("nothing")).isNull();
    }

    @Test
    void aCompareAndSetByRevisionSwapsOnlyAtThatRevision() {
        Put first = put("k", "v1");
        Put second = put("k", "v2");

        CompareFailed stale = expect(replica.run(new KvCompareAndSet("k", first.revision(), null, bytes("v3"), 0, 0, 0)), CompareFailed.class);
        assertThat(stale.modRevision()).isEqualTo(second.revision());
        assertThat(text(stale.value())).isEqualTo("v2");

        Put swapped = expect(replica.run(new KvCompareAndSet("k", second.revision(), null, bytes("v3"), 0, 0, 0)), Put.class);
        assertThat(swapped.version()).isEqualTo(3);
        assertThat(text(kv().get("k").value())).isEqualTo("v3");
    }

    @Test
    void aDeleteIsUnconditionalOrAtTheExpectedRevision() {
        Put first = put("a", "1");
        put("b", "2");

        CompareFailed stale = expect(replica.run(new KvDelete("a", first.revision() + 1, 0)), CompareFailed.class);
        assertThat(stale.modRevision()).isEqualTo(first.revision());
        assertThat(kv().get("a")).isNotNull();

        Deleted atRevision = expect(replica.run(new KvDelete("a", first.revision(), 0)), Deleted.class);
        assertThat(atRevision.existed()).isTrue();
        assertThat(atRevision.revision()).isEqualTo(replica.lastPosition());
        assertThat(kv().get("a")).isNull();

        Deleted any = expect(replica.run(new KvDelete("b", KvDelete.ANY_REVISION, 0)), Deleted.class);
        assertThat(any.existed()).isTrue();
        Deleted again = expect(replica.run(new KvDelete("b", KvDelete.ANY_REVISION, 0)), Deleted.class);
        assertThat(again.existed()).isFalse();
        assertThat(again.revision()).isZero();
        assertThat(Replica.watched(replica.apply(new KvDelete("b", KvDelete.ANY_REVISION, 0)))).as("no event for an absent key").isEmpty();
        assertThat(kv().keyCount()).isZero();
    }

    @Test
    void aPutRetriedWithItsRequestIdIsAppliedOnceAndAnsweredAsTheFirst() {
        Put first = expect(replica.run(new KvPut("k", bytes("mine"), 0, 0, 7)), Put.class);
        put("k", "someone else's");

        Applied retry = replica.apply(new KvPut("k", bytes("mine"), 0, 0, 7));

        assertThat(expect(retry.result(), Put.class)).isEqualTo(first);
        assertThat(Replica.watched(retry)).isEmpty();
        assertThat(text(kv().get("k").value())).as("the retry did not overwrite the later put").isEqualTo("someone else's");
        assertThat(kv().get("k").version()).isEqualTo(2);
        assertThat(expect(replica.run(new KvPut("k", bytes("mine"), 0, 0, 8)), Put.class).version()).as("another request applies").isEqualTo(3);
    }

    @Test
    void aDeleteRetriedWithItsRequestIdDoesNotDeleteAKeyPutSince() {
        put("k", "v1");
        Deleted first = expect(replica.run(new KvDelete("k", KvDelete.ANY_REVISION, 9)), Deleted.class);
        Put since = put("k", "v2");

        Deleted retry = expect(replica.run(new KvDelete("k", KvDelete.ANY_REVISION, 9)), Deleted.class);

        assertThat(retry).isEqualTo(first);
        assertThat(retry.existed()).isTrue();
        assertThat(kv().get("k").modRevision()).isEqualTo(since.revision());
    }

    @Test
    void aFailedCompareAndSetRetriedIsAnsweredAsTheFirstWithTheValueOnlyWhileUnchanged() {
        Put first = put("k", "v1");
        CompareFailed failed = expect(replica.run(new KvCompareAndSet("k", 0, null, bytes("x"), 0, 0, 5)), CompareFailed.class);

        CompareFailed retry = expect(replica.run(new KvCompareAndSet("k", 0, null, bytes("x"), 0, 0, 5)), CompareFailed.class);
        assertThat(retry.modRevision()).isEqualTo(first.revision());
        assertThat(text(retry.value())).isEqualTo(text(failed.value()));

        expect(replica.run(new KvDelete("k", KvDelete.ANY_REVISION, 0)), Deleted.class);
        CompareFailed late = expect(replica.run(new KvCompareAndSet("k", 0, null, bytes("x"), 0, 0, 5)), CompareFailed.class);
        assertThat(late.modRevision()).as("answered as the first, though the key is absent now").isEqualTo(first.revision());
        assertThat(late.value()).isNull();
        assertThat(kv().get("k")).as("not applied again").isNull();
    }

    /** The answer is remembered before the lease is checked: a retry that arrives after the lease ended is not refused. */
    @Test
    void aPutRetriedAfterItsLeaseEndedIsAnsweredAsTheFirst() {
        Put first = expect(replica.run(new KvPut("k", bytes("v"), 1, 0, 31)), Put.class);
        replica.revoke(1);
        assertThat(kv().get("k")).isNull();

        Applied retry = replica.apply(new KvPut("k", bytes("v"), 1, 0, 31));

        assertThat(expect(retry.result(), Put.class)).isEqualTo(first);
        assertThat(Replica.watched(retry)).isEmpty();
        assertThat(kv().get("k")).as("not put again, bound to a lease that is gone").isNull();
    }

    @Test
    void keysBoundToALeaseGoWhenItEndsInKeyOrder() {
        for (String key : List.of("job/c", "job/a", "job/b")) {
            expect(replica.run(new KvPut(key, bytes(key), 1, 0, 0)), Put.class);
        }
        expect(replica.run(new KvPut("other", bytes("x"), 2, 0, 0)), Put.class);
        expect(replica.run(new KvPut("moved", bytes("x"), 1, 0, 0)), Put.class);
        expect(replica.run(new KvPut("moved", bytes("y"), 0, 0, 0)), Put.class);
        assertThat(kv().keysOf(1)).containsExactly("job/a", "job/b", "job/c");

        long position = replica.nextPosition();
        Applied revoked = replica.apply(new io.tenure.core.kernel.LeaseRevoke(1));

        List<WatchEvent> events = Replica.watched(revoked);
        assertThat(events).extracting(WatchEvent::key).containsExactly("job/a", "job/b", "job/c");
        assertThat(events).extracting(WatchEvent::type).containsOnly(WatchEvent.Type.DELETE);
        assertThat(events).extracting(WatchEvent::revision).containsExactly(position, position + 1, position + 2);
        assertThat(events).extracting(WatchEvent::kind).containsOnly(KvTable.NAME);
        assertThat(text(events.get(0).prevKv().metadata())).isEqualTo("job/a");
        assertThat(kv().get("job/a")).isNull();
        assertThat(kv().keysOf(1)).isEmpty();
        assertThat(kv().get("moved")).as("a put without the lease unbound it").isNotNull();
        assertThat(kv().get("other").leaseId()).isEqualTo(2);

        replica.expire(2);
        assertThat(kv().get("other")).isNull();
        assertThat(kv().keyCount()).isEqualTo(1);
    }

    @Test
    void aPutBoundToALeaseThatIsGoneIsRefused() {
        replica.revoke(3);

        Rejected refused = expect(replica.run(new KvPut("k", bytes("v"), 3, 0, 0)), Rejected.class);

        assertThat(refused.code()).isEqualTo(Code.NOT_FOUND);
        assertThat(refused.message()).isEqualTo(Leases.notFound(3));
        assertThat(expect(replica.run(new KvCompareAndSet("k", 0, null, bytes("v"), 99, 0, 0)), Rejected.class).code()).isEqualTo(Code.NOT_FOUND);
        assertThat(kv().keyCount()).isZero();
    }

    @Test
    void anExpiryDeletesOnlyAtTheModRevisionItWasComputedFor() {
        Put first = expect(replica.run(new KvPut("session", bytes("v1"), 0, 5_000, 0)), Put.class);
        assertThat(kv().ttlKeys()).containsExactly(new KvTtl("session", first.revision(), 5_000));
        Put refreshed = expect(replica.run(new KvPut("session", bytes("v2"), 0, 7_000, 0)), Put.class);
        assertThat(kv().ttlKeys()).containsExactly(new KvTtl("session", refreshed.revision(), 7_000));

        Applied late = replica.apply(new KvExpire("session", first.revision()));
        assertThat(late.result()).isInstanceOf(Result.Skipped.class);
        assertThat(Replica.watched(late)).isEmpty();
        assertThat(kv().get("session")).isNotNull();

        Applied due = replica.apply(new KvExpire("session", refreshed.revision()));
        Expired expired = expect(due.result(), Expired.class);
        assertThat(expired.revision()).isEqualTo(replica.lastPosition());
        assertThat(Replica.watched(due)).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo(WatchEvent.Type.DELETE);
            assertThat(e.revision()).isEqualTo(expired.revision());
        });
        assertThat(kv().get("session")).isNull();
        assertThat(kv().ttlKeys()).isEmpty();
        assertThat(replica.run(new KvExpire("session", refreshed.revision()))).isInstanceOf(Result.Skipped.class);

        Put noTtl = put("plain", "v");
        assertThat(replica.run(new KvExpire("plain", noTtl.revision()))).as("a key without a TTL never expires").isInstanceOf(Result.Skipped.class);
        Put dropped = expect(replica.run(new KvPut("was-ttl", bytes("v"), 0, 5_000, 0)), Put.class);
        Put keptNoTtl = put("was-ttl", "v");
        assertThat(replica.run(new KvExpire("was-ttl", keptNoTtl.revision()))).isInstanceOf(Result.Skipped.class);
        assertThat(replica.run(new KvExpire("was-ttl", dropped.revision()))).isInstanceOf(Result.Skipped.class);
        assertThat(kv().get("was-ttl")).isNotNull();
        assertThat(kv().ttlKeys()).isEmpty();
    }

    @Test
    void badInputNamesItsFieldAndChangesNothing() {
        Rejected tooBig = expect(replica.run(new KvPut("k", new byte[KvTable.MAX_VALUE_BYTES + 1], 0, 0, 0)), Rejected.class);
        assertThat(tooBig.code()).isEqualTo(Code.INVALID_ARGUMENT);
        assertThat(tooBig.message()).isEqualTo("value must be at most 65536 bytes, got 65537");
        assertThat(expect(replica.run(new KvPut("k", new byte[KvTable.MAX_VALUE_BYTES], 0, 0, 0)), Put.class).created()).as("at the limit").isTrue();
        long revision = replica.lastPosition();

        assertThat(expect(replica.run(new KvPut("", bytes("v"), 0, 0, 0)), Rejected.class).message()).isEqualTo("key must not be empty");
        assertThat(expect(replica.run(new KvPut("x".repeat(Limits.MAX_KEY_BYTES + 1), bytes("v"), 0, 0, 0)), Rejected.class).message()).startsWith("key is");
        Rejected both = expect(replica.run(new KvPut("k", bytes("v"), 1, 5_000, 0)), Rejected.class);
        assertThat(both.code()).isEqualTo(Code.INVALID_ARGUMENT);
        assertThat(both.message()).contains("lease_id").contains("ttl_millis");
        assertThat(expect(replica.run(new KvPut("k", bytes("v"), 0, -1, 0)), Rejected.class).message()).startsWith("ttl_millis");
        assertThat(expect(replica.run(new KvPut("k", bytes("v"), 0, Limits.MAX_TTL_MILLIS + 1, 0)), Rejected.class).message()).startsWith("ttl_millis");
        assertThat(expect(replica.run(new KvCompareAndSet("k", -1, null, bytes("v"), 0, 0, 0)), Rejected.class).message())
                .contains("expected_mod_revision").contains("expected_value");
        assertThat(expect(replica.run(new KvCompareAndSet("k", -2, null, bytes("v"), 0, 0, 0)), Rejected.class).message()).startsWith("expected_mod_revision");
        assertThat(expect(replica.run(new KvCompareAndSet("k", 0, null, new byte[KvTable.MAX_VALUE_BYTES + 1], 0, 0, 0)), Rejected.class).message())
                .startsWith("value must be at most");
        assertThat(expect(replica.run(new KvDelete("k", -2, 0)), Rejected.class).message()).startsWith("expected_mod_revision");
        assertThat(expect(replica.run(new KvDelete("", -1, 0)), Rejected.class).message()).startsWith("key");
        assertThat(expect(replica.run(new KvExpire("", 1)), Rejected.class).message()).startsWith("key");

        List<WatchEvent> since = new java.util.ArrayList<>();
        replica.state.events().replay(revision + 1, key -> true, since::add);
        assertThat(since).as("no event since the valid put").isEmpty();
        assertThat(kv().keyCount()).isEqualTo(1);
        assertThat(kv().get("k").version()).isEqualTo(1);
        assertThat(kv().get("k").value()).hasSize(KvTable.MAX_VALUE_BYTES);
    }

    @Test
    void aStoreAtItsKeyLimitRefusesANewKeyButUpdatesTheOthers() {
        Kernel kernel = new Kernel(64, (leases, names) -> List.of(new KvTable(leases, 2)));
        long[] position = {0};
        java.util.function.Function<Command, Result> run = c -> kernel.apply(position[0] += 65_536, c).result();
        expect(run.apply(new KvPut("a", bytes("1"), 0, 0, 0)), Put.class);
        expect(run.apply(new KvPut("b", bytes("1"), 0, 0, 0)), Put.class);

        Rejected full = expect(run.apply(new KvPut("c", bytes("1"), 0, 0, 0)), Rejected.class);
        assertThat(full.code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(full.message()).contains("limit of 2");
        assertThat(expect(run.apply(new KvCompareAndSet("c", 0, null, bytes("1"), 0, 0, 0)), Rejected.class).code()).isEqualTo(Code.FAILED_PRECONDITION);

        assertThat(expect(run.apply(new KvPut("a", bytes("2"), 0, 0, 0)), Put.class).version()).isEqualTo(2);
        expect(run.apply(new KvDelete("b", -1, 0)), Deleted.class);
        expect(run.apply(new KvPut("c", bytes("1"), 0, 0, 0)), Put.class);
        KvTable kv = kernel.primitive(KvTable.class);
        assertThat(kv.page("", "", 10).entries()).extracting(KvView::key).containsExactly("a", "c");
    }

    @Test
    void putsAndDeletesAreWatchedWithTheKeyTheValueAndTheKeyBefore() {
        Applied created = replica.apply(new KvPut("cfg", bytes("v1"), 2, 0, 0));
        WatchEvent put = Replica.watched(created).get(0);
        assertThat(Replica.watched(created)).hasSize(1);
        assertThat(put.type()).isEqualTo(WatchEvent.Type.PUT);
        assertThat(put.kind()).isEqualTo("kv");
        assertThat(put.revision()).isEqualTo(replica.lastPosition());
        assertThat(put.prevKv()).isNull();
        assertThat(put.kv().key()).isEqualTo("cfg");
        assertThat(text(put.kv().metadata())).isEqualTo("v1");
        assertThat(put.kv().leaseId()).isEqualTo(2);
        assertThat(put.kv().holder()).isEqualTo(Replica.clientOf(2));
        assertThat(put.kv().createRevision()).isEqualTo(put.revision());
        assertThat(put.kv().modRevision()).isEqualTo(put.revision());
        assertThat(put.kv().version()).isEqualTo(1);

        WatchEvent update = Replica.watched(replica.apply(new KvPut("cfg", bytes("v2"), 0, 0, 0))).get(0);
        assertThat(text(update.kv().metadata())).isEqualTo("v2");
        assertThat(update.kv().createRevision()).isEqualTo(put.revision());
        assertThat(update.kv().version()).isEqualTo(2);
        assertThat(update.kv().holder()).isEmpty();
        assertThat(text(update.prevKv().metadata())).isEqualTo("v1");
        assertThat(update.prevKv().modRevision()).isEqualTo(put.revision());

        WatchEvent deleted = Replica.watched(replica.apply(new KvDelete("cfg", -1, 0))).get(0);
        assertThat(deleted.type()).isEqualTo(WatchEvent.Type.DELETE);
        assertThat(deleted.kv().modRevision()).isEqualTo(deleted.revision());
        assertThat(text(deleted.prevKv().metadata())).isEqualTo("v2");

        List<WatchEvent> logged = new java.util.ArrayList<>();
        replica.state.events().replay(put.revision(), key -> key.equals("cfg"), logged::add);
        assertThat(logged).extracting(WatchEvent::revision).containsExactly(put.revision(), update.revision(), deleted.revision());
        assertThat(replica.state.watchedKinds()).contains("kv");
    }

    /** Keys have a namespace of their own: a key may share its name with a lock. */
    @Test
    void aKeyMayShareItsNameWithALock() {
        put("shared", "v");
        assertThat(replica.run(new LockAcquire("shared", 1, null, false))).isInstanceOf(LockResult.Granted.class);
        assertThat(kv().get("shared")).isNotNull();
    }

    @Test
    void pagesListKeysByPrefixInOrderAndSayWhetherMoreRemain() {
        for (String key : List.of("b/1", "a/3", "a/1", "a/5", "a/2", "a/4", "a")) {
            put(key, key);
        }
        KvPage first = kv().page("a/", "", 2);
        assertThat(first.entries()).extracting(KvView::key).containsExactly("a/1", "a/2");
        assertThat(first.more()).isTrue();
        KvPage second = kv().page("a/", first.lastKey(), 2);
        assertThat(second.entries()).extracting(KvView::key).containsExactly("a/3", "a/4");
        assertThat(second.more()).isTrue();
        KvPage last = kv().page("a/", second.lastKey(), 2);
        assertThat(last.entries()).extracting(KvView::key).containsExactly("a/5");
        assertThat(last.more()).isFalse();
        assertThat(kv().page("a/", "a/5", 2).entries()).isEmpty();
        assertThat(kv().page("a/", "", 5).more()).as("exactly the limit left").isFalse();
        assertThat(kv().page("", "a/5", 10).entries()).extracting(KvView::key).containsExactly("b/1");
        assertThat(kv().page("a/", "0", 1).entries()).as("a continuation before the prefix starts it").extracting(KvView::key).containsExactly("a/1");
        assertThat(kv().page("c", "", 10).entries()).isEmpty();
        assertThat(kv().keyCount()).isEqualTo(7);
    }

    @Test
    void everyCommandSurvivesTheLogCodec() throws IOException {
        List<Command> commands = List.of(
                new KvPut("k", bytes("v"), 3, 0, 11),
                new KvPut("k", new byte[0], 0, 5_000, 0),
                new KvCompareAndSet("k", 0, null, bytes("new"), 0, 1_000, 12),
                new KvCompareAndSet("k", -1, new byte[0], bytes("new"), 2, 0, 13),
                new KvCompareAndSet("k", -1, bytes("old"), bytes("new"), 0, 0, 0),
                new KvDelete("k", -1, 14),
                new KvDelete("k", 77, 0),
                new KvExpire("k", 88));
        for (Command command : commands) {
            Command decoded = TenureState.CODEC.decode(TenureState.CODEC.encode(command));
            assertThat(Rendering.of(decoded)).isEqualTo(Rendering.of(command));
        }
        assertThat(TenureState.CODEC.encode(commands.get(0))[0]).isEqualTo((byte) 40);
        assertThat(TenureState.CODEC.encode(commands.get(7))[0]).isEqualTo((byte) 43);
        assertThat(((KvCompareAndSet) TenureState.CODEC.decode(TenureState.CODEC.encode(commands.get(2)))).expectedValue())
                .as("no value to compare stays none, not empty").isNull();
    }

    @Test
    void aSnapshotRestoresKeysLeasesTtlsAndRetries() {
        expect(replica.run(new KvPut("bound", bytes("b"), 1, 0, 0)), Put.class);
        Put ttl = expect(replica.run(new KvPut("ttl", bytes("t"), 0, 9_000, 0)), Put.class);
        Put retried = expect(replica.run(new KvPut("plain", bytes("p"), 0, 0, 21)), Put.class);
        byte[] snapshot = replica.snapshot();

        Replica restored = Replica.restore(snapshot);
        KvTable kv = restored.state.primitive(KvTable.class);

        assertThat(restored.snapshot()).isEqualTo(snapshot);
        assertThat(Rendering.of(kv.page("", "", 10))).isEqualTo(Rendering.of(kv().page("", "", 10)));
        assertThat(kv.ttlKeys()).containsExactly(new KvTtl("ttl", ttl.revision(), 9_000));
        assertThat(expect(restored.run(new KvPut("plain", bytes("p"), 0, 0, 21)), Put.class)).isEqualTo(retried);
        restored.revoke(1);
        assertThat(kv.get("bound")).isNull();
    }

    @Test
    void aSnapshotSectionWithAKeyBoundToAnUnknownLeaseIsRefusedNamingTheKey() throws IOException {
        expect(replica.run(new KvPut("jobs/x", bytes("v"), 2, 0, 0)), Put.class);
        ByteArrayOutputStream section = new ByteArrayOutputStream();
        kv().writeSnapshot(new DataOutputStream(section));

        assertThatThrownBy(() -> new KvTable(new Leases()).readSnapshot(
                new DataInputStream(new ByteArrayInputStream(section.toByteArray())), 6, new Leases()))
                .isInstanceOf(SnapshotFormatException.class)
                .hasMessageContaining("'jobs/x'").hasMessageContaining("unknown lease 2");
    }

    @Test
    void aSnapshotSectionWithAValueOverTheLimitIsRefusedNamingTheKey() throws IOException {
        ByteArrayOutputStream section = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(section);
        out.writeInt(1);
        io.tenure.core.kernel.Wire.writeString(out, "big");
        io.tenure.core.kernel.Wire.writeBytes(out, new byte[KvTable.MAX_VALUE_BYTES + 1]);
        for (long field : new long[] {1, 1, 1, 0, 0}) {
            out.writeLong(field);
        }
        out.writeInt(0);

        assertThatThrownBy(() -> new KvTable(new Leases()).readSnapshot(
                new DataInputStream(new ByteArrayInputStream(section.toByteArray())), 6, new Leases()))
                .isInstanceOf(SnapshotFormatException.class)
                .hasMessageContaining("'big'").hasMessageContaining("65537 bytes");
    }
}

package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tenure.client.Lease;
import io.tenure.client.LeaseNotFoundException;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureException;
import io.tenure.client.TenureKv;
import io.tenure.client.Watch;
import io.tenure.client.WatchEvent;
import io.tenure.client.WatchListener;
import io.tenure.proto.v1.KvCompare;
import io.tenure.proto.v1.KvCompareAndSetRequest;
import io.tenure.proto.v1.KvCompareAndSetResponse;
import io.tenure.proto.v1.KvDeleteRequest;
import io.tenure.proto.v1.KvDeleteResponse;
import io.tenure.proto.v1.KvGetRequest;
import io.tenure.proto.v1.KvGetResponse;
import io.tenure.proto.v1.KvListRequest;
import io.tenure.proto.v1.KvPutRequest;
import io.tenure.proto.v1.KvPutResponse;
import io.tenure.proto.v1.KvServiceGrpc;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The key-value store through the Java client and the gRPC service, against one real member (each test has its own keys). */
class KvApiTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    private static KvServiceGrpc.KvServiceBlockingStub stub(ManagedChannel channel) {
        return KvServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private static ManagedChannel channel() {
        return NettyChannelBuilder.forAddress("127.0.0.1", tenure.cluster().server(0).clientPort()).usePlaintext().build();
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void putsGetsAndDeletesAnswerWithRevisionsAndVersions() {
        TenureKv kv = tenure.client().kv();
        assertThat(kv.get("kv/ops")).as("absent").isEmpty();
        long first = kv.put("kv/ops", "one");
        TenureKv.Entry created = kv.get("kv/ops").orElseThrow();
        assertThat(created.valueAsString()).isEqualTo("one");
        assertThat(created.createRevision()).isEqualTo(first);
        assertThat(created.modRevision()).isEqualTo(first);
        assertThat(created.version()).isOne();
        assertThat(created.leaseId()).isZero();
        assertThat(created.ttl()).isEqualTo(Duration.ZERO);

        byte[] binary = {0, (byte) 0xff, (byte) 0xc3, 10};
        long second = kv.put("kv/ops", binary);
        assertThat(second).isGreaterThan(first);
        TenureKv.Entry replaced = kv.get("kv/ops").orElseThrow();
        assertThat(replaced.value()).as("bytes, exactly").isEqualTo(binary);
        assertThat(replaced.createRevision()).isEqualTo(first);
        assertThat(replaced.modRevision()).isEqualTo(second);
        assertThat(replaced.version()).isEqualTo(2);

        assertThat(kv.put("kv/empty", new byte[0])).isPositive();
        assertThat(kv.get("kv/empty").orElseThrow().value()).as("empty is a value").isEmpty();

        assertThat(kv.delete("kv/ops")).isTrue();
        assertThat(kv.get("kv/ops")).isEmpty();
        assertThat(kv.delete("kv/ops")).as("absent: nothing to delete").isFalse();
    }

    @Test
    void compareAndSetsByValueByRevisionAndByAbsenceSwapOnlyWhenTheKeyIsAsExpected() throws Exception {
        TenureKv kv = tenure.client().kv();
        assertThat(kv.putIfAbsent("kv/cas", "a")).isTrue();
        assertThat(kv.putIfAbsent("kv/cas", "b")).as("exists").isFalse();
        assertThat(kv.get("kv/cas").orElseThrow().valueAsString()).isEqualTo("a");

        assertThat(kv.compareAndSet("kv/cas", "x", "b")).as("not x").isFalse();
        assertThat(kv.compareAndSet("kv/cas", "a", "b")).isTrue();
        long revision = kv.get("kv/cas").orElseThrow().modRevision();
        assertThat(kv.compareAndSet("kv/cas", revision - 1, utf8("c"))).as("put since").isFalse();
        assertThat(kv.compareAndSetAsync("kv/cas", revision, utf8("c")).get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kv.compareAndSet("kv/cas", revision, utf8("d"))).as("the revision moved on").isFalse();
        assertThat(kv.get("kv/cas").orElseThrow().valueAsString()).isEqualTo("c");
        assertThat(kv.compareAndSet("kv/never", "a", "b")).as("an absent key has no value to match").isFalse();
        assertThat(kv.get("kv/never")).isEmpty();

        long now = kv.get("kv/cas").orElseThrow().modRevision();
        assertThat(kv.delete("kv/cas", now - 1)).as("a conditional delete at another revision").isFalse();
        assertThat(kv.delete("kv/cas", now)).isTrue();
    }

    @Test
    void concurrentPutIfAbsentsCreateTheKeyOnce() throws Exception {
        List<TenureClient> clients = new ArrayList<>();
        try {
            List<CompletableFuture<Boolean>> answers = new ArrayList<>();
            for (int c = 0; c < 4; c++) {
                TenureClient client = tenure.cluster().newClient();
                clients.add(client);
                for (int i = 0; i < 10; i++) {
                    answers.add(client.kv().putIfAbsentAsync("kv/once", utf8("c" + c + "/" + i)));
                }
            }
            int created = 0;
            for (CompletableFuture<Boolean> answer : answers) {
                created += answer.get(30, TimeUnit.SECONDS) ? 1 : 0;
            }
            assertThat(created).as("exactly one of 40 creates").isOne();
            assertThat(tenure.client().kv().get("kv/once").orElseThrow().version()).isOne();
        } finally {
            clients.forEach(TenureClient::close);
        }
    }

    @Test
    void aKeyBoundToALeaseGoesWhenTheLeaseIsRevokedAndAnEndedLeaseIsRefused() {
        TenureClient client = tenure.client();
        TenureKv kv = client.kv();
        Lease lease = client.grantLease(Duration.ofSeconds(30));
        kv.put("kv/bound/a", "worker", lease);
        kv.put("kv/bound/b", "worker", lease);
        kv.put("kv/bound/free", "stays");
        assertThat(kv.get("kv/bound/a").orElseThrow().leaseId()).isEqualTo(lease.id());
        lease.revoke();
        assertThat(kv.get("kv/bound/a")).as("gone with its lease").isEmpty();
        assertThat(kv.get("kv/bound/b")).isEmpty();
        assertThat(kv.get("kv/bound/free")).isPresent();
        assertThatThrownBy(() -> kv.put("kv/bound/c", "late", lease)).isInstanceOf(LeaseNotFoundException.class);
        assertThat(kv.get("kv/bound/c")).isEmpty();
    }

    @Test
    void aChangeRetriedWithItsRequestIdIsAppliedOnceAndAnsweredAsTheFirst() {
        ManagedChannel channel = channel();
        try {
            KvPutRequest put = KvPutRequest.newBuilder().setKey("kv/retried").setValue(ByteString.copyFromUtf8("v"))
                    .setRequestId(777_001).build();
            KvPutResponse first = stub(channel).put(put);
            KvPutResponse retry = stub(channel).put(put);
            assertThat(first.getCreated()).isTrue();
            assertThat(retry.getRevision()).isEqualTo(first.getRevision());
            assertThat(retry.getCreated()).isTrue();
            KvGetResponse read = stub(channel).get(KvGetRequest.newBuilder().setKey("kv/retried").build());
            assertThat(read.getExists()).isTrue();
            assertThat(read.getEntry().getVersion()).as("one put").isOne();
            assertThat(read.getHeader().getRevision()).isGreaterThanOrEqualTo(first.getRevision());

            KvDeleteRequest delete = KvDeleteRequest.newBuilder().setKey("kv/retried").setRequestId(777_002).build();
            KvDeleteResponse deleted = stub(channel).delete(delete);
            stub(channel).put(KvPutRequest.newBuilder().setKey("kv/retried").setValue(ByteString.copyFromUtf8("again")).build());
            KvDeleteResponse retriedDelete = stub(channel).delete(delete);
            assertThat(retriedDelete.getDeleted()).isTrue();
            assertThat(retriedDelete.getRevision()).isEqualTo(deleted.getRevision());
            assertThat(stub(channel).get(KvGetRequest.newBuilder().setKey("kv/retried").build()).getExists())
                    .as("the retried delete did not delete the key put since").isTrue();
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void aCompareAndSetThatMissesAnswersTheKeyAsItIs() {
        ManagedChannel channel = channel();
        try {
            long revision = stub(channel).put(KvPutRequest.newBuilder().setKey("kv/miss").setValue(ByteString.copyFromUtf8("now")).build())
                    .getRevision();
            KvCompareAndSetResponse missed = stub(channel).compareAndSet(KvCompareAndSetRequest.newBuilder().setKey("kv/miss")
                    .setCompare(KvCompare.KV_COMPARE_VALUE).setExpectedValue(ByteString.copyFromUtf8("then"))
                    .setValue(ByteString.copyFromUtf8("next")).build());
            assertThat(missed.getSwapped()).isFalse();
            assertThat(missed.getModRevision()).isEqualTo(revision);
            assertThat(missed.getHasValue()).isTrue();
            assertThat(missed.getValue().toStringUtf8()).isEqualTo("now");

            KvCompareAndSetResponse absent = stub(channel).compareAndSet(KvCompareAndSetRequest.newBuilder().setKey("kv/miss-absent")
                    .setCompare(KvCompare.KV_COMPARE_MOD_REVISION).setExpectedModRevision(5).build());
            assertThat(absent.getSwapped()).isFalse();
            assertThat(absent.getModRevision()).isZero();
            assertThat(absent.getHasValue()).isFalse();

            KvCompareAndSetResponse swapped = stub(channel).compareAndSet(KvCompareAndSetRequest.newBuilder().setKey("kv/miss")
                    .setCompare(KvCompare.KV_COMPARE_MOD_REVISION).setExpectedModRevision(revision)
                    .setValue(ByteString.copyFromUtf8("next")).setTtlMs(60_000).build());
            assertThat(swapped.getSwapped()).isTrue();
            assertThat(swapped.getPrevModRevision()).isEqualTo(revision);
            assertThat(swapped.getVersion()).isEqualTo(2);
            KvGetResponse read = stub(channel).get(KvGetRequest.newBuilder().setKey("kv/miss").build());
            assertThat(read.getEntry().getModRevision()).isEqualTo(swapped.getModRevision());
            assertThat(read.getEntry().getTtlMs()).isEqualTo(60_000);
        } finally {
            channel.shutdownNow();
        }
    }

    private static void assertInvalid(Runnable call, String field) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(e.getStatus().getDescription()).contains(field);
        });
    }

    @Test
    void badInputIsAnInvalidArgumentNamingTheFieldAndNothingChanges() {
        ManagedChannel channel = channel();
        try {
            KvServiceGrpc.KvServiceBlockingStub stub = stub(channel);
            Consumer<KvPutRequest.Builder> put = b -> stub.put(b.build());
            assertInvalid(() -> put.accept(KvPutRequest.newBuilder().setKey("")), "key");
            assertInvalid(() -> put.accept(KvPutRequest.newBuilder().setKey("x".repeat(2000))), "key");
            assertInvalid(() -> put.accept(KvPutRequest.newBuilder().setKey("kv/bad")
                    .setValue(ByteString.copyFrom(new byte[64 * 1024 + 1]))), "value");
            assertInvalid(() -> put.accept(KvPutRequest.newBuilder().setKey("kv/bad").setTtlMs(-1)), "ttl_ms");
            assertInvalid(() -> put.accept(KvPutRequest.newBuilder().setKey("kv/bad").setTtlMs(24L * 3600 * 1000 + 1)), "ttl_ms");
            assertInvalid(() -> put.accept(KvPutRequest.newBuilder().setKey("kv/bad").setTtlMs(1000).setLeaseId(5)), "ttl_ms");
            assertInvalid(() -> stub.compareAndSet(KvCompareAndSetRequest.newBuilder().setKey("kv/bad").build()), "compare");
            assertInvalid(() -> stub.compareAndSet(KvCompareAndSetRequest.newBuilder().setKey("kv/bad")
                    .setCompare(KvCompare.KV_COMPARE_MOD_REVISION).setExpectedModRevision(0).build()), "expected_mod_revision");
            assertInvalid(() -> stub.delete(KvDeleteRequest.newBuilder().setKey("kv/bad").setExpectedModRevision(-2).build()),
                    "expected_mod_revision");
            assertInvalid(() -> stub.list(KvListRequest.newBuilder().setLimit(-1).build()), "limit");
            assertThat(stub.get(KvGetRequest.newBuilder().setKey("kv/bad").build()).getExists()).as("nothing was put").isFalse();
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void aListAnswersKeysByPrefixInKeyOrderAPageAtATime() {
        TenureKv kv = tenure.client().kv();
        for (String key : List.of("listed/c", "listed/a", "listed/e", "listed/b", "listed/d", "listedx", "other/a")) {
            kv.put(key, key.toUpperCase());
        }
        TenureKv.Page first = kv.list("listed/", 2);
        assertThat(first.entries()).extracting(TenureKv.Entry::key).containsExactly("listed/a", "listed/b");
        assertThat(first.entries().get(0).valueAsString()).isEqualTo("LISTED/A");
        assertThat(first.more()).isTrue();
        assertThat(first.nextAfterKey()).isEqualTo("listed/b");
        TenureKv.Page second = kv.list("listed/", first.nextAfterKey(), 2);
        assertThat(second.entries()).extracting(TenureKv.Entry::key).containsExactly("listed/c", "listed/d");
        TenureKv.Page last = kv.list("listed/", second.nextAfterKey(), 2);
        assertThat(last.entries()).extracting(TenureKv.Entry::key).containsExactly("listed/e");
        assertThat(last.more()).isFalse();
        assertThat(kv.list("listed/", 100).entries()).hasSize(5);
        assertThat(kv.list("nothing/", 100).entries()).isEmpty();
    }

    @Test
    void aWatchOnAKeySeesItsPutsWithTheValueAndItsDelete() {
        TenureClient client = tenure.client();
        List<WatchEvent> events = new CopyOnWriteArrayList<>();
        try (Watch watch = client.watch("kv/watched", 0, new WatchListener() {
            @Override
            public void onEvent(WatchEvent event) {
                events.add(event);
            }

            @Override
            public void onCompacted(long compactRevision) {
            }

            @Override
            public void onError(TenureException error) {
            }
        })) {
            // The watch is open once a change made after it is seen.
            AtomicLong opened = new AtomicLong();
            Await.until("the watch sees a put", Duration.ofSeconds(10), () -> {
                opened.set(client.kv().put("kv/watched", "a"));
                return !events.isEmpty();
            });
            long put = client.kv().put("kv/watched", "b");
            client.kv().delete("kv/watched");
            Await.until("a put and a delete seen", Duration.ofSeconds(10),
                    () -> events.stream().anyMatch(e -> e.type() == WatchEvent.Type.DELETE));
            List<WatchEvent> after = events.stream().filter(e -> e.revision() > opened.get()).toList();
            assertThat(after).extracting(WatchEvent::type).containsExactly(WatchEvent.Type.PUT, WatchEvent.Type.DELETE);
            assertThat(after).extracting(WatchEvent::kind).containsOnly("kv");
            assertThat(after.get(0).revision()).isEqualTo(put);
            assertThat(new String(after.get(0).metadata(), StandardCharsets.UTF_8)).as("the value").isEqualTo("b");
        }
    }
}

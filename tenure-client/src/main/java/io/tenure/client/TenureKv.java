package io.tenure.client;

import com.google.protobuf.ByteString;
import io.tenure.proto.v1.KvCompare;
import io.tenure.proto.v1.KvCompareAndSetRequest;
import io.tenure.proto.v1.KvDeleteRequest;
import io.tenure.proto.v1.KvEntry;
import io.tenure.proto.v1.KvGetRequest;
import io.tenure.proto.v1.KvListRequest;
import io.tenure.proto.v1.KvPutRequest;
import io.tenure.proto.v1.KvServiceGrpc;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The replicated key-value store, as {@link TenureClient#kv()} hands it out (etcd's KV, Hazelcast
 * CP's CPMap): small configuration, a service's address bound to its session, a marker that goes
 * away by itself.
 *
 * <pre>{@code
 * TenureKv kv = client.kv();
 * kv.put("config/mode", "active");
 * kv.put("workers/w1", "10.0.0.7:9000", lease);          // goes when the lease ends
 * kv.put("cache/warm", "yes", Duration.ofMinutes(5));      // goes 5 minutes after this put
 * Optional<TenureKv.Entry> mode = kv.get("config/mode");
 * if (kv.compareAndSet("config/mode", mode.get().modRevision(), "draining".getBytes(UTF_8))) { ... }
 * kv.txn().ifVersion("config/mode", EQUAL, 2).thenPut("config/mode", "off").thenAdd("config/epoch", 1).commit();
 * }</pre>
 *
 * <p>Keys are not blank and at most 1,024 bytes of UTF-8; values at most 65,536 bytes. A key may
 * be bound to a live lease (it goes when the lease ends) or have a time to live (it goes once the
 * TTL has passed since its latest put, on the leader's clock: never sooner, and after a leader
 * change at most one TTL later), not both; a put replaces the key's value, lease and TTL. Every
 * change is applied through the log and answered once it is committed, and is applied once even
 * when its call is retried after a lost answer or on another member after a failover. Reads are
 * linearizable. Keys have a namespace of their own: a key may share its name with a lock.
 *
 * <p>Immutable and thread-safe.
 */
public final class TenureKv {
    /** The largest value, in bytes (the server's limit). */
    public static final int MAX_VALUE_BYTES = 64 * 1024;

    /**
     * A key as read.
     *
     * @param createRevision the revision of the put that created it
     * @param modRevision    the revision of its latest put: what {@link #compareAndSet(String, long, byte[])} compares
     * @param version        its puts since it was created (1 after the first)
     * @param leaseId        the lease it is bound to, 0 = none
     * @param ttl            its time to live after its latest put, {@link Duration#ZERO} = none
     */
    public record Entry(String key, byte[] value, long createRevision, long modRevision, long version, long leaseId, Duration ttl) {
        /** The value as UTF-8 text. */
        public String valueAsString() {
            return new String(value, StandardCharsets.UTF_8);
        }
    }

    /** One page of a listing, in key order; {@code more} when keys with the prefix follow: list again after {@code nextAfterKey}. */
    public record Page(List<Entry> entries, boolean more, String nextAfterKey) {}

    private final TenureClient client;

    TenureKv(TenureClient client) {
        this.client = client;
    }

    /** Sets {@code key} to {@code value}, with no lease and no TTL; returns the put's revision (the key's mod revision). */
    public long put(String key, byte[] value) {
        return Futures.await(put(key, value, 0, 0, FailoverCall.ON_TRANSPORT_THREAD), what(key));
    }

    /** {@link #put(String, byte[])} of the value's UTF-8 bytes. */
    public long put(String key, String value) {
        return put(key, utf8(value));
    }

    /** Sets {@code key} to {@code value}, to go {@code ttl} after this put unless put again (1 ms to 24 h). */
    public long put(String key, byte[] value, Duration ttl) {
        return Futures.await(put(key, value, 0, ttlMillis(ttl), FailoverCall.ON_TRANSPORT_THREAD), what(key));
    }

    /** {@link #put(String, byte[], Duration)} of the value's UTF-8 bytes. */
    public long put(String key, String value, Duration ttl) {
        return put(key, utf8(value), ttl);
    }

    /**
     * Sets {@code key} to {@code value}, bound to {@code lease}: it goes when the lease ends.
     *
     * @throws LeaseNotFoundException when the lease has ended
     */
    public long put(String key, byte[] value, Lease lease) {
        return Futures.await(put(key, value, Objects.requireNonNull(lease, "lease").id(), 0, FailoverCall.ON_TRANSPORT_THREAD), what(key));
    }

    /** {@link #put(String, byte[], Lease)} of the value's UTF-8 bytes. */
    public long put(String key, String value, Lease lease) {
        return put(key, utf8(value), lease);
    }

    /** {@link #put(String, byte[])}, without blocking. */
    public CompletableFuture<Long> putAsync(String key, byte[] value) {
        return put(key, value, 0, 0, null);
    }

    /** {@link #put(String, byte[], Duration)}, without blocking. */
    public CompletableFuture<Long> putAsync(String key, byte[] value, Duration ttl) {
        return put(key, value, 0, ttlMillis(ttl), null);
    }

    /** {@link #put(String, byte[], Lease)}, without blocking. */
    public CompletableFuture<Long> putAsync(String key, byte[] value, Lease lease) {
        return put(key, value, Objects.requireNonNull(lease, "lease").id(), 0, null);
    }

    /** {@code answers}: {@link FailoverCall#ON_TRANSPORT_THREAD} for a caller that only blocks on the result, else null. */
    private CompletableFuture<Long> put(String key, byte[] value, long leaseId, long ttlMillis, Executor answers) {
        checkKey(key);
        checkValue("value", value);
        KvPutRequest request = KvPutRequest.newBuilder().setKey(key).setValue(ByteString.copyFrom(value)).setLeaseId(leaseId)
                .setTtlMs(ttlMillis).setRequestId(client.nextAcquireRequest()).build();
        return client.call(KvServiceGrpc.getPutMethod(), request, answers).thenApply(r -> r.getRevision());
    }

    /**
     * Creates {@code key} with {@code value} only if it does not exist.
     *
     * @return true when created; false when the key exists (nothing changed)
     */
    public boolean putIfAbsent(String key, byte[] value) {
        return Futures.await(compareAndSet(key, KvCompare.KV_COMPARE_ABSENT, 0, null, value, FailoverCall.ON_TRANSPORT_THREAD), what(key));
    }

    /** {@link #putIfAbsent(String, byte[])} of the value's UTF-8 bytes. */
    public boolean putIfAbsent(String key, String value) {
        return putIfAbsent(key, utf8(value));
    }

    /** {@link #putIfAbsent}, without blocking. */
    public CompletableFuture<Boolean> putIfAbsentAsync(String key, byte[] value) {
        return compareAndSet(key, KvCompare.KV_COMPARE_ABSENT, 0, null, value, null);
    }

    /**
     * Sets {@code key} to {@code value} only if its mod revision is {@code expectedModRevision}
     * (as a read or a put answered it): nobody put it since.
     *
     * @return true when set; false when the key is absent or was put since (nothing changed)
     */
    public boolean compareAndSet(String key, long expectedModRevision, byte[] value) {
        return Futures.await(swap(key, expectedModRevision, value, FailoverCall.ON_TRANSPORT_THREAD).thenApply(Swap::swapped), what(key));
    }

    /** {@link #compareAndSet(String, long, byte[])}, without blocking. */
    public CompletableFuture<Boolean> compareAndSetAsync(String key, long expectedModRevision, byte[] value) {
        return swapAsync(key, expectedModRevision, value).thenApply(Swap::swapped);
    }

    /**
     * Sets {@code key} to {@code value} only if its value is exactly {@code expected} now.
     *
     * @return true when set; false when the key is absent or has another value (nothing changed)
     */
    public boolean compareAndSet(String key, byte[] expected, byte[] value) {
        checkValue("expected", expected);
        return Futures.await(compareAndSet(key, KvCompare.KV_COMPARE_VALUE, 0, expected, value, FailoverCall.ON_TRANSPORT_THREAD), what(key));
    }

    /** {@link #compareAndSet(String, byte[], byte[])} of UTF-8 text. */
    public boolean compareAndSet(String key, String expected, String value) {
        return compareAndSet(key, utf8(expected), utf8(value));
    }

    /** {@link #compareAndSet(String, byte[], byte[])}, without blocking. */
    public CompletableFuture<Boolean> compareAndSetAsync(String key, byte[] expected, byte[] value) {
        checkValue("expected", expected);
        return compareAndSet(key, KvCompare.KV_COMPARE_VALUE, 0, expected, value, null);
    }

    /**
     * A compare-and-set's answer with its revision: {@code swapped}, and then {@code modRevision} is
     * the revision of the put it made; otherwise the key's mod revision now (0 when it is absent).
     */
    public record Swap(boolean swapped, long modRevision) {}

    /**
     * {@link #compareAndSet(String, long, byte[])}, answering the revision too: of the put when it
     * swapped, else the key's current one (for the next attempt's compare).
     */
    public Swap swap(String key, long expectedModRevision, byte[] value) {
        return Futures.await(swap(key, expectedModRevision, value, FailoverCall.ON_TRANSPORT_THREAD), what(key));
    }

    /** {@link #swap}, without blocking. */
    public CompletableFuture<Swap> swapAsync(String key, long expectedModRevision, byte[] value) {
        return swap(key, expectedModRevision, value, null);
    }

    /** {@code answers}: {@link FailoverCall#ON_TRANSPORT_THREAD} for a caller that only blocks on the result, else null. */
    private CompletableFuture<Swap> swap(String key, long expectedModRevision, byte[] value, Executor answers) {
        if (expectedModRevision < 1) {
            throw new IllegalArgumentException("expectedModRevision must be at least 1 (use putIfAbsent for a key that must not exist), got "
                    + expectedModRevision);
        }
        return compareAndSetCall(key, KvCompare.KV_COMPARE_MOD_REVISION, expectedModRevision, null, value, answers)
                .thenApply(r -> new Swap(r.getSwapped(), r.getModRevision()));
    }

    private CompletableFuture<Boolean> compareAndSet(String key, KvCompare compare, long expectedModRevision, byte[] expected, byte[] value,
                                                     Executor answers) {
        return compareAndSetCall(key, compare, expectedModRevision, expected, value, answers).thenApply(r -> r.getSwapped());
    }

    private CompletableFuture<io.tenure.proto.v1.KvCompareAndSetResponse> compareAndSetCall(String key, KvCompare compare,
                                                                                          long expectedModRevision, byte[] expected, byte[] value,
                                                                                          Executor answers) {
        checkKey(key);
        checkValue("value", value);
        KvCompareAndSetRequest.Builder request = KvCompareAndSetRequest.newBuilder().setKey(key).setCompare(compare)
                .setExpectedModRevision(expectedModRevision).setValue(ByteString.copyFrom(value))
                .setRequestId(client.nextAcquireRequest());
        if (expected != null) {
            request.setExpectedValue(ByteString.copyFrom(expected));
        }
        return client.call(KvServiceGrpc.getCompareAndSetMethod(), request.build(), answers);
    }

    /**
     * A new transaction over keys and counters: comparisons, then the operations applied when all
     * hold and those applied otherwise, all or none ({@link KvTransaction}).
     */
    public KvTransaction txn() {
        return new KvTransaction(client);
    }

    /** The key, read linearizably; empty when it is absent. */
    public Optional<Entry> get(String key) {
        return Futures.await(get(key, FailoverCall.ON_TRANSPORT_THREAD), what(key));
    }

    /** {@link #get}, without blocking. */
    public CompletableFuture<Optional<Entry>> getAsync(String key) {
        return get(key, null);
    }

    private CompletableFuture<Optional<Entry>> get(String key, Executor answers) {
        checkKey(key);
        return client.call(KvServiceGrpc.getGetMethod(), KvGetRequest.newBuilder().setKey(key).build(), answers)
                .thenApply(r -> r.getExists() ? Optional.of(entry(r.getEntry())) : Optional.empty());
    }

    /**
     * Deletes the key, whatever it is.
     *
     * @return true when it existed (and is gone now); false when it was absent
     */
    public boolean delete(String key) {
        return Futures.await(delete(key, FailoverCall.ON_TRANSPORT_THREAD), what(key));
    }

    /** {@link #delete}, without blocking. */
    public CompletableFuture<Boolean> deleteAsync(String key) {
        return delete(key, (Executor) null);
    }

    private CompletableFuture<Boolean> delete(String key, Executor answers) {
        checkKey(key);
        KvDeleteRequest request = KvDeleteRequest.newBuilder().setKey(key).setRequestId(client.nextAcquireRequest()).build();
        return client.call(KvServiceGrpc.getDeleteMethod(), request, answers).thenApply(r -> r.getDeleted());
    }

    /**
     * Deletes the key only if its mod revision is {@code expectedModRevision}: nobody put it since.
     *
     * @return true when deleted; false when it is absent or was put since (nothing changed)
     */
    public boolean delete(String key, long expectedModRevision) {
        checkKey(key);
        if (expectedModRevision < 1) {
            throw new IllegalArgumentException("expectedModRevision must be at least 1, got " + expectedModRevision);
        }
        KvDeleteRequest request = KvDeleteRequest.newBuilder().setKey(key).setExpectedModRevision(expectedModRevision)
                .setRequestId(client.nextAcquireRequest()).build();
        return Futures.await(client.call(KvServiceGrpc.getDeleteMethod(), request, FailoverCall.ON_TRANSPORT_THREAD).thenApply(r -> r.getDeleted()), what(key));
    }

    /**
     * The first keys that start with {@code prefix} ("" = every key), in key order, at most
     * {@code limit} (1 to 10,000), read linearizably; continue with {@link #list(String, String, int)}.
     */
    public Page list(String prefix, int limit) {
        return list(prefix, "", limit);
    }

    /** The keys that start with {@code prefix} after key {@code afterKey} (a page's {@link Page#nextAfterKey()}). */
    public Page list(String prefix, String afterKey, int limit) {
        return Futures.await(list(prefix, afterKey, limit, FailoverCall.ON_TRANSPORT_THREAD), "key-value list of '" + prefix + "'");
    }

    /** {@link #list(String, String, int)}, without blocking. */
    public CompletableFuture<Page> listAsync(String prefix, String afterKey, int limit) {
        return list(prefix, afterKey, limit, null);
    }

    private CompletableFuture<Page> list(String prefix, String afterKey, int limit, Executor answers) {
        if (limit < 1 || limit > 10_000) {
            throw new IllegalArgumentException("limit must be between 1 and 10000, got " + limit);
        }
        KvListRequest request = KvListRequest.newBuilder().setPrefix(prefix == null ? "" : prefix)
                .setAfterKey(afterKey == null ? "" : afterKey).setLimit(limit).build();
        return client.call(KvServiceGrpc.getListMethod(), request, answers).thenApply(r -> new Page(
                r.getEntriesList().stream().map(TenureKv::entry).toList(), r.getMore(), r.getNextAfterKey()));
    }

    private static Entry entry(KvEntry e) {
        return new Entry(e.getKey(), e.getValue().toByteArray(), e.getCreateRevision(), e.getModRevision(), e.getVersion(),
                e.getLeaseId(), Duration.ofMillis(e.getTtlMs()));
    }

    static long ttlMillis(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isNegative() || ttl.isZero() || ttl.compareTo(Duration.ofDays(1)) > 0 || ttl.toMillis() < 1) {
            throw new IllegalArgumentException("ttl must be between 1 ms and 24 hours, got " + ttl);
        }
        return ttl.toMillis();
    }

    static byte[] utf8(String value) {
        return Objects.requireNonNull(value, "value").getBytes(StandardCharsets.UTF_8);
    }

    static void checkKey(String key) {
        if (key == null || key.isEmpty()) {
            throw new IllegalArgumentException("key must not be empty, got " + (key == null ? "null" : "''"));
        }
        int bytes = key.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > 1024) {
            throw new IllegalArgumentException("key is " + bytes + " bytes of UTF-8, over the limit of 1024");
        }
    }

    static void checkValue(String what, byte[] value) {
        Objects.requireNonNull(value, what);
        if (value.length > MAX_VALUE_BYTES) {
            throw new IllegalArgumentException(what + " is " + value.length + " bytes, over the limit of " + MAX_VALUE_BYTES);
        }
    }

    private static String what(String key) {
        return "key '" + key + "'";
    }

    @Override
    public String toString() {
        return "TenureKv";
    }
}

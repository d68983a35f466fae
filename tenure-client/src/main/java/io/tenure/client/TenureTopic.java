package io.tenure.client;

import com.google.protobuf.ByteString;
import io.tenure.proto.v1.SignalPublishRequest;
import io.tenure.proto.v1.SignalServiceGrpc;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Signals (seed 004's {@code signal}/{@code listen}, Redisson's RTopic, NATS subjects with queue
 * groups), as {@link TenureClient#topic()} hands them out: wake-ups and notices that workers pass
 * each other, not stored.
 *
 * <pre>{@code
 * TenureTopic topic = client.topic();
 * try (Subscription s = topic.listen("builds.>", "workers", (channel, payload) -> build(payload))) {
 *     int receivers = topic.publish("builds.web", "commit 1f3a");   // one of the "workers" gets it
 * }
 * }</pre>
 *
 * <p>Channels are dot-separated tokens; a pattern's {@code *} matches one whole token and a last
 * {@code >} the one or more tokens that follow. A publish goes through the cluster's log, which
 * decides its receivers: every matching listener without a group, and one matching member of
 * each group, in turn. So a listener on any member receives what is published on any member, in
 * publish order per channel, at most once. Signals are not stored: a listener receives only what
 * is published while it is registered and connected. A publish is retried after a lost answer or
 * a failover with the same request id, and delivered once.
 *
 * <p>A listener is bound to a lease (the client's session lease unless one is given) and goes
 * when it ends. Immutable and thread-safe.
 */
public final class TenureTopic {
    private final TenureClient client;

    TenureTopic(TenureClient client) {
        this.client = client;
    }

    /**
     * Publishes {@code payload} on {@code channel} (no wildcards, at most 64 KiB of payload).
     *
     * @return how many listeners it went to (a queue group counts once)
     * @throws InvalidArgumentException for an empty channel, one with a wildcard, or a payload over the limit
     */
    public int publish(String channel, byte[] payload) {
        return Futures.await(publish(channel, payload, FailoverCall.ON_TRANSPORT_THREAD), "signal on '" + channel + "'");
    }

    /** {@link #publish(String, byte[])} with the payload in UTF-8. */
    public int publish(String channel, String payload) {
        return publish(channel, payload.getBytes(StandardCharsets.UTF_8));
    }

    /** {@link #publish(String, byte[])}, without blocking. */
    public CompletableFuture<Integer> publishAsync(String channel, byte[] payload) {
        return publish(channel, payload, null);
    }

    /** {@code answers}: {@link FailoverCall#ON_TRANSPORT_THREAD} for a caller that only blocks on the result, else null. */
    private CompletableFuture<Integer> publish(String channel, byte[] payload, Executor answers) {
        Objects.requireNonNull(channel, "channel");
        SignalPublishRequest request = SignalPublishRequest.newBuilder().setChannel(channel)
                .setPayload(payload == null ? ByteString.EMPTY : ByteString.copyFrom(payload))
                .setRequestId(client.nextAcquireRequest()).build();
        return client.call(SignalServiceGrpc.getPublishMethod(), request, answers).thenApply(r -> r.getReceivers());
    }

    /** Listens to the channels {@code pattern} matches, with the client's session lease; see {@link #listen(String, String, Lease, SignalListener)}. */
    public Subscription listen(String pattern, SignalListener listener) {
        return listen(pattern, "", null, listener);
    }

    /** Listens as a member of queue {@code group} (each signal goes to one member of it); see {@link #listen(String, String, Lease, SignalListener)}. */
    public Subscription listen(String pattern, String group, SignalListener listener) {
        return listen(pattern, group, null, listener);
    }

    /**
     * Listens to the channels {@code pattern} matches until the subscription is closed or the
     * lease ends. Returns at once; {@link Subscription#started()} completes once a member has
     * registered the listener (signals published after that reach it), or fails when the listen
     * is refused (a malformed pattern, say: {@link InvalidArgumentException}).
     *
     * @param group a queue group, or "" (or null) for none
     * @param lease the lease the listener is bound to, or null for the client's session lease
     */
    public Subscription listen(String pattern, String group, Lease lease, SignalListener listener) {
        Objects.requireNonNull(pattern, "pattern");
        Objects.requireNonNull(listener, "listener");
        return client.openSubscription(pattern, group == null ? "" : group, lease, listener);
    }

    @Override
    public String toString() {
        return "TenureTopic";
    }
}

package io.tenure.server.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.http.Context;
import io.javalin.http.sse.SseClient;
import io.javalin.http.sse.SseHandler;
import io.tenure.server.Member;
import io.tenure.server.security.Principal;
import io.tenure.server.signal.Signals;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The {@code /v1/signals} endpoints on the member's signal service (the one gRPC's
 * {@code SignalService} calls):
 *
 * <ul>
 *   <li><b>POST /v1/signals/{channel}/publish</b> with {@code payload} (UTF-8) or
 *       {@code payload_base64}, and an optional {@code request_id}: 200 with the {@code receivers}
 *       count.</li>
 *   <li><b>GET /v1/signals?pattern=P[&amp;group=G][&amp;ttl_ms=T]</b> with {@code Accept:
 *       text/event-stream}: a server-sent event stream. The member grants the listener a lease of
 *       its own (TTL {@code ttl_ms}, at least the cluster's minimum), keeps it alive while the
 *       stream is open, and revokes it when the stream closes. The first event,
 *       {@code listening}, names the {@code listener_id} and {@code lease_id}; each {@code signal}
 *       event carries {@code channel} and {@code payload} (or {@code payload_base64}); an
 *       {@code error} event (the error body of the other routes) ends the stream.</li>
 * </ul>
 * A bad pattern, group or TTL is 400 before the stream starts.
 */
final class SignalApi {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long DEFAULT_TTL_MILLIS = 10_000;

    private final Member member;
    private final ScheduledExecutorService timer;
    private final Executor writers;
    private final Duration minTtl;

    /** @param writers where the events are written: a slow client blocks one of them, never the member's delivery */
    SignalApi(Member member, ScheduledExecutorService timer, Executor writers, Duration minTtl) {
        this.member = member;
        this.timer = timer;
        this.writers = writers;
        this.minTtl = minTtl;
    }

    CompletableFuture<Answer> publish(Principal caller, String channel, JsonBody body, String requestId) {
        byte[] payload = JsonValues.read(body, "payload", false);
        long request = body.optionalLong("request_id", 0);
        return member.signals().publish(caller, channel, payload == null ? new byte[0] : payload, request).thenApply(receivers -> {
            ObjectNode answer = NODES.objectNode();
            answer.put("channel", channel);
            answer.put("receivers", receivers);
            return Answer.ok(answer);
        });
    }

    /** Checks the query, then turns the request into an event stream (see the class comment). */
    void listen(Principal caller, Context ctx) throws Exception {
        String pattern = ctx.queryParam("pattern");
        if (pattern == null || pattern.isEmpty()) {
            throw Failure.invalid("pattern", "pattern is required: the channels to listen to (tokens, '*', a last '>')");
        }
        String problem = io.tenure.core.watch.KeyPattern.check("pattern", pattern);
        if (problem != null) {
            throw Failure.invalid("pattern", problem);
        }
        String group = ctx.queryParam("group") == null ? "" : ctx.queryParam("group");
        long ttl = DEFAULT_TTL_MILLIS;
        String ttlText = ctx.queryParam("ttl_ms");
        if (ttlText != null) {
            try {
                ttl = Long.parseLong(ttlText);
            } catch (NumberFormatException e) {
                throw Failure.invalid("ttl_ms", "ttl_ms must be a whole number of milliseconds, got '" + ttlText + "'");
            }
        }
        if (ttl < minTtl.toMillis()) {
            throw Failure.invalid("ttl_ms", "ttl_ms must be at least the cluster's minimum TTL of " + minTtl.toMillis() + " ms, got " + ttl);
        }
        if (!"text/event-stream".equals(ctx.header("Accept"))) {
            throw Failure.invalid("Accept", "listening is a server-sent event stream: send Accept: text/event-stream");
        }
        long leaseTtl = ttl;
        new SseHandler(0, client -> stream(caller, client, pattern, group, leaseTtl)).handle(ctx);
    }

    private void stream(Principal caller, SseClient client, String pattern, String group, long ttl) {
        client.keepAlive();
        Stream stream = new Stream(client);
        client.onClose(stream::end);
        member.leases().grant(caller, 0, ttl, "http-listener").thenCompose(lease -> {
            stream.leaseId.set(lease.leaseId());
            // Each renewal also writes a comment line, so that a quiet stream is not closed as idle.
            stream.renewals = timer.scheduleAtFixedRate(() -> {
                member.leases().keepAlive(caller, lease.leaseId());
                stream.heartbeat();
            }, ttl / 3, ttl / 3, TimeUnit.MILLISECONDS);
            return member.signals().listen(caller, pattern, group, lease.leaseId(), 0, stream).thenApply(listener -> {
                ObjectNode listening = NODES.objectNode();
                listening.put("listener_id", listener.id());
                listening.put("lease_id", lease.leaseId());
                listening.put("pattern", pattern);
                listening.put("group", group);
                stream.listener.set(listener);
                stream.write("listening", listening);
                return listener;
            });
        }).whenComplete((listener, error) -> {
            if (error != null) {
                stream.fail(Failures.of(error));
            } else if (stream.ended()) {
                stream.release(); // the client left while the listener was being made
            }
        });
    }

    /** One event stream: the listener's sink, writing on the writers' threads one batch at a time. */
    private final class Stream implements Signals.Sink {
        final SseClient client;
        final AtomicReference<Signals.Listener> listener = new AtomicReference<>();
        final java.util.concurrent.atomic.AtomicLong leaseId = new java.util.concurrent.atomic.AtomicLong();
        volatile ScheduledFuture<?> renewals;
        private final ArrayDeque<Runnable> writes = new ArrayDeque<>();
        private boolean writing;
        private boolean ended;

        Stream(SseClient client) {
            this.client = client;
        }

        @Override
        public void send(List<Signals.Signal> signals) {
            for (Signals.Signal s : signals) {
                ObjectNode event = NODES.objectNode();
                event.put("channel", s.channel());
                byte[] payload = s.payload();
                ObjectNode holder = NODES.objectNode();
                JsonValues.put(holder, payload);
                if (holder.has("value")) {
                    event.put("payload", holder.get("value").asText());
                } else {
                    event.put("payload_base64", holder.get("value_base64").asText());
                }
                write("signal", event);
            }
        }

        /** Ready while nothing waits to be written: a client slower than the signals falls behind in the member's queue, and is cut off there. */
        @Override
        public synchronized boolean ready() {
            return writes.isEmpty() && !writing;
        }

        @Override
        public void cutOff(String reason, boolean tooSlow) {
            fail(new Failure(tooSlow ? ErrorCode.OVERLOADED : ErrorCode.UNAVAILABLE, null, reason));
        }

        @Override
        public void leaseEnded(String reason) {
            fail(new Failure(ErrorCode.LEASE_NOT_FOUND, "lease_id", reason));
        }

        void fail(Failure failure) {
            write("error", failure.body(JSON));
            synchronized (this) {
                writes.add(client::close);
            }
            end();
        }

        void heartbeat() {
            enqueue(() -> client.sendComment("listening"));
        }

        void write(String event, ObjectNode data) {
            String text = data.toString();
            enqueue(() -> client.sendEvent(event, text));
        }

        private void enqueue(Runnable write) {
            boolean start;
            synchronized (this) {
                writes.add(write);
                start = !writing;
                writing = true;
            }
            if (start) {
                writers.execute(this::drain);
            }
        }

        private void drain() {
            while (true) {
                Runnable next;
                synchronized (this) {
                    next = writes.poll();
                    if (next == null) {
                        writing = false;
                        break;
                    }
                }
                try {
                    next.run();
                } catch (RuntimeException e) {
                    end(); // the client went away mid-write
                }
            }
            Signals.Listener l = listener.get();
            if (l != null) {
                l.resume();
            }
        }

        /** The stream closed (either side): the listener goes, its lease is revoked. Idempotent. */
        void end() {
            synchronized (this) {
                ended = true;
            }
            release();
        }

        synchronized boolean ended() {
            return ended;
        }

        /** Gives back what the stream has: its listener, its renewals, its lease. Each once. */
        void release() {
            Signals.Listener l = listener.getAndSet(null);
            if (l != null) {
                l.close();
            }
            ScheduledFuture<?> r = renewals;
            if (r != null) {
                r.cancel(false);
            }
            long lease = leaseId.getAndSet(0);
            if (lease != 0) {
                member.leases().revoke(Principal.MEMBER, lease); // the stream's own lease, taken back when it ends
            }
        }
    }
}

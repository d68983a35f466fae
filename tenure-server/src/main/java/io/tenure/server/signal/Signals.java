package io.tenure.server.signal;

import io.tenure.core.access.Level;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.LeaseResult;
import io.tenure.core.signal.SignalListen;
import io.tenure.core.signal.SignalPublish;
import io.tenure.core.signal.SignalResult;
import io.tenure.core.signal.SignalTable;
import io.tenure.core.signal.SignalUnlisten;
import io.tenure.core.watch.KeyPattern;
import io.tenure.server.Admission;
import io.tenure.server.Overloaded;
import io.tenure.server.PacedQueue;
import io.tenure.server.PermissionDenied;
import io.tenure.server.RequestRejected;
import io.tenure.server.metrics.ServerMetrics;
import io.tenure.server.raft.Proposer;
import io.tenure.server.security.Permissions;
import io.tenure.server.security.Principal;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

/**
 * Signals' operations, for every front end, and their delivery to the listeners connected to this
 * member.
 *
 * <p>A publish goes through the log, where {@link SignalTable} decides its receivers; every member
 * applies it and hands the signal to those of its receivers whose stream is here. So a listener
 * on any member receives what is published on any member, in log order, and a queue group's turn
 * is one decision for the whole cluster. The price is a log entry (an fsync, shared with whatever
 * else the entry carries) per publish; docs/benchmarks.md measures it.
 *
 * <p>A listener is registered here before its listen goes to the log, so it misses nothing
 * applied after its registration. Each has a queue drained at the pace its transport accepts;
 * one that falls more than {@link #MAX_PENDING} signals behind is cut off with a reason (and
 * unregistered) instead of growing memory or slowing anyone else.
 */
public final class Signals {
    /** Undelivered signals one listener may have before it is cut off as too slow. */
    public static final int MAX_PENDING = 10_000;

    /** One signal as delivered. */
    public record Signal(String channel, byte[] payload) {}

    /** Where a listener's signals go: one transport stream. Calls come from one thread at a time per listener. */
    public interface Sink {
        void send(List<Signal> signals);

        /** Whether the transport takes more now. */
        boolean ready();

        /** The listener was ended on the server's side (too slow, the member stopping); the reason says which. */
        void cutOff(String reason, boolean tooSlow);

        /** The listener's lease ended, and the listener with it. */
        void leaseEnded(String reason);
    }

    /** A listener whose stream is on this member. */
    public final class Listener {
        private final long id;
        private final long leaseId;
        private final Sink sink;
        private final PacedQueue<Signal> queue;
        private volatile boolean closed;

        private Listener(long id, long leaseId, Sink sink) {
            this.id = id;
            this.leaseId = leaseId;
            this.sink = sink;
            this.queue = new PacedQueue<>(MAX_PENDING, delivery, new PacedQueue.Transport<>() {
                @Override
                public void send(List<Signal> batch) {
                    sink.send(batch);
                }

                @Override
                public boolean ready() {
                    return sink.ready();
                }
            });
        }

        public long id() {
            return id;
        }

        /** The transport can take more: resume delivery. */
        public void resume() {
            queue.resume();
        }

        /** The client went away or cancelled: the listener stops here and is unregistered through the log. */
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            queue.close();
            local.remove(id, this);
            proposer.propose(new SignalUnlisten(id, leaseId)).whenComplete((applied, error) ->
                    metrics.signalChange("unlisten", error != null ? ServerMetrics.failureResult(error) : "done"));
        }
    }

    private final Proposer proposer;
    private final Permissions permissions;
    /** The kind its permissions name. */
    private static final String KIND = Permissions.kind(SignalTable.NAME);
    private final Admission admission;
    private final ServerMetrics metrics;
    private final Executor delivery;
    private final SecureRandom ids = new SecureRandom();
    private final ConcurrentHashMap<Long, Listener> local = new ConcurrentHashMap<>();

    public Signals(Proposer proposer, Permissions permissions, Admission admission, ServerMetrics metrics, Executor delivery) {
        this.proposer = proposer;
        this.permissions = permissions;
        this.admission = admission;
        this.metrics = metrics;
        this.delivery = delivery;
    }

    /**
     * Publishes {@code payload} on {@code channel}; completes with how many listeners it went to.
     *
     * @param requestId the client's id for this publish, the same on its retries (0 = none)
     */
    public CompletableFuture<Integer> publish(Principal caller, String channel, byte[] payload, long requestId) {
        long started = System.nanoTime();
        byte[] bytes = payload == null ? new byte[0] : payload;
        String problem = SignalTable.checkPublish(channel, bytes);
        CompletableFuture<Integer> outcome = RequestRejected.unless(problem != null && problem.startsWith("payload") ? "payload" : "channel", problem)
                .thenCompose(ok -> permissions.allowed(caller, KIND, channel, Level.WRITE))
                .thenCompose(ok -> {
                    try {
                        admission.admit("signal");
                    } catch (Overloaded e) {
                        return CompletableFuture.failedFuture(e);
                    }
                    return proposer.propose(new SignalPublish(channel, bytes, requestId));
                })
                .thenApply(applied -> {
                    if (applied.result() instanceof SignalResult.Published p) {
                        return p.receiverCount();
                    }
                    throw RequestRejected.of(applied);
                });
        outcome.whenComplete((count, error) -> {
            metrics.latency("signal_publish", System.nanoTime() - started);
            metrics.signalChange("publish", error != null ? ServerMetrics.failureResult(error) : count > 0 ? "delivered" : "unheard");
        });
        return outcome;
    }

    /**
     * Registers a listener for the channels {@code pattern} matches, bound to lease {@code leaseId},
     * delivering to {@code sink}; completes once the registration is applied, with the listener
     * (whose {@link Listener#close} ends it). Signals may reach the sink before this completes.
     *
     * @param group    a queue group, or empty for none
     * @param replaces the listener this one takes over from, or 0
     */
    public CompletableFuture<Listener> listen(Principal caller, String pattern, String group, long leaseId, long replaces, Sink sink) {
        if (leaseId == 0) {
            return CompletableFuture.failedFuture(RequestRejected.invalid("lease_id",
                    "lease_id must name a lease: a listener is bound to one, and goes when it ends"));
        }
        long id = newId();
        SignalListen command = new SignalListen(id, leaseId, pattern == null ? "" : pattern, group, replaces);
        String problem = SignalTable.checkListen(command);
        if (problem != null) {
            return CompletableFuture.failedFuture(RequestRejected.invalid(problem.startsWith("group") ? "group" : "pattern", problem));
        }
        try {
            // A listener reads what is published on the names its pattern matches, with its own lease.
            permissions.require(caller, KIND, KeyPattern.parse("pattern", command.pattern()).literalPrefix(), Level.READ);
            permissions.requireLease(caller, leaseId);
            admission.admit("signal");
        } catch (Overloaded | PermissionDenied e) {
            return CompletableFuture.failedFuture(e);
        }
        Listener listener = new Listener(id, leaseId, sink);
        local.put(id, listener);
        CompletableFuture<Listener> outcome = proposer.propose(command).thenApply(applied -> {
            if (applied.result() instanceof SignalResult.Listening) {
                return listener;
            }
            listener.closed = true;
            listener.queue.close();
            local.remove(id, listener);
            throw RequestRejected.of(applied);
        });
        outcome.whenComplete((l, error) -> {
            if (error != null && !listener.closed) {
                listener.close(); // the outcome is unknown: take back a registration that may have been applied
            }
            metrics.signalChange("listen", error != null ? ServerMetrics.failureResult(error) : "done");
        });
        return outcome;
    }

    private long newId() {
        long id;
        do {
            id = ids.nextLong() & Long.MAX_VALUE;
        } while (id == 0 || local.containsKey(id));
        return id;
    }

    /** Hands the signals of an applied entry to the receivers whose stream is here; called on the apply thread. */
    public void applied(List<Applied> results) {
        if (local.isEmpty()) {
            return;
        }
        for (Applied applied : results) {
            if (applied.result() instanceof LeaseResult.LeaseEnded ended) {
                leaseEnded(ended.leaseId());
            }
            if (applied.result() instanceof SignalResult.Published p && !p.retry()) {
                Signal signal = null;
                int delivered = 0;
                for (long id : p.receivers()) {
                    Listener l = local.get(id);
                    if (l != null) {
                        if (signal == null) {
                            signal = new Signal(p.channel(), p.payload());
                        }
                        offer(l, signal);
                        delivered++;
                    }
                }
                if (delivered > 0) {
                    metrics.signalsDelivered(delivered);
                }
            }
        }
    }

    /** The lease's listeners went with it in the state: their streams here end, saying why. */
    private void leaseEnded(long leaseId) {
        for (Listener l : local.values()) {
            if (l.leaseId == leaseId) {
                l.closed = true;
                l.queue.close();
                local.remove(l.id, l);
                l.sink.leaseEnded("lease " + leaseId + " ended (expired or revoked), and its listener with it");
            }
        }
    }

    /** How many listeners have their stream on this member. */
    public int localCount() {
        return local.size();
    }

    /** Ends every listener here (the member is stopping): their clients listen again on another member. */
    public void closeAll(String reason) {
        for (Listener l : new ArrayList<>(local.values())) {
            l.closed = true;
            l.queue.close();
            local.remove(l.id, l);
            l.sink.cutOff(reason, false);
        }
    }

    private void offer(Listener l, Signal signal) {
        if (l.closed) {
            return;
        }
        if (!l.queue.offer(signal)) {
            l.close();
            l.sink.cutOff("listener fell more than " + MAX_PENDING + " signals behind and was cut off; signals are not stored, listen again", true);
        }
    }
}

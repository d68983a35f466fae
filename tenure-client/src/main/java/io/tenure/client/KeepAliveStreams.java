package io.tenure.client;

import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.tenure.proto.v1.LeaseKeepAliveRequest;
import io.tenure.proto.v1.LeaseKeepAliveResponse;
import io.tenure.proto.v1.LockServiceGrpc;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * The client's keep-alive streams: one {@code LeaseKeepAlive} stream per member, shared by every
 * lease the client keeps alive through that member (as etcd's client does). A member then holds
 * one stream per client instead of one per lease, and a client with 100,000 leases opens one
 * call, not 100,000.
 *
 * <p>Each lease's {@link LeaseKeeper} still decides everything about its lease; it sees the
 * stream through an {@link Attachment}, which carries its sends in flight. Acknowledgements are
 * routed by lease id. When the stream breaks, every attached keeper hears of it (on the gRPC
 * thread that saw the end, never under this object's monitor) and re-attaches, which opens a new
 * stream.
 *
 * <p><b>Batching.</b> A keep-alive goes out at once when the stream sent nothing in the last
 * {@link #BATCH_WINDOW_MICROS}; otherwise it waits for the end of that window, and every lease
 * due meanwhile shares one request (its {@code ids}), answered by one response listing each
 * lease with its TTL. A lone lease's keep-alive is never delayed, and a client keeping 100,000
 * leases alive sends about a thousand messages a second, not 30,000. Each keeper records the
 * time it asked for the send, so a wait in the batch only makes its safe window more conservative.
 *
 * <p>Lock order: a keeper calls in here holding its own monitor; this object never calls a
 * keeper while holding its own monitor or a stream's.
 */
final class KeepAliveStreams {
    /** Leases a client keeps before its reconnects are spread out. */
    static final int SPREAD_FROM_LEASES = 100;
    /** The spread of reconnects grows by this much per lease kept, up to TTL/24. */
    static final long SPREAD_PER_LEASE_NANOS = TimeUnit.MICROSECONDS.toNanos(10);

    /** How long a keep-alive waits for others to share its request. */
    static final long BATCH_WINDOW_MICROS = 2_000;
    /** A batch this large is sent at once (the server takes at most 10,000 per request). */
    static final int MAX_BATCH = 4_096;

    private final Endpoints endpoints;
    /** How many leases this client keeps alive. */
    private final IntSupplier leasesKept;
    private final MonotonicClock clock;
    private final ScheduledExecutorService scheduler;
    /** The open stream to each member, by endpoint index. Guarded by this. */
    private final Map<Integer, Shared> open = new HashMap<>();

    KeepAliveStreams(Endpoints endpoints, MonotonicClock clock, ScheduledExecutorService scheduler, IntSupplier leasesKept) {
        this.leasesKept = leasesKept;
        this.endpoints = endpoints;
        this.clock = clock;
        this.scheduler = scheduler;
    }

    /**
     * How long a lease waits before it re-sends its keep-alive on a new stream after the first
     * break (a failover): a random part of a window that grows with the leases this client keeps
     * (10 µs each beyond the first {@value #SPREAD_FROM_LEASES}, up to TTL/24), so that a client
     * moving 100,000 leases to a new leader does not send them as one burst. TTL/24 leaves most of
     * what a lease can spare for the failover itself (its safe window less a keep-alive period: TTL/6
     * from 15 s up, 2.5 s below).
     */
    long reconnectSpreadNanos(long ttlNanos) {
        int leases = leasesKept.getAsInt();
        if (leases <= SPREAD_FROM_LEASES) {
            return 0;
        }
        long window = Math.min(leases * SPREAD_PER_LEASE_NANOS, ttlNanos / 24);
        return java.util.concurrent.ThreadLocalRandom.current().nextLong(window + 1);
    }

    /**
     * Attaches {@code keeper}'s lease to the stream to the member at {@code endpoint}, opening one
     * if none is open. The attachment is the keeper's until it breaks or is detached.
     */
    Attachment attach(int endpoint, long leaseId, LeaseKeeper keeper) {
        Shared shared;
        synchronized (this) {
            shared = open.get(endpoint);
            if (shared == null || shared.ended) {
                shared = new Shared(endpoint);
                open.put(endpoint, shared);
                // Started here, so that no lease sends on it before the call exists. gRPC runs
                // the call's callbacks on its executor, never inside this call.
                shared.start();
            }
        }
        Attachment attachment = new Attachment(shared, leaseId, keeper);
        shared.attached.put(leaseId, attachment);
        // If it ended meanwhile, the keeper sees it with Attachment.ended() (checked after this returns).
        return attachment;
    }

    private void ended(Shared shared) {
        synchronized (this) {
            open.remove(shared.endpoint, shared);
        }
    }

    /** Closes the stream once no lease is attached to it (the member answers with the end of the call). */
    private void closeIfIdle(Shared shared) {
        synchronized (this) {
            if (!shared.attached.isEmpty() || shared.ended) {
                return;
            }
            open.remove(shared.endpoint, shared);
            shared.ended = true;
        }
        shared.finish();
    }

    /** One lease's view of a shared stream: its keep-alives in flight there. */
    final class Attachment {
        final Shared shared;
        final long leaseId;
        final LeaseKeeper keeper;
        /** Send times of keep-alives not yet answered, oldest first. Guarded by the keeper. */
        final ArrayDeque<Long> pendingSends = new ArrayDeque<>();

        private Attachment(Shared shared, long leaseId, LeaseKeeper keeper) {
            this.shared = shared;
            this.leaseId = leaseId;
            this.keeper = keeper;
        }

        int endpoint() {
            return shared.endpoint;
        }

        /** Whether the stream has ended (the keeper must move, as if told by {@link LeaseKeeper#onBroken}). */
        boolean ended() {
            return shared.ended;
        }

        /**
         * Sends a keep-alive for this lease (in the next batch).
         *
         * @throws IllegalStateException when the stream already ended (the keeper treats it as broken)
         */
        void send() {
            shared.send(leaseId);
        }

        /**
         * Whether the member answered any keep-alive on this stream at or after {@code since}
         * (clock reading): it is alive and serving, if slowly.
         */
        boolean answeredSince(long since) {
            return shared.answered && shared.lastAnswerNanos - since >= 0;
        }

        /** The keeper gives the member up (it stopped answering): breaks the stream for every lease on it. */
        void abandon(String why) {
            shared.cancel(why);
        }

        /** The keeper no longer uses this stream (its lease ended, or it moved): the stream closes when no lease is left. */
        void detach() {
            if (shared.attached.remove(leaseId, this)) {
                closeIfIdle(shared);
            }
        }
    }

    /** One stream to one member. */
    private final class Shared implements ClientResponseObserver<LeaseKeepAliveRequest, LeaseKeepAliveResponse> {
        final int endpoint;
        final Map<Long, Attachment> attached = new ConcurrentHashMap<>();
        /** Set once; under KeepAliveStreams' monitor when set by closeIfIdle, else by the call's end. */
        volatile boolean ended;
        private ClientCallStreamObserver<LeaseKeepAliveRequest> requests;
        /** Lease ids waiting for the next request. Guarded by this. */
        private long[] batch = new long[16];
        private int batched;
        private boolean flushScheduled;
        private long lastFlushNanos;
        private boolean flushedOnce;
        /** When the member last answered on this stream (any lease), once it has. */
        volatile long lastAnswerNanos;
        volatile boolean answered;

        Shared(int endpoint) {
            this.endpoint = endpoint;
        }

        /** Starts the call; caller holds KeepAliveStreams' monitor. */
        void start() {
            try {
                LockServiceGrpc.newStub(endpoints.keepAliveChannel(endpoint)).leaseKeepAlive(this);
            } catch (RuntimeException e) {
                // No lease is attached yet; the attaching keeper sees ended() and moves on.
                ended = true;
                open.remove(endpoint, this);
            }
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<LeaseKeepAliveRequest> requestStream) {
            synchronized (this) {
                requests = requestStream;
            }
        }

        synchronized void send(long leaseId) {
            if (ended || requests == null) {
                throw new IllegalStateException("the keep-alive stream to " + endpoints.target(endpoint) + " has ended");
            }
            if (batched == batch.length) {
                batch = Arrays.copyOf(batch, batched * 2);
            }
            batch[batched++] = leaseId;
            if (flushScheduled && batched < MAX_BATCH) {
                return; // goes with the batch that is waiting
            }
            long now = clock.nanoTime();
            long window = TimeUnit.MICROSECONDS.toNanos(BATCH_WINDOW_MICROS);
            long wait = flushedOnce ? lastFlushNanos + window - now : 0;
            if (wait <= 0 || batched >= MAX_BATCH) {
                flushLocked();
                return;
            }
            flushScheduled = true;
            try {
                scheduler.schedule(this::flush, wait, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closed) {
                flushScheduled = false;
                flushLocked(); // the client is closing: send now rather than never
            }
        }

        private synchronized void flush() {
            flushScheduled = false;
            if (batched > 0) {
                flushLocked();
            }
        }

        /** Sends the waiting keep-alives as one request; dropped if the stream ended (each keeper hears of the end and resends). */
        private void flushLocked() {
            if (batched == 0 || ended || requests == null) {
                batched = 0;
                return;
            }
            LeaseKeepAliveRequest.Builder request = LeaseKeepAliveRequest.newBuilder();
            if (batched == 1) {
                request.setId(batch[0]);
            } else {
                for (int i = 0; i < batched; i++) {
                    request.addIds(batch[i]);
                }
            }
            batched = 0;
            lastFlushNanos = clock.nanoTime();
            flushedOnce = true;
            if (batch.length > 1024) {
                batch = new long[16]; // do not keep a burst's array for good
            }
            requests.onNext(request.build());
        }

        /**
         * Cancels the call. Not under this stream's monitor: with a direct executor the end is
         * told inside the cancel, to every attached keeper, and a keeper may be waiting for this
         * monitor to send. (A gRPC call may be cancelled from any thread.)
         */
        void cancel(String why) {
            ClientCallStreamObserver<LeaseKeepAliveRequest> call;
            synchronized (this) {
                call = requests;
            }
            if (call != null) {
                call.cancel(why, null);
            }
        }

        /** Ends an idle stream. A cancel, not a half-close: acknowledgements still in flight are of no use to anyone. */
        void finish() {
            cancel("no lease is kept alive on this stream any more");
        }

        @Override
        public void onNext(LeaseKeepAliveResponse ack) {
            lastAnswerNanos = clock.nanoTime();
            answered = true;
            int renewed = ack.getRenewedIdsCount();
            if (renewed > 0) {
                for (int i = 0; i < renewed; i++) {
                    acknowledged(ack.getRenewedIds(i), ack.getRenewedTtlMs(i));
                }
                return;
            }
            acknowledged(ack.getId(), ack.getTtlMs() > 0 ? ack.getTtlMs() : TimeUnit.SECONDS.toMillis(ack.getTtl()));
        }

        private void acknowledged(long leaseId, long ttlMillis) {
            Attachment attachment = attached.get(leaseId);
            if (attachment != null) {
                attachment.keeper.onAck(attachment, ttlMillis);
            }
        }

        @Override
        public void onError(Throwable failure) {
            broken(failure);
        }

        @Override
        public void onCompleted() {
            broken(null);
        }

        private void broken(Throwable failure) {
            ended = true;
            ended(this);
            List<Attachment> all = List.copyOf(attached.values());
            attached.clear();
            for (Attachment attachment : all) {
                attachment.keeper.onBroken(attachment, failure);
            }
        }
    }
}

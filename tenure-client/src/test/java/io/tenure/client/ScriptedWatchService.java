package io.tenure.client;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.tenure.proto.v1.Event;
import io.tenure.proto.v1.KeyValue;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.ResponseHeader;
import io.tenure.proto.v1.WatchRequest;
import io.tenure.proto.v1.WatchResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A LockService that serves only Watch, and only as the test scripts it: the test takes each
 * opened stream from {@link #streams}, reads the create request, and answers created, events,
 * cancellation or compaction as a member would, or breaks the stream. Not a watch server.
 */
final class ScriptedWatchService extends LockServiceGrpc.LockServiceImplBase {
    final String name;
    /** When set, a stream is failed with this status as soon as its create request arrives. */
    volatile Status refuseStreams;
    /** Streams whose create request arrived and that were not refused, in order. */
    final BlockingQueue<Stream> streams = new LinkedBlockingQueue<>();
    /** The create requests of refused streams, in order. */
    final BlockingQueue<WatchRequest> refused = new LinkedBlockingQueue<>();

    ScriptedWatchService(String name) {
        this.name = name;
    }

    /** The next accepted stream, waiting a little for it. */
    Stream nextStream() throws InterruptedException {
        Stream stream = streams.poll(5, TimeUnit.SECONDS);
        if (stream == null) {
            throw new AssertionError("no watch stream was opened on " + name);
        }
        return stream;
    }

    @Override
    public StreamObserver<WatchRequest> watch(StreamObserver<WatchResponse> observer) {
        Stream stream = new Stream((ServerCallStreamObserver<WatchResponse>) observer);
        return new StreamObserver<>() {
            @Override
            public void onNext(WatchRequest request) {
                if (stream.create == null && !request.getCancel()) {
                    stream.create = request;
                    Status refusal = refuseStreams;
                    if (refusal != null) {
                        refused.add(request);
                        observer.onError(refusal.asRuntimeException());
                    } else {
                        streams.add(stream);
                    }
                } else {
                    stream.laterRequests.add(request);
                }
            }

            @Override
            public void onError(Throwable t) {
                stream.cancelledByClient.complete(null);
            }

            @Override
            public void onCompleted() {
                stream.halfClosedByClient.complete(null);
            }
        };
    }

    /** One Watch stream as the member sees it. */
    final class Stream {
        final ServerCallStreamObserver<WatchResponse> responses;
        /** Completes when the client cancels the call. */
        final CompletableFuture<Void> cancelledByClient = new CompletableFuture<>();
        final CompletableFuture<Void> halfClosedByClient = new CompletableFuture<>();
        /** Requests after the create request (cancels), in order. */
        final BlockingQueue<WatchRequest> laterRequests = new LinkedBlockingQueue<>();
        volatile WatchRequest create;

        Stream(ServerCallStreamObserver<WatchResponse> responses) {
            this.responses = responses;
            responses.setOnCancelHandler(() -> cancelledByClient.complete(null));
        }

        /** Confirms the watch, as of this member's {@code revision}. */
        Stream created(long revision) {
            send(response(revision).setCreated(true));
            return this;
        }

        Stream events(long memberRevision, Event... events) {
            WatchResponse.Builder response = response(memberRevision);
            for (Event event : events) {
                response.addEvents(event);
            }
            send(response);
            return this;
        }

        /** Ends the watch from the member's side, keeping the stream open. */
        void cancel(String reason) {
            send(response(0).setCanceled(true).setCancelReason(reason));
        }

        /** Answers the create request with compaction: the start revision is older than {@code horizon}. */
        void compacted(long horizon) {
            send(response(horizon).setCreated(true).setCanceled(true).setCompactRevision(horizon)
                    .setCancelReason("start_revision " + create.getStartRevision()
                            + " is older than the oldest retained revision " + horizon));
        }

        void fail(Status status) {
            responses.onError(status.asRuntimeException());
        }

        private WatchResponse.Builder response(long revision) {
            return WatchResponse.newBuilder()
                    .setHeader(ResponseHeader.newBuilder().setMemberId(name.hashCode() & 0xffff).setRevision(revision))
                    .setWatchId(create.getWatchId());
        }

        private void send(WatchResponse.Builder response) {
            responses.onNext(response.build());
        }
    }

    /** A grant of {@code key} to {@code holder}'s lease with fencing token {@code revision}. */
    static Event put(String key, long revision, String holder, long lease) {
        return Event.newBuilder().setType(Event.EventType.PUT).setKv(kv(key, revision, holder, lease)).build();
    }

    /** A hand-off: {@code key} granted to {@code holder}, taken from {@code prevHolder}'s grant {@code prevToken}. */
    static Event handOff(String key, long revision, String holder, long lease, byte[] metadata,
                         String prevHolder, long prevLease, long prevToken) {
        KeyValue kv = kv(key, revision, holder, lease).toBuilder().setMetadata(ByteString.copyFrom(metadata)).build();
        return Event.newBuilder().setType(Event.EventType.PUT).setKv(kv)
                .setPrevKv(kv(key, prevToken, prevHolder, prevLease)).build();
    }

    /** A release of {@code key} with nobody waiting, at {@code revision}, ending {@code prevHolder}'s grant {@code prevToken}. */
    static Event delete(String key, long revision, String prevHolder, long prevLease, long prevToken) {
        KeyValue deleted = KeyValue.newBuilder().setKey(ByteString.copyFromUtf8(key)).setModRevision(revision).build();
        return Event.newBuilder().setType(Event.EventType.DELETE).setKv(deleted)
                .setPrevKv(kv(key, prevToken, prevHolder, prevLease)).build();
    }

    private static KeyValue kv(String key, long revision, String holder, long lease) {
        return KeyValue.newBuilder()
                .setKey(ByteString.copyFromUtf8(key))
                .setValue(ByteString.copyFrom(holder, StandardCharsets.UTF_8))
                .setHolder(holder)
                .setLease(lease)
                .setModRevision(revision)
                .setCreateRevision(revision)
                .setVersion(1)
                .build();
    }
}

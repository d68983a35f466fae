package io.tenure.server.grpc;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.tenure.proto.v1.Signal;
import io.tenure.proto.v1.SignalListenRequest;
import io.tenure.proto.v1.SignalListenResponse;
import io.tenure.proto.v1.SignalPublishRequest;
import io.tenure.proto.v1.SignalPublishResponse;
import io.tenure.proto.v1.SignalServiceGrpc;
import io.tenure.server.Member;
import io.tenure.server.signal.Signals;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The gRPC front end of signals: translates {@code tenure.v1.SignalService} to {@link Signals} and
 * back. A Listen call is one listener for the life of the call: its first response names the
 * listener, the next ones carry its signals; the client's cancel unregisters it.
 */
public final class GrpcSignalService extends SignalServiceGrpc.SignalServiceImplBase {
    /** Its calls that never wait, for {@link CallThreads}: they check their input, propose a command and return. */
    public static final java.util.Set<String> NON_BLOCKING = java.util.Set.of(
            SignalServiceGrpc.getPublishMethod().getFullMethodName(),
            SignalServiceGrpc.getListenMethod().getFullMethodName());

    private final Member member;

    public GrpcSignalService(Member member) {
        this.member = member;
    }

    @Override
    public void publish(SignalPublishRequest request, StreamObserver<SignalPublishResponse> observer) {
        GrpcLockService.answer(member.signals().publish(GrpcAuthentication.principal(), request.getChannel(), request.getPayload().toByteArray(), request.getRequestId()),
                observer, receivers -> SignalPublishResponse.newBuilder().setHeader(member.header()).setReceivers(receivers).build());
    }

    @Override
    public void listen(SignalListenRequest request, StreamObserver<SignalListenResponse> observer) {
        ServerCallStreamObserver<SignalListenResponse> call = (ServerCallStreamObserver<SignalListenResponse>) observer;
        AtomicReference<Signals.Listener> registered = new AtomicReference<>();
        Signals.Sink sink = new Signals.Sink() {
            @Override
            public void send(List<Signals.Signal> signals) {
                SignalListenResponse.Builder response = SignalListenResponse.newBuilder().setHeader(member.header());
                for (Signals.Signal s : signals) {
                    response.addSignals(Signal.newBuilder().setChannel(s.channel()).setPayload(ByteString.copyFrom(s.payload())));
                }
                synchronized (call) {
                    if (!call.isCancelled()) {
                        call.onNext(response.build());
                    }
                }
            }

            @Override
            public boolean ready() {
                return registered.get() != null && call.isReady();
            }

            @Override
            public void cutOff(String reason, boolean tooSlow) {
                end(tooSlow ? Status.RESOURCE_EXHAUSTED : Status.UNAVAILABLE, reason);
            }

            @Override
            public void leaseEnded(String reason) {
                end(Status.NOT_FOUND, reason);
            }

            private void end(Status status, String reason) {
                synchronized (call) {
                    if (!call.isCancelled()) {
                        call.onError(status.withDescription(reason).asRuntimeException());
                    }
                }
            }
        };
        call.setOnCancelHandler(() -> {
            Signals.Listener l;
            synchronized (call) {
                l = registered.getAndSet(null);
            }
            if (l != null) {
                l.close();
            }
        });
        call.setOnReadyHandler(() -> {
            Signals.Listener l = registered.get();
            if (l != null) {
                l.resume();
            }
        });
        // The first response goes out before any signal: the sink is not ready until it has.
        member.signals().listen(GrpcAuthentication.principal(), request.getPattern(), request.getGroup(), request.getLeaseId(), request.getReplaces(), sink)
                .whenComplete((listener, error) -> {
            if (error != null) {
                synchronized (call) {
                    if (!call.isCancelled()) {
                        call.onError(Statuses.of(error));
                    }
                }
                return;
            }
            synchronized (call) {
                if (call.isCancelled()) {
                    listener.close();
                    return;
                }
                call.onNext(SignalListenResponse.newBuilder().setHeader(member.header()).setListenerId(listener.id()).build());
                registered.set(listener);
            }
            listener.resume();
        });
    }
}

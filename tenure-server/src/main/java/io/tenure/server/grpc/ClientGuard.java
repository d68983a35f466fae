package io.tenure.server.grpc;

import io.grpc.Attributes;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerTransportFilter;
import io.grpc.Status;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.server.RequestIds;
import io.tenure.server.RequestRateGuard;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.MDC;

/**
 * What the gRPC front end checks before a call reaches the member: the connection limit, the
 * request-rate guard, and the request id every log line of the call carries.
 *
 * <ul>
 *   <li>A connection beyond {@code maxConnections} is accepted by the transport but each of its
 *       calls is refused with {@code RESOURCE_EXHAUSTED} naming the limit, so the client learns why
 *       (a silently dropped connection looks like a dead member).</li>
 *   <li>Each call (and each message of a watch stream) takes a token from the rate guard; lease
 *       keep-alives do not, so overload sheds new work before it lets leases lapse.</li>
 *   <li>The request id comes from the {@code x-request-id} metadata or is made here, and sits in
 *       the MDC while the call's handlers run.</li>
 * </ul>
 */
public final class ClientGuard extends ServerTransportFilter implements ServerInterceptor {
    private static final Attributes.Key<Boolean> OVER_LIMIT = Attributes.Key.create("tenure.over-connection-limit");
    private static final Metadata.Key<String> REQUEST_ID = Metadata.Key.of(RequestIds.HEADER, Metadata.ASCII_STRING_MARSHALLER);
    static final String KEEP_ALIVE = LockServiceGrpc.getLeaseKeepAliveMethod().getFullMethodName();

    private final int maxConnections;
    private final RequestRateGuard rate;
    private final AtomicInteger connections = new AtomicInteger();

    public ClientGuard(int maxConnections, RequestRateGuard rate) {
        this.maxConnections = maxConnections;
        this.rate = rate;
    }

    @Override
    public Attributes transportReady(Attributes transport) {
        boolean over = connections.incrementAndGet() > maxConnections;
        return transport.toBuilder().set(OVER_LIMIT, over).build();
    }

    @Override
    public void transportTerminated(Attributes transport) {
        connections.decrementAndGet();
    }

    /** Client connections open now. */
    public int connections() {
        return connections.get();
    }

    @Override
    public <Req, Resp> ServerCall.Listener<Req> interceptCall(ServerCall<Req, Resp> call, Metadata headers,
                                                             ServerCallHandler<Req, Resp> next) {
        if (Boolean.TRUE.equals(call.getAttributes().get(OVER_LIMIT))) {
            call.close(Status.RESOURCE_EXHAUSTED.withDescription("this member serves at most " + maxConnections
                    + " client connections (--max-connections); use another member or fewer connections"), new Metadata());
            return new ServerCall.Listener<>() { };
        }
        boolean keepAlive = KEEP_ALIVE.equals(call.getMethodDescriptor().getFullMethodName());
        if (!keepAlive && !rate.tryAdmit()) {
            call.close(Status.RESOURCE_EXHAUSTED.withDescription(rate.refusal().getMessage()), new Metadata());
            return new ServerCall.Listener<>() { };
        }
        String requestId = RequestIds.accept(headers.get(REQUEST_ID));
        ServerCall.Listener<Req> listener;
        MDC.put(RequestIds.MDC_KEY, requestId);
        try {
            listener = next.startCall(call, headers);
        } finally {
            MDC.remove(RequestIds.MDC_KEY);
        }
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
            @Override
            public void onMessage(Req message) {
                MDC.put(RequestIds.MDC_KEY, requestId);
                try {
                    super.onMessage(message);
                } finally {
                    MDC.remove(RequestIds.MDC_KEY);
                }
            }

            @Override
            public void onHalfClose() {
                MDC.put(RequestIds.MDC_KEY, requestId);
                try {
                    super.onHalfClose();
                } finally {
                    MDC.remove(RequestIds.MDC_KEY);
                }
            }
        };
    }
}

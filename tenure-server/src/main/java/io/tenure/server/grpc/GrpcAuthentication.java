package io.tenure.server.grpc;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.tenure.proto.v1.AuthServiceGrpc;
import io.tenure.server.Unauthenticated;
import io.tenure.server.security.BearerTokens;
import io.tenure.server.security.Gate;
import io.tenure.server.security.Principal;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Works out each call's {@link Principal} from its {@code authorization: Bearer} metadata and the
 * client certificate of its TLS connection, and refuses it {@code UNAUTHENTICATED} when
 * authentication is on and it showed no valid credential. Streams (session, keep-alive, watch)
 * are checked once, when they open. {@code Authenticate} and {@code AuthStatus} are let through
 * without a credential: they are how a client gets one and asks what it is.
 */
public final class GrpcAuthentication implements ServerInterceptor {
    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    static final Context.Key<Principal> PRINCIPAL = Context.key("tenure-principal");

    private final Gate gate;
    private final io.tenure.server.security.UserRates userRates;

    public GrpcAuthentication(Gate gate, io.tenure.server.security.UserRates userRates) {
        this.gate = gate;
        this.userRates = userRates;
    }

    /** The principal of the call this thread serves ({@link Principal#NOBODY} outside a call). */
    static Principal principal() {
        Principal principal = PRINCIPAL.get();
        return principal == null ? Principal.NOBODY : principal;
    }

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
        String method = call.getMethodDescriptor().getFullMethodName();
        String token = Gate.bearer(headers.get(AUTHORIZATION)).orElse(null);
        X509Certificate certificate = certificateOf(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
        Principal principal;
        try {
            principal = gate.identify(token, certificate, "grpc", remoteOf(call));
        } catch (Unauthenticated e) {
            if (method.equals(AuthServiceGrpc.getAuthenticateMethod().getFullMethodName())
                    || method.equals(AuthServiceGrpc.getAuthStatusMethod().getFullMethodName())) {
                principal = Principal.NOBODY.from(remoteOf(call));
            } else {
                call.close(Statuses.of(e).getStatus(), new Metadata());
                return new ServerCall.Listener<>() { };
            }
        }
        if (call.getMethodDescriptor().getType().clientSendsOneMessage() && !ClientGuard.KEEP_ALIVE.equals(method)) {
            try {
                userRates.admit(principal);
            } catch (io.tenure.server.LimitExceeded overQuota) {
                call.close(Statuses.of(overQuota).getStatus(), new Metadata());
                return new ServerCall.Listener<>() { };
            }
        }
        ServerCall.Listener<Q> listener = Contexts.interceptCall(Context.current().withValue(PRINCIPAL, principal), call, headers, next);
        if (call.getMethodDescriptor().getType().clientSendsOneMessage()) {
            return listener;
        }
        // A stream (session, keep-alive, watch) lives on: each message is checked against the
        // credentials as this member applies them now, and the stream ends when it no longer counts.
        Principal opened = principal;
        Gate.Credential credential = gate.credential(principal, token == null ? null : BearerTokens.hash(token),
                certificate == null ? null : Gate.userOf(certificate));
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
            private boolean ended;

            @Override
            public void onMessage(Q message) {
                if (ended) {
                    return;
                }
                if (!credential.stillValid()) {
                    ended = true;
                    gate.credentialEnded(opened, "grpc");
                    call.close(Status.UNAUTHENTICATED.withDescription("the stream's credential no longer counts (its token "
                            + "was revoked or expired, its user's password changed or the user was deleted, or authentication "
                            + "was switched on); open it again with a valid one"), new Metadata());
                    return;
                }
                super.onMessage(message);
            }

            @Override
            public void onHalfClose() {
                if (!ended) {
                    super.onHalfClose();
                }
            }
        };
    }

    private static String remoteOf(ServerCall<?, ?> call) {
        java.net.SocketAddress address = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        return address instanceof java.net.InetSocketAddress inet ? inet.getAddress().getHostAddress() + ":" + inet.getPort() : "";
    }

    private static X509Certificate certificateOf(SSLSession session) {
        if (session == null) {
            return null;
        }
        try {
            Certificate[] chain = session.getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate x509 ? x509 : null;
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
    }
}

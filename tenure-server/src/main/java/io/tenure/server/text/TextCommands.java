package io.tenure.server.text;

import io.tenure.core.kernel.Result;
import io.tenure.server.LimitExceeded;
import io.tenure.server.Overloaded;
import io.tenure.server.RequestRejected;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The text protocol's commands by name, and what every request goes through before its command:
 * the authentication handshake, the key check, and the mapping of a service's refusal to
 * dflockd's statuses. The commands themselves live with their kind ({@link HoldCommands} and the
 * other groups), each a thin translation to the member's services.
 */
final class TextCommands {
    private static final Logger LOG = LoggerFactory.getLogger(TextCommands.class);
    /** An answer starting with this closes the connection once the rest of it is written. */
    static final String CLOSE_AFTER = "\u0000close:";
    /** The commands whose key line is not a key (dflockd skips its check for them). */
    private static final Set<String> KEYLESS = Set.of("auth", "stats", "ping");
    /** The principal of a connection that showed the shared {@code --auth-token}: a user of that name holds its roles. */
    static final String TEXT_TOKEN_USER = "text";
    /** dflockd waits this long before closing a connection that failed authentication. */
    static final long AUTH_FAILURE_DELAY_MS = 100;
    /** How long a request the member sheds is retried before it is answered {@code error}. */
    static final long SHED_RETRY_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final Map<String, TextCommand> byName = new HashMap<>();
    private final TextSettings settings;

    /** Who a connection is once it authenticated: its token's user while authentication is on; null: no gate (tests' members). */
    private final io.tenure.server.security.Gate gate;

    TextCommands(TextSettings settings, TextFront front, io.tenure.server.security.Gate gate) {
        this.settings = settings;
        this.gate = gate;
        byName.put("ping", (session, request) -> CompletableFuture.completedFuture("ok"));
        byName.put("auth", this::auth);
        for (Consumer<Map<String, TextCommand>> group : java.util.List.<Consumer<Map<String, TextCommand>>>of(
                HoldCommands::register, DataCommands::register, PushCommands::register,
                into -> StatsCommand.register(into, front))) {
            group.accept(byName);
        }
    }

    /** Serves one request of {@code session}: the handshake, the key check, then its command. */
    CompletableFuture<String> serve(TextSession session, TextRequest request) {
        if (!session.authenticated() && usersOn() && session.certificate() != null) {
            // A client certificate that names a user is a credential here too, as on the gRPC and HTTP ports.
            try {
                io.tenure.server.security.Principal principal = gate.identify(null, session.certificate(), "text",
                        session.principal().remote());
                if (!principal.isNobody()) {
                    session.authenticate(gate.credential(principal, null, io.tenure.server.security.Gate.userOf(session.certificate())));
                }
            } catch (io.tenure.server.Unauthenticated e) {
                // no user of that name: the connection must auth with a token, as one without a certificate
            }
        }
        if (!session.authenticated() && (settings.authToken() != null || usersOn())) {
            if (!request.command().equals("auth")) {
                LOG.info("event=text_auth_missing connection={} command=\"{}\"", session.id(), request.command());
                session.member().metrics().authFailure("text");
                return closeAfter(session, "error_auth");
            }
        } else if (request.command().equals("auth") && session.authenticated()) {
            return CompletableFuture.completedFuture("ok");
        } else if (session.credential() != null && !session.credential().stillValid()) {
            // Its user's token no longer counts here (revoked, expired, a new password, the user deleted).
            LOG.info("event=text_auth_ended connection={} user={}", session.id(), session.principal().user());
            gate.credentialEnded(session.principal(), "text");
            return closeAfter(session, "error_auth");
        }
        TextCommand command = byName.get(request.command());
        session.member().metrics().textRequest(command == null ? "unknown" : request.command());
        if (!request.command().equals("auth") && !request.command().equals("n")) {
            // Renewals (n) are keep-alives: not counted, as on the other front ends.
            try {
                session.member().userRates().admit(session.principal());
            } catch (LimitExceeded overQuota) {
                return CompletableFuture.failedFuture(overQuota);
            }
        }
        if (command == null) {
            throw TextRefusal.error(TextRefusal.BAD_COMMAND, "unknown command '" + request.command() + "'");
        }
        if (!KEYLESS.contains(request.command())) {
            checkKey(request.key());
        }
        return attempt(session, request, command, System.nanoTime() + SHED_RETRY_NANOS);
    }

    /**
     * Runs {@code command}, and again after the member's retry hint while the member sheds it
     * (behind on its log), for up to {@link #SHED_RETRY_NANOS}: a shed request was not proposed,
     * so running it again is safe, and a dflockd client has no status for "try later".
     */
    private CompletableFuture<String> attempt(TextSession session, TextRequest request, TextCommand command, long deadline) {
        CompletableFuture<String> answer;
        try {
            answer = command.run(session, request);
        } catch (Overloaded | io.tenure.server.PermissionDenied refused) {
            answer = CompletableFuture.failedFuture(refused);
        }
        return answer.handle((line, error) -> {
            Throwable cause = error == null ? null : io.tenure.server.Causes.unwrap(error);
            if (cause instanceof Overloaded shed && System.nanoTime() < deadline && !session.closed()) {
                long delay = Math.max(10, shed.retryAfterMillis()) + java.util.concurrent.ThreadLocalRandom.current().nextLong(10);
                CompletableFuture<String> again = new CompletableFuture<>();
                session.timer().schedule(() -> attempt(session, request, command, deadline).whenComplete((l, e) -> {
                    if (e != null) {
                        again.completeExceptionally(e);
                    } else {
                        again.complete(l);
                    }
                }), delay, TimeUnit.MILLISECONDS);
                return again;
            }
            return error == null ? CompletableFuture.completedFuture(line) : CompletableFuture.<String>failedFuture(cause);
        }).thenCompose(next -> next);
    }

    /** The answer line for a request whose command failed with {@code error}. */
    String refusal(TextSession session, TextRequest request, Throwable error) {
        if (error instanceof TextRefusal refusal) {
            if (refusal.line().equals("error")) {
                LOG.debug("event=text_request_refused connection={} command=\"{}\" reason=\"{}\"", session.id(), request.command(),
                        refusal.getMessage());
            }
            return refusal.line();
        }
        if (error instanceof io.tenure.server.PermissionDenied denied) {
            LOG.info("event=text_request_denied connection={} command=\"{}\" reason=\"{}\"", session.id(), request.command(),
                    denied.getMessage());
            return "error_permission";
        }
        if (error instanceof LimitExceeded limit) {
            return limit.limit().contains("waiters") ? "error_max_waiters" : limit.limit().contains("locks") ? "error_max_locks" : "error";
        }
        if (error instanceof RequestRejected rejected && isKindMismatch(rejected)) {
            return "error_type_mismatch";
        }
        LOG.debug("event=text_request_failed connection={} command=\"{}\" error=\"{}\"", session.id(), request.command(), error.toString());
        return "error";
    }

    /** Whether a refusal says the name is another kind's ("'a' is a lock, not a semaphore"). */
    static boolean isKindMismatch(RequestRejected rejected) {
        return rejected.code() == Result.Code.FAILED_PRECONDITION && rejected.getMessage() != null
                && rejected.getMessage().matches("(?s)'.*' is an? [a-z ]+, not an? [a-z ]+.*");
    }

    /** Whether users' authentication is on (then every connection must {@code auth} first, with a user's bearer token). */
    private boolean usersOn() {
        return gate != null && gate.enabled();
    }

    /**
     * The handshake: the shared {@code --auth-token} (the principal {@value #TEXT_TOKEN_USER}), or,
     * while users' authentication is on, a user's bearer token ({@code tenure auth token}).
     */
    private CompletableFuture<String> auth(TextSession session, TextRequest request) {
        String expected = settings.authToken();
        boolean users = usersOn();
        if (expected == null && !users) {
            throw TextRefusal.error(TextRefusal.BAD_COMMAND, "auth without --auth-token on this member, and authentication is off");
        }
        if (expected != null && MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8),
                request.arg().getBytes(StandardCharsets.UTF_8))) {
            session.authenticate(new io.tenure.server.security.Principal(TEXT_TOKEN_USER, "text-token"));
            return CompletableFuture.completedFuture("ok");
        }
        if (users) {
            try {
                io.tenure.server.security.Principal principal = gate.identify(request.arg(), null, "text", session.principal().remote());
                if (!principal.isNobody()) {
                    session.authenticate(gate.credential(principal, io.tenure.server.security.BearerTokens.hash(request.arg()), null));
                    return CompletableFuture.completedFuture("ok");
                }
            } catch (io.tenure.server.Unauthenticated e) {
                // answered below, as a wrong shared token is
            }
        }
        LOG.info("event=text_auth_failed connection={}", session.id());
        session.member().metrics().textAuthFailure();
        return closeAfter(session, "error_auth");
    }

    /** Answers {@code line} after dflockd's pause, then closes the connection. */
    private static CompletableFuture<String> closeAfter(TextSession session, String line) {
        CompletableFuture<String> answer = new CompletableFuture<>();
        session.timer().schedule(() -> answer.complete(CLOSE_AFTER + line), AUTH_FAILURE_DELAY_MS, TimeUnit.MILLISECONDS);
        return answer;
    }

    /** dflockd's key rule: not empty, no space, tab, CR or LF (the framing already removed the last two). */
    static void checkKey(String key) {
        if (key.isEmpty()) {
            throw TextRefusal.error(TextRefusal.BAD_KEY, "empty key");
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                throw TextRefusal.error(TextRefusal.BAD_KEY, "key contains whitespace");
            }
        }
    }
}

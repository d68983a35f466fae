package io.tenure.server.security;

import io.tenure.core.access.AccessTable;
import io.tenure.server.PermissionDenied;
import io.tenure.server.Unauthenticated;
import io.tenure.server.metrics.ServerMetrics;
import io.tenure.server.raft.TenureStateMachine;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;

/**
 * Who a call is: every front end (gRPC, HTTP, text) hands this member's gate the credential the
 * call showed, a bearer token or a client certificate, and gets the {@link Principal} back, or
 * {@link Unauthenticated} when authentication is on and the call showed none that is valid.
 * Checked against the users and tokens as this member last applied them, so a change (a user
 * deleted, a password changed, authentication switched on) counts here as soon as it is applied.
 */
public final class Gate {
    /** How a certificate names its user: its CN, else its first DNS or e-mail SAN. */
    private static final Pattern USER = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.@-]{0,62}");

    private final TenureStateMachine stateMachine;
    private final ServerMetrics metrics;
    private final LongSupplier wallClockMillis;
    /** Completes once this member has applied everything committed before it was called (a read barrier). */
    private final java.util.function.Supplier<java.util.concurrent.CompletableFuture<Void>> catchUp;
    private final AuditTrail trail;
    /** How long a call with a token this member does not know yet waits for it to catch up. */
    static final long CATCH_UP_MILLIS = 2_000;

    public Gate(TenureStateMachine stateMachine, ServerMetrics metrics, LongSupplier wallClockMillis,
            java.util.function.Supplier<java.util.concurrent.CompletableFuture<Void>> catchUp, AuditTrail trail) {
        this.trail = trail;
        this.stateMachine = stateMachine;
        this.metrics = metrics;
        this.wallClockMillis = wallClockMillis;
        this.catchUp = catchUp;
    }

    /** Counts a failed authentication (a wrong password, a wrong text token) by where it came from. */
    public void authFailed(String front) {
        metrics.authFailure(front);
    }

    /** Counts and records that {@code principal}'s credential stopped counting on an open stream or connection. */
    public void credentialEnded(Principal principal, String front) {
        metrics.authFailure(front);
        trail.record(principal, "authenticate", "", "", 0, 0, "unauthenticated", "the credential no longer counts (" + front + ")");
    }

    /** This member's audit trail. */
    public AuditTrail trail() {
        return trail;
    }

    /** Whether authentication is on, as last applied here. */
    public boolean enabled() {
        return stateMachine.accessEnabled();
    }

    /**
     * The principal of a call that showed {@code bearerToken} (null or empty: none) and presented
     * {@code certificate} on a TLS connection (null: none). A valid token wins over a certificate.
     * With authentication off, a call is {@link Principal#NOBODY} unless its credential is valid.
     *
     * @param front  {@code grpc}, {@code http} or {@code text}, for the failure metric
     * @param remote the address the call came from, for the principal and the audit trail
     * @throws Unauthenticated when authentication is on and neither names a user
     */
    public Principal identify(String bearerToken, X509Certificate certificate, String front, String remote) {
        Principal principal = lookUp(bearerToken, certificate);
        if (principal == null && bearerToken != null && !bearerToken.isEmpty()) {
            // A token issued a moment ago through another member may not be applied here yet: this
            // member catches up with the commit index (one round to the leader) and looks again.
            try {
                catchUp.get().get(CATCH_UP_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
                principal = lookUp(bearerToken, certificate);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                // cannot catch up now: answered as the state here says
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (principal != null) {
            return principal.from(remote);
        }
        return refuse(bearerToken, certificate, front, remote);
    }

    /** The principal as this member's applied state says, or null when authentication is on and the credential names nobody. */
    private Principal lookUp(String bearerToken, X509Certificate certificate) {
        return lookUpHash(bearerToken == null || bearerToken.isEmpty() ? null : BearerTokens.hash(bearerToken),
                certificate == null ? null : userOf(certificate));
    }

    /**
     * The credential of an open stream or text connection, for {@link Credential#stillValid} at each of its messages:
     * it reads the state again only when users, roles or tokens changed here since the last look,
     * or the token's time ran out, so a busy stream's messages take no lock.
     */
    public Credential credential(Principal principal, String tokenHash, String certified) {
        return new Credential(principal, tokenHash, certified);
    }

    /** See {@link #credential}. */
    public final class Credential {
        private final Principal principal;
        private final String tokenHash;
        private final String certified;
        private long checkedVersion = -1;
        private long validUntilMillis;

        private Credential(Principal principal, String tokenHash, String certified) {
            this.principal = principal;
            this.tokenHash = tokenHash;
            this.certified = certified;
        }

        /** Who showed it. */
        public Principal principal() {
            return principal;
        }

        /** Whether the stream's credential still names its user, as this member applied users and tokens last. */
        public synchronized boolean stillValid() {
            long now = wallClockMillis.getAsLong();
            if (checkedVersion == stateMachine.accessVersion() && now < validUntilMillis) {
                return true;
            }
            if (tokenHash == null && certified == null) {
                return !stateMachine.accessEnabled() && principal.isNobody();
            }
            record Look(long version, String user, long expires) {}
            Look look = stateMachine.read(s -> {
                AccessTable access = s.primitive(AccessTable.class);
                String user = null;
                long expires = Long.MAX_VALUE;
                if (tokenHash != null) {
                    user = access.userOfToken(tokenHash, now).orElse(null);
                    if (user != null) {
                        long at = access.user(user).map(u -> u.tokens().getOrDefault(tokenHash, 0L)).orElse(0L);
                        expires = at == 0 ? Long.MAX_VALUE : at;
                    }
                }
                if (user == null && certified != null && (access.user(certified).isPresent() || !access.enabled())) {
                    user = certified;
                }
                if (user == null && !access.enabled() && principal.isNobody()) {
                    user = "";
                }
                return new Look(stateMachine.accessVersion(), user, expires);
            });
            if (look.user() == null || !look.user().equals(principal.user())) {
                return false;
            }
            checkedVersion = look.version();
            validUntilMillis = look.expires();
            return true;
        }
    }

    private Principal lookUpHash(String tokenHash, String certified) {
        if (tokenHash == null && certified == null) {
            // No credential (every call while authentication is off): no need to read the state.
            return stateMachine.accessEnabled() ? null : Principal.NOBODY;
        }
        long now = wallClockMillis.getAsLong();
        record Found(boolean enabled, String byToken, boolean certifiedExists) {}
        Found found = stateMachine.read(s -> {
            AccessTable access = s.primitive(AccessTable.class);
            String byToken = tokenHash == null ? null : access.userOfToken(tokenHash, now).orElse(null);
            return new Found(access.enabled(), byToken, certified != null && access.user(certified).isPresent());
        });
        if (found.byToken() != null) {
            return new Principal(found.byToken(), "token");
        }
        if (certified != null && (found.certifiedExists() || !found.enabled())) {
            return new Principal(certified, "certificate");
        }
        if (!found.enabled()) {
            return Principal.NOBODY;
        }
        return null;
    }

    private Principal refuse(String bearerToken, X509Certificate certificate, String front, String remote) {
        String certified = certificate == null ? null : userOf(certificate);
        metrics.authFailure(front);
        trail.record(Principal.NOBODY.from(remote), "authenticate", "", "", 0, 0, "unauthenticated",
                bearerToken != null && !bearerToken.isEmpty() ? "a bearer token that is not valid (" + front + ")"
                        : certified != null ? "a certificate naming unknown user '" + certified + "' (" + front + ")"
                        : "no credential (" + front + ")");
        if (bearerToken != null && !bearerToken.isEmpty()) {
            throw new Unauthenticated("the bearer token is not valid: it was never issued, has expired, or its user changed "
                    + "password or was deleted; get another with `tenure auth token` (AuthService.Authenticate)");
        }
        if (certified != null) {
            throw new Unauthenticated("authentication is on, and the client certificate names user '" + certified
                    + "', who does not exist; add the user, or show a bearer token");
        }
        throw new Unauthenticated("authentication is on: show a bearer token (gRPC metadata `authorization: Bearer <token>`, "
                + "HTTP `Authorization: Bearer <token>`, the text protocol's `auth`) or a client certificate");
    }

    /**
     * Checks a management call (users, roles, switching authentication): while authentication is
     * on, only a user with the role {@code root} may make it.
     *
     * @throws PermissionDenied naming the user and the role it needs
     */
    public void requireRoot(Principal principal, String what) {
        boolean allowed = stateMachine.read(s -> {
            AccessTable access = s.primitive(AccessTable.class);
            return !access.enabled() || (!principal.isNobody() && access.isRoot(principal.user()));
        });
        if (!allowed) {
            PermissionDenied denied = new PermissionDenied((principal.isNobody() ? "nobody" : "user '" + principal.user() + "'")
                    + " may not " + what + ": it needs the role root");
            trail.record(principal, "manage", "access", "", 0, 0, "permission_denied", denied.getMessage());
            throw denied;
        }
    }

    /** The user a certificate names: its CN when that is a valid user name, else its first DNS or e-mail SAN that is; null when none. */
    public static String userOf(X509Certificate certificate) {
        try {
            for (Rdn rdn : new LdapName(certificate.getSubjectX500Principal().getName()).getRdns()) {
                if (rdn.getType().equalsIgnoreCase("CN") && USER.matcher(String.valueOf(rdn.getValue())).matches()) {
                    return String.valueOf(rdn.getValue());
                }
            }
        } catch (InvalidNameException e) {
            // no usable subject: try the SANs
        }
        try {
            Collection<List<?>> names = certificate.getSubjectAlternativeNames();
            if (names != null) {
                for (List<?> name : names) {
                    int type = (Integer) name.get(0);
                    String value = String.valueOf(name.get(1));
                    if ((type == 1 || type == 2) && USER.matcher(value).matches()) {
                        return value;
                    }
                }
            }
        } catch (CertificateParsingException e) {
            return null;
        }
        return null;
    }

    /** The bearer token of an {@code Authorization} header or metadata value ({@code Bearer <token>}); empty when it is not one. */
    public static Optional<String> bearer(String authorization) {
        if (authorization == null) {
            return Optional.empty();
        }
        Matcher m = BEARER.matcher(authorization);
        return m.matches() ? Optional.of(m.group(1)) : Optional.empty();
    }

    private static final Pattern BEARER = Pattern.compile("(?i)bearer\\s+(\\S+)\\s*");
}

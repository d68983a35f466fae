package io.tenure.server.security;

import java.util.Objects;

/**
 * Who a call is made as: the user a bearer token was issued to, or the one a client certificate
 * names (its CN), or nobody while authentication is off and no credential was shown. The
 * member that receives a call works it out once ({@link Gate}) and hands it to the service layer.
 *
 * @param user       the user's name; empty for {@link #NOBODY}
 * @param credential how the call showed it: {@code token}, {@code certificate}, {@code text-token}
 *                   (the text protocol's shared {@code --auth-token}), or empty
 * @param remote     the address the call came from ({@code host:port}), for the audit trail; empty when unknown
 */
public record Principal(String user, String credential, String remote) {
    /** A call without a credential while authentication is off. */
    public static final Principal NOBODY = new Principal("", "");
    /** The member itself (its own sweeps, a connection's clean-up on close): never refused. No credential names it. */
    public static final Principal MEMBER = new Principal("", "member");

    public Principal {
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(credential, "credential");
        remote = remote == null ? "" : remote;
    }

    public Principal(String user, String credential) {
        this(user, credential, "");
    }

    /** The same principal, calling from {@code address}. */
    public Principal from(String address) {
        return new Principal(user, credential, address);
    }

    /** No user: {@link #NOBODY}, or {@link #MEMBER}. */
    public boolean isNobody() {
        return user.isEmpty();
    }

    public boolean isMember() {
        return user.isEmpty() && credential.equals("member");
    }
}

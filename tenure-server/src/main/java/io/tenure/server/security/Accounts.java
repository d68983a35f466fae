package io.tenure.server.security;

import io.tenure.core.access.AccessTable;
import io.tenure.core.access.AuthDisable;
import io.tenure.core.access.AuthEnable;
import io.tenure.core.access.Level;
import io.tenure.core.access.Permission;
import io.tenure.core.access.Role;
import io.tenure.core.access.RoleAdd;
import io.tenure.core.access.RoleDelete;
import io.tenure.core.access.RoleGrant;
import io.tenure.core.access.RoleRevoke;
import io.tenure.core.access.TokenIssue;
import io.tenure.core.access.User;
import io.tenure.core.access.UserAdd;
import io.tenure.core.access.UserDelete;
import io.tenure.core.access.UserGrantRole;
import io.tenure.core.access.UserPassword;
import io.tenure.core.access.UserRevokeRole;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Result;
import io.tenure.server.RequestRejected;
import io.tenure.server.Unauthenticated;
import io.tenure.server.raft.Proposer;
import io.tenure.server.raft.TenureStateMachine;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.LongSupplier;

/**
 * Users, roles and the authentication switch, for every front end: each change is checked here
 * (the caller must be root while authentication is on; input as the core refuses it, but before
 * anything is proposed), hashed here (a password never reaches the log), proposed through the log,
 * and answered with the state as applied. Password hashing runs on {@code hashing}, never on a
 * transport thread.
 */
public final class Accounts {
    /** A token's lifetime when the caller names none. */
    public static final Duration DEFAULT_TOKEN_TTL = Duration.ofHours(24);
    /** The longest a token lives. */
    public static final Duration MAX_TOKEN_TTL = Duration.ofDays(30);

    /** What authenticating gave: the token (shown once) and when it stops working. */
    public record Issued(String token, long expiresAtMillis) {}

    private final Proposer proposer;
    private final TenureStateMachine stateMachine;
    private final Gate gate;
    private final Executor hashing;
    private final LongSupplier wallClockMillis;

    public Accounts(Proposer proposer, TenureStateMachine stateMachine, Gate gate, Executor hashing, LongSupplier wallClockMillis) {
        this.proposer = proposer;
        this.stateMachine = stateMachine;
        this.gate = gate;
        this.hashing = hashing;
        this.wallClockMillis = wallClockMillis;
    }

    public Gate gate() {
        return gate;
    }

    /**
     * A bearer token for user {@code name} if {@code password} is theirs, valid {@code ttl}
     * (zero: {@link #DEFAULT_TOKEN_TTL}). One message for an unknown user and a wrong password.
     */
    public CompletableFuture<Issued> authenticate(Principal caller, String name, String password, Duration ttl) {
        if (ttl.isNegative() || ttl.compareTo(MAX_TOKEN_TTL) > 0) {
            return CompletableFuture.failedFuture(RequestRejected.invalid("ttl_seconds",
                    "ttl_seconds must be between 0 (24 hours) and " + MAX_TOKEN_TTL.toSeconds() + " (30 days), got " + ttl.toSeconds()));
        }
        Duration lifetime = ttl.isZero() ? DEFAULT_TOKEN_TTL : ttl;
        Optional<User> user = name == null ? Optional.empty() : stateMachine.read(s -> s.primitive(AccessTable.class).user(name));
        return CompletableFuture.supplyAsync(() -> {
            // A user that does not exist costs the same hash, so the answer's time does not tell.
            boolean matches = Passwords.matches(password == null ? "" : password,
                    user.map(User::passwordHash).orElseGet(NoUser::hash));
            if (user.isEmpty() || !matches) {
                gate.authFailed("authenticate");
                trail().record(caller, "authenticate", "access", name == null ? "" : name, 0, 0, "unauthenticated",
                        "no such user, or a wrong password");
                throw new Unauthenticated("authentication failed: no such user, or a wrong password");
            }
            return BearerTokens.create();
        }, hashing).thenCompose(token -> {
            long expires = wallClockMillis.getAsLong() + lifetime.toMillis();
            return change(caller, new TokenIssue(name, BearerTokens.hash(token), expires)).thenApply(ok -> {
                trail().record(caller, "authenticate", "access", name, 0, 0, "token_issued", "");
                return new Issued(token, expires);
            });
        });
    }

    public CompletableFuture<User> addUser(Principal caller, String name, String password) {
        return asRoot(caller, "add users").thenCompose(ok -> hashed(password))
                .thenCompose(hash -> change(caller, new UserAdd(name, hash))).thenApply(ok -> user(name));
    }

    public CompletableFuture<User> deleteUser(Principal caller, String name) {
        User before = userOrNull(name);
        // The core refuses to delete a user that does not exist, so before is there when this answers.
        return asRoot(caller, "delete users").thenCompose(ok -> change(caller, new UserDelete(name))).thenApply(ok -> before);
    }

    /** A user may change their own password; anyone else's needs root. */
    public CompletableFuture<User> changePassword(Principal caller, String name, String password) {
        CompletableFuture<Void> allowed = !caller.isNobody() && caller.user().equals(name)
                ? CompletableFuture.completedFuture(null) : asRoot(caller, "change another user's password");
        return allowed.thenCompose(ok -> hashed(password)).thenCompose(hash -> change(caller, new UserPassword(name, hash)))
                .thenApply(ok -> user(name));
    }

    public CompletableFuture<User> grantRole(Principal caller, String user, String role) {
        return asRoot(caller, "grant roles").thenCompose(ok -> change(caller, new UserGrantRole(user, role))).thenApply(ok -> user(user));
    }

    public CompletableFuture<User> revokeRole(Principal caller, String user, String role) {
        return asRoot(caller, "revoke roles").thenCompose(ok -> change(caller, new UserRevokeRole(user, role))).thenApply(ok -> user(user));
    }

    public CompletableFuture<List<User>> users(Principal caller) {
        return asRoot(caller, "list users").thenCompose(ok -> proposer.readBarrier())
                .thenApply(ok -> stateMachine.read(s -> List.copyOf(s.primitive(AccessTable.class).users().values())));
    }

    public CompletableFuture<Role> addRole(Principal caller, String name) {
        return asRoot(caller, "add roles").thenCompose(ok -> change(caller, new RoleAdd(name))).thenApply(ok -> role(name));
    }

    public CompletableFuture<Role> deleteRole(Principal caller, String name) {
        Role before = stateMachine.read(s -> s.primitive(AccessTable.class).roles().get(name));
        return asRoot(caller, "delete roles").thenCompose(ok -> change(caller, new RoleDelete(name))).thenApply(ok -> before);
    }

    public CompletableFuture<Role> grantPermission(Principal caller, String role, String kind, String prefix, Level level) {
        if (level == null) {
            return CompletableFuture.failedFuture(RequestRejected.invalid("permission.level",
                    "permission.level must be READ, WRITE or ADMIN"));
        }
        if (kind != null && !kind.isEmpty() && !Permissions.KINDS.contains(kind)) {
            return CompletableFuture.failedFuture(RequestRejected.invalid("permission.kind", "permission.kind must be one of "
                    + String.join(", ", Permissions.KINDS) + ", got '" + kind + "'"));
        }
        return asRoot(caller, "grant permissions").thenCompose(ok -> change(caller, new RoleGrant(role, kind, prefix, level)))
                .thenApply(ok -> role(role));
    }

    public CompletableFuture<Role> revokePermission(Principal caller, String role, String kind, String prefix) {
        return asRoot(caller, "revoke permissions").thenCompose(ok -> change(caller, new RoleRevoke(role, kind, prefix)))
                .thenApply(ok -> role(role));
    }

    public CompletableFuture<List<Role>> roles(Principal caller) {
        return asRoot(caller, "list roles").thenCompose(ok -> proposer.readBarrier())
                .thenApply(ok -> stateMachine.read(s -> List.copyOf(s.primitive(AccessTable.class).roles().values())));
    }

    public CompletableFuture<Boolean> enable(Principal caller) {
        return asRoot(caller, "switch authentication on").thenCompose(ok -> change(caller, AuthEnable.INSTANCE)).thenApply(ok -> true);
    }

    public CompletableFuture<Boolean> disable(Principal caller) {
        return asRoot(caller, "switch authentication off").thenCompose(ok -> change(caller, AuthDisable.INSTANCE)).thenApply(ok -> false);
    }

    /** Whether authentication is on, read linearizably. */
    public CompletableFuture<Boolean> enabled() {
        return proposer.readBarrier().thenApply(ok -> gate.enabled());
    }

    /** A stored password no one has, made once: checking against it costs what checking a real one does. */
    private static final class NoUser {
        private static final String HASH = Passwords.hash("no user has this password " + System.nanoTime());

        static String hash() {
            return HASH;
        }
    }

    private CompletableFuture<Void> asRoot(Principal caller, String what) {
        try {
            gate.requireRoot(caller, what);
            return CompletableFuture.completedFuture(null);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private CompletableFuture<String> hashed(String password) {
        try {
            Passwords.check(password);
        } catch (RequestRejected e) {
            return CompletableFuture.failedFuture(e);
        }
        return CompletableFuture.supplyAsync(() -> Passwords.hash(password), hashing);
    }

    /** Proposes a change of users, roles or the switch made by {@code caller}, and records it in the audit trail. */
    private CompletableFuture<Void> change(Principal caller, Command command) {
        CompletableFuture<Void> done = proposer.propose(command).thenApply(applied -> {
            if (applied.result() instanceof Result.Rejected r) {
                throw RequestRejected.of(r);
            }
            return null;
        });
        if (!(command instanceof TokenIssue)) {
            done.whenComplete((ok, error) -> trail().record(caller, action(command), "access", subject(command), 0, 0,
                    error == null ? "done" : "refused", error == null ? detail(command) : io.tenure.server.Causes.unwrap(error).getMessage()));
        }
        return done;
    }

    private AuditTrail trail() {
        return gate.trail();
    }

    /** {@code UserGrantRole} → {@code user_grant_role}. */
    private static String action(Command command) {
        return command.getClass().getSimpleName().replaceAll("([a-z])([A-Z])", "$1_$2").toLowerCase(java.util.Locale.ROOT);
    }

    /** The user or role a change is about (never a password or a token's hash). */
    private static String subject(Command command) {
        if (command instanceof UserAdd c) {
            return c.name();
        } else if (command instanceof UserDelete c) {
            return c.name();
        } else if (command instanceof UserPassword c) {
            return c.name();
        } else if (command instanceof UserGrantRole c) {
            return c.user();
        } else if (command instanceof UserRevokeRole c) {
            return c.user();
        } else if (command instanceof RoleAdd c) {
            return c.name();
        } else if (command instanceof RoleDelete c) {
            return c.name();
        } else if (command instanceof RoleGrant c) {
            return c.role();
        } else if (command instanceof RoleRevoke c) {
            return c.role();
        }
        return "";
    }

    private static String detail(Command command) {
        if (command instanceof UserGrantRole c) {
            return "role " + c.role();
        } else if (command instanceof UserRevokeRole c) {
            return "role " + c.role();
        } else if (command instanceof RoleGrant c) {
            return c.level().name().toLowerCase(java.util.Locale.ROOT) + " on " + c.kind() + " '" + c.prefix() + "'";
        } else if (command instanceof RoleRevoke c) {
            return "on " + c.kind() + " '" + c.prefix() + "'";
        }
        return "";
    }

    private User userOrNull(String name) {
        return name == null ? null : stateMachine.read(s -> s.primitive(AccessTable.class).user(name).orElse(null));
    }

    private User user(String name) {
        User user = userOrNull(name);
        if (user == null) {
            throw new RequestRejected(Result.Code.NOT_FOUND, "name", "user '" + name + "' does not exist");
        }
        return user;
    }

    private Role role(String name) {
        Role role = stateMachine.read(s -> s.primitive(AccessTable.class).roles().get(name));
        if (role == null) {
            throw new RequestRejected(Result.Code.NOT_FOUND, "name", "role '" + name + "' does not exist");
        }
        return role;
    }
}

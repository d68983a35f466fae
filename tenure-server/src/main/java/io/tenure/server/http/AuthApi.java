package io.tenure.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.access.Level;
import io.tenure.core.access.Permission;
import io.tenure.core.access.Role;
import io.tenure.core.access.User;
import io.tenure.server.security.Accounts;
import io.tenure.server.security.Principal;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;

/**
 * The {@code /v1/auth} endpoints, the HTTP twin of gRPC's {@code AuthService}: authenticate for a
 * bearer token, users, roles and their permissions, and the authentication switch, on the
 * member's {@link Accounts}. While authentication is on, all but {@code authenticate} and
 * {@code status} need a user with the role root (a user may change their own password).
 */
final class AuthApi {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final Accounts accounts;

    AuthApi(Accounts accounts) {
        this.accounts = accounts;
    }

    CompletableFuture<Answer> authenticate(Principal caller, JsonBody body) {
        String name = body.requiredString("name");
        String password = body.requiredString("password");
        long ttl = body.optionalLong("ttl_seconds", 0);
        return accounts.authenticate(caller, name, password, Duration.ofSeconds(ttl)).thenApply(issued -> {
            ObjectNode answer = NODES.objectNode();
            answer.put("token", issued.token());
            answer.put("expires_at_millis", issued.expiresAtMillis());
            return Answer.ok(answer);
        });
    }

    CompletableFuture<Answer> status(Principal caller) {
        return accounts.enabled().thenApply(enabled -> status(enabled, caller));
    }

    CompletableFuture<Answer> enable(Principal caller) {
        return accounts.enable(caller).thenApply(enabled -> status(enabled, caller));
    }

    CompletableFuture<Answer> disable(Principal caller) {
        return accounts.disable(caller).thenApply(enabled -> status(enabled, caller));
    }

    CompletableFuture<Answer> addUser(Principal caller, JsonBody body) {
        return accounts.addUser(caller, body.requiredString("name"), body.requiredString("password")).thenApply(AuthApi::user);
    }

    CompletableFuture<Answer> deleteUser(Principal caller, String name) {
        return accounts.deleteUser(caller, name).thenApply(AuthApi::user);
    }

    CompletableFuture<Answer> changePassword(Principal caller, String name, JsonBody body) {
        return accounts.changePassword(caller, name, body.requiredString("password")).thenApply(AuthApi::user);
    }

    CompletableFuture<Answer> grantRole(Principal caller, String name, JsonBody body) {
        return accounts.grantRole(caller, name, body.requiredString("role")).thenApply(AuthApi::user);
    }

    CompletableFuture<Answer> revokeRole(Principal caller, String name, String role) {
        return accounts.revokeRole(caller, name, role).thenApply(AuthApi::user);
    }

    CompletableFuture<Answer> users(Principal caller) {
        return accounts.users(caller).thenApply(users -> {
            ObjectNode answer = NODES.objectNode();
            ArrayNode list = answer.putArray("users");
            users.forEach(u -> list.add(userJson(u)));
            return Answer.ok(answer);
        });
    }

    CompletableFuture<Answer> addRole(Principal caller, JsonBody body) {
        return accounts.addRole(caller, body.requiredString("name")).thenApply(AuthApi::role);
    }

    CompletableFuture<Answer> deleteRole(Principal caller, String name) {
        return accounts.deleteRole(caller, name).thenApply(AuthApi::role);
    }

    CompletableFuture<Answer> grantPermission(Principal caller, String role, JsonBody body) {
        String kind = body.requiredString("kind");
        String prefix = body.optionalString("prefix");
        String level = body.optionalChoice("level", null, "read", "write", "admin");
        if (level == null) {
            throw new Failure(ErrorCode.INVALID_ARGUMENT, "level", "level is required: read, write or admin");
        }
        return accounts.grantPermission(caller, role, kind, prefix == null ? "" : prefix,
                Level.valueOf(level.toUpperCase(Locale.ROOT))).thenApply(AuthApi::role);
    }

    CompletableFuture<Answer> revokePermission(Principal caller, String role, String kind, String prefix) {
        if (kind == null) {
            throw new Failure(ErrorCode.INVALID_ARGUMENT, "kind", "kind is required (a query parameter): a primitive kind, or *");
        }
        return accounts.revokePermission(caller, role, kind, prefix == null ? "" : prefix).thenApply(AuthApi::role);
    }

    CompletableFuture<Answer> roles(Principal caller) {
        return accounts.roles(caller).thenApply(roles -> {
            ObjectNode answer = NODES.objectNode();
            ArrayNode list = answer.putArray("roles");
            roles.forEach(r -> list.add(roleJson(r)));
            return Answer.ok(answer);
        });
    }

    private static Answer status(boolean enabled, Principal caller) {
        ObjectNode answer = NODES.objectNode();
        answer.put("enabled", enabled);
        answer.put("user", caller.user());
        answer.put("credential", caller.credential());
        return Answer.ok(answer);
    }

    private static Answer user(User user) {
        return Answer.ok(userJson(user));
    }

    private static ObjectNode userJson(User user) {
        ObjectNode json = NODES.objectNode();
        json.put("name", user.name());
        ArrayNode roles = json.putArray("roles");
        user.roles().forEach(roles::add);
        json.put("tokens", user.tokens().size());
        return json;
    }

    private static Answer role(Role role) {
        return Answer.ok(roleJson(role));
    }

    private static ObjectNode roleJson(Role role) {
        ObjectNode json = NODES.objectNode();
        json.put("name", role.name());
        ArrayNode permissions = json.putArray("permissions");
        for (Permission p : role.permissions()) {
            permissions.addObject().put("kind", p.kind()).put("prefix", p.prefix()).put("level", p.level().name().toLowerCase(Locale.ROOT));
        }
        return json;
    }
}

package io.tenure.client;

import io.tenure.proto.v1.AuthDisableRequest;
import io.tenure.proto.v1.AuthEnableRequest;
import io.tenure.proto.v1.AuthServiceGrpc;
import io.tenure.proto.v1.AuthStatusRequest;
import io.tenure.proto.v1.AuthStatusResponse;
import io.tenure.proto.v1.AuthenticateRequest;
import io.tenure.proto.v1.AuthenticateResponse;
import io.tenure.proto.v1.Permission;
import io.tenure.proto.v1.PermissionLevel;
import io.tenure.proto.v1.Role;
import io.tenure.proto.v1.RoleAddRequest;
import io.tenure.proto.v1.RoleDeleteRequest;
import io.tenure.proto.v1.RoleGrantPermissionRequest;
import io.tenure.proto.v1.RoleListRequest;
import io.tenure.proto.v1.RoleRevokePermissionRequest;
import io.tenure.proto.v1.User;
import io.tenure.proto.v1.UserAddRequest;
import io.tenure.proto.v1.UserChangePasswordRequest;
import io.tenure.proto.v1.UserDeleteRequest;
import io.tenure.proto.v1.UserListRequest;
import io.tenure.proto.v1.UserRoleRequest;
import java.time.Duration;
import java.util.List;

/**
 * Users, roles, bearer tokens and the authentication switch ({@code tenure.v1.AuthService}), as
 * etcd's auth API: add a user with the role {@code root}, {@link #enable()} authentication, and
 * from then on every call shows a token ({@link TenureClient.Builder#token}) or a client
 * certificate. While it is on, all but {@link #authenticate} and {@link #status()} need a user
 * with the role root (a user may change their own password).
 *
 * <pre>{@code
 * TenureAuth auth = admin.auth();
 * auth.addUser("root", rootPassword);
 * auth.grantRole("root", "root");
 * auth.enable();
 * String token = auth.authenticate("root", rootPassword, Duration.ofHours(8));
 * }</pre>
 */
public final class TenureAuth {
    /** What a call is made as: whether authentication is on, the user and how it showed it ({@code token}, {@code certificate}). */
    public record Status(boolean enabled, String user, String credential) {}

    private final TenureClient client;

    TenureAuth(TenureClient client) {
        this.client = client;
    }

    /**
     * A bearer token for user {@code name}, valid for {@code ttl} (zero: 24 hours; at most 30 days).
     *
     * @throws UnauthenticatedException when the user does not exist or the password is wrong (one message for both)
     */
    public String authenticate(String name, String password, Duration ttl) {
        AuthenticateResponse response = Futures.await(client.call(AuthServiceGrpc.getAuthenticateMethod(),
                AuthenticateRequest.newBuilder().setName(name).setPassword(password).setTtlSeconds(ttl.toSeconds()).build(), null),
                "authenticate");
        return response.getToken();
    }

    public User addUser(String name, String password) {
        return Futures.await(client.call(AuthServiceGrpc.getUserAddMethod(),
                UserAddRequest.newBuilder().setName(name).setPassword(password).build(), null), "user add").getUser();
    }

    public User deleteUser(String name) {
        return Futures.await(client.call(AuthServiceGrpc.getUserDeleteMethod(),
                UserDeleteRequest.newBuilder().setName(name).build(), null), "user delete").getUser();
    }

    /** Replaces the password; the user's tokens stop working. */
    public User changePassword(String name, String password) {
        return Futures.await(client.call(AuthServiceGrpc.getUserChangePasswordMethod(),
                UserChangePasswordRequest.newBuilder().setName(name).setPassword(password).build(), null), "user passwd").getUser();
    }

    public User grantRole(String user, String role) {
        return Futures.await(client.call(AuthServiceGrpc.getUserGrantRoleMethod(),
                UserRoleRequest.newBuilder().setUser(user).setRole(role).build(), null), "user grant-role").getUser();
    }

    public User revokeRole(String user, String role) {
        return Futures.await(client.call(AuthServiceGrpc.getUserRevokeRoleMethod(),
                UserRoleRequest.newBuilder().setUser(user).setRole(role).build(), null), "user revoke-role").getUser();
    }

    public List<User> users() {
        return Futures.await(client.call(AuthServiceGrpc.getUserListMethod(), UserListRequest.getDefaultInstance(), null),
                "user list").getUsersList();
    }

    public Role addRole(String name) {
        return Futures.await(client.call(AuthServiceGrpc.getRoleAddMethod(), RoleAddRequest.newBuilder().setName(name).build(), null),
                "role add").getRole();
    }

    public Role deleteRole(String name) {
        return Futures.await(client.call(AuthServiceGrpc.getRoleDeleteMethod(), RoleDeleteRequest.newBuilder().setName(name).build(),
                null), "role delete").getRole();
    }

    /** Grants {@code level} on names starting with {@code prefix} of {@code kind} ("*": every kind). */
    public Role grantPermission(String role, String kind, String prefix, PermissionLevel level) {
        return Futures.await(client.call(AuthServiceGrpc.getRoleGrantPermissionMethod(), RoleGrantPermissionRequest.newBuilder()
                .setRole(role).setPermission(Permission.newBuilder().setKind(kind).setPrefix(prefix).setLevel(level)).build(), null),
                "role grant").getRole();
    }

    public Role revokePermission(String role, String kind, String prefix) {
        return Futures.await(client.call(AuthServiceGrpc.getRoleRevokePermissionMethod(), RoleRevokePermissionRequest.newBuilder()
                .setRole(role).setKind(kind).setPrefix(prefix).build(), null), "role revoke").getRole();
    }

    public List<Role> roles() {
        return Futures.await(client.call(AuthServiceGrpc.getRoleListMethod(), RoleListRequest.getDefaultInstance(), null),
                "role list").getRolesList();
    }

    /** Switches authentication on. {@link FailedPreconditionException} until a user with the role root exists. */
    public Status enable() {
        return status(Futures.await(client.call(AuthServiceGrpc.getAuthEnableMethod(), AuthEnableRequest.getDefaultInstance(), null),
                "auth enable"));
    }

    public Status disable() {
        return status(Futures.await(client.call(AuthServiceGrpc.getAuthDisableMethod(), AuthDisableRequest.getDefaultInstance(), null),
                "auth disable"));
    }

    /** Whether authentication is on, and who this client's calls are made as. */
    public Status status() {
        return status(Futures.await(client.call(AuthServiceGrpc.getAuthStatusMethod(), AuthStatusRequest.getDefaultInstance(), null),
                "auth status"));
    }

    private static Status status(AuthStatusResponse response) {
        return new Status(response.getEnabled(), response.getUser(), response.getCredential());
    }
}

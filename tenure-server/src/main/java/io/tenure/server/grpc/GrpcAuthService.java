package io.tenure.server.grpc;

import io.grpc.stub.StreamObserver;
import io.tenure.core.access.Level;
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
import io.tenure.proto.v1.RoleListResponse;
import io.tenure.proto.v1.RoleResponse;
import io.tenure.proto.v1.RoleRevokePermissionRequest;
import io.tenure.proto.v1.User;
import io.tenure.proto.v1.UserAddRequest;
import io.tenure.proto.v1.UserChangePasswordRequest;
import io.tenure.proto.v1.UserDeleteRequest;
import io.tenure.proto.v1.UserListRequest;
import io.tenure.proto.v1.UserListResponse;
import io.tenure.proto.v1.UserResponse;
import io.tenure.proto.v1.UserRoleRequest;
import io.tenure.server.Member;
import io.tenure.server.security.Accounts;
import io.tenure.server.security.Principal;
import java.time.Duration;

/** The gRPC front end of {@link Accounts}: users, roles, tokens and the authentication switch. */
public final class GrpcAuthService extends AuthServiceGrpc.AuthServiceImplBase {
    private final Member member;
    private final Accounts accounts;

    public GrpcAuthService(Member member, Accounts accounts) {
        this.member = member;
        this.accounts = accounts;
    }

    @Override
    public void authenticate(AuthenticateRequest request, StreamObserver<AuthenticateResponse> observer) {
        GrpcLockService.answer(accounts.authenticate(GrpcAuthentication.principal(), request.getName(), request.getPassword(),
                Duration.ofSeconds(request.getTtlSeconds())), observer, issued -> AuthenticateResponse.newBuilder()
                .setHeader(member.header()).setToken(issued.token()).setExpiresAtMillis(issued.expiresAtMillis()).build());
    }

    @Override
    public void userAdd(UserAddRequest request, StreamObserver<UserResponse> observer) {
        GrpcLockService.answer(accounts.addUser(caller(), request.getName(), request.getPassword()), observer, this::userResponse);
    }

    @Override
    public void userDelete(UserDeleteRequest request, StreamObserver<UserResponse> observer) {
        GrpcLockService.answer(accounts.deleteUser(caller(), request.getName()), observer, this::userResponse);
    }

    @Override
    public void userChangePassword(UserChangePasswordRequest request, StreamObserver<UserResponse> observer) {
        GrpcLockService.answer(accounts.changePassword(caller(), request.getName(), request.getPassword()), observer,
                this::userResponse);
    }

    @Override
    public void userGrantRole(UserRoleRequest request, StreamObserver<UserResponse> observer) {
        GrpcLockService.answer(accounts.grantRole(caller(), request.getUser(), request.getRole()), observer, this::userResponse);
    }

    @Override
    public void userRevokeRole(UserRoleRequest request, StreamObserver<UserResponse> observer) {
        GrpcLockService.answer(accounts.revokeRole(caller(), request.getUser(), request.getRole()), observer, this::userResponse);
    }

    @Override
    public void userList(UserListRequest request, StreamObserver<UserListResponse> observer) {
        GrpcLockService.answer(accounts.users(caller()), observer, users -> {
            UserListResponse.Builder response = UserListResponse.newBuilder().setHeader(member.header());
            users.forEach(u -> response.addUsers(user(u)));
            return response.build();
        });
    }

    @Override
    public void roleAdd(RoleAddRequest request, StreamObserver<RoleResponse> observer) {
        GrpcLockService.answer(accounts.addRole(caller(), request.getName()), observer, this::roleResponse);
    }

    @Override
    public void roleDelete(RoleDeleteRequest request, StreamObserver<RoleResponse> observer) {
        GrpcLockService.answer(accounts.deleteRole(caller(), request.getName()), observer, this::roleResponse);
    }

    @Override
    public void roleGrantPermission(RoleGrantPermissionRequest request, StreamObserver<RoleResponse> observer) {
        if (!request.hasPermission()) {
            observer.onError(Statuses.invalid("permission is required: a kind (\"*\" for every kind), a prefix and a level"));
            return;
        }
        Permission p = request.getPermission();
        GrpcLockService.answer(accounts.grantPermission(caller(), request.getRole(), p.getKind(), p.getPrefix(), level(p.getLevel())),
                observer, this::roleResponse);
    }

    @Override
    public void roleRevokePermission(RoleRevokePermissionRequest request, StreamObserver<RoleResponse> observer) {
        GrpcLockService.answer(accounts.revokePermission(caller(), request.getRole(), request.getKind(), request.getPrefix()),
                observer, this::roleResponse);
    }

    @Override
    public void roleList(RoleListRequest request, StreamObserver<RoleListResponse> observer) {
        GrpcLockService.answer(accounts.roles(caller()), observer, roles -> {
            RoleListResponse.Builder response = RoleListResponse.newBuilder().setHeader(member.header());
            roles.forEach(r -> response.addRoles(role(r)));
            return response.build();
        });
    }

    @Override
    public void authEnable(AuthEnableRequest request, StreamObserver<AuthStatusResponse> observer) {
        Principal caller = caller();
        GrpcLockService.answer(accounts.enable(caller), observer, enabled -> statusResponse(enabled, caller));
    }

    @Override
    public void authDisable(AuthDisableRequest request, StreamObserver<AuthStatusResponse> observer) {
        Principal caller = caller();
        GrpcLockService.answer(accounts.disable(caller), observer, enabled -> statusResponse(enabled, caller));
    }

    @Override
    public void authStatus(AuthStatusRequest request, StreamObserver<AuthStatusResponse> observer) {
        // The call's principal is read here, on the call's thread: the answer may complete on another.
        Principal caller = caller();
        GrpcLockService.answer(accounts.enabled(), observer, enabled -> statusResponse(enabled, caller));
    }

    private static Principal caller() {
        return GrpcAuthentication.principal();
    }

    private AuthStatusResponse statusResponse(boolean enabled, Principal caller) {
        return AuthStatusResponse.newBuilder().setHeader(member.header()).setEnabled(enabled).setUser(caller.user())
                .setCredential(caller.credential()).build();
    }

    private UserResponse userResponse(io.tenure.core.access.User user) {
        return UserResponse.newBuilder().setHeader(member.header()).setUser(user(user)).build();
    }

    private RoleResponse roleResponse(io.tenure.core.access.Role role) {
        return RoleResponse.newBuilder().setHeader(member.header()).setRole(role(role)).build();
    }

    static User user(io.tenure.core.access.User user) {
        return User.newBuilder().setName(user.name()).addAllRoles(user.roles()).setTokens(user.tokens().size()).build();
    }

    static Role role(io.tenure.core.access.Role role) {
        Role.Builder out = Role.newBuilder().setName(role.name());
        for (io.tenure.core.access.Permission p : role.permissions()) {
            out.addPermissions(Permission.newBuilder().setKind(p.kind()).setPrefix(p.prefix()).setLevel(switch (p.level()) {
                case READ -> PermissionLevel.READ;
                case WRITE -> PermissionLevel.WRITE;
                case ADMIN -> PermissionLevel.ADMIN;
            }));
        }
        return out.build();
    }

    private static Level level(PermissionLevel level) {
        return switch (level) {
            case READ -> Level.READ;
            case WRITE -> Level.WRITE;
            case ADMIN -> Level.ADMIN;
            default -> null;
        };
    }
}

package io.tenure.core.access;

import io.tenure.core.kernel.ApplyContext;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.CommandType;
import io.tenure.core.kernel.Leases;
import io.tenure.core.kernel.Primitive;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Wire;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Users, roles, bearer tokens and the authentication switch, replicated: every member checks a
 * call against them as it last applied them, so a change counts on each member as it applies it.
 *
 * <p>The core keeps what the server computed: a password's stored form (a salted slow hash) and
 * a token's SHA-256, never a password or a token; a token's expiry is the issuing member's wall
 * clock, carried in the command, and is compared with the checking member's clock by the server
 * ({@link #userOfToken}), not here. The role {@code root} always exists and allows everything;
 * authentication cannot be switched on without a user that has it, nor that last user lose it
 * (or be deleted) while it is on, so the cluster can always be managed.
 */
public final class AccessTable implements Primitive {
    public static final String NAME = "access";
    /** The role that allows everything, present in every state. */
    public static final String ROOT = "root";
    /** A user keeps at most this many tokens; a new one pushes out the one that expires first. */
    public static final int MAX_TOKENS_PER_USER = 64;
    static final Pattern USER_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.@-]{0,62}");
    static final Pattern ROLE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.@-]{0,62}");
    static final Pattern KIND = Pattern.compile("\\*|[a-z][a-z_]{0,31}");
    static final Pattern TOKEN_HASH = Pattern.compile("[0-9a-f]{16,128}");
    static final int MAX_HASH_CHARS = 512;
    static final int MAX_PREFIX_CHARS = 1024;
    private static final int MAX_FIELD_BYTES = 4096;

    public static final Kind KIND_OF = new Kind(NAME, List.of(
            new CommandType<>(90, UserAdd.class, (c, out) -> {
                Wire.writeString(out, c.name());
                Wire.writeString(out, c.passwordHash());
            }, in -> new UserAdd(Wire.readString(in, MAX_FIELD_BYTES), Wire.readString(in, MAX_FIELD_BYTES))),
            new CommandType<>(91, UserDelete.class, (c, out) -> Wire.writeString(out, c.name()),
                    in -> new UserDelete(Wire.readString(in, MAX_FIELD_BYTES))),
            new CommandType<>(92, UserPassword.class, (c, out) -> {
                Wire.writeString(out, c.name());
                Wire.writeString(out, c.passwordHash());
            }, in -> new UserPassword(Wire.readString(in, MAX_FIELD_BYTES), Wire.readString(in, MAX_FIELD_BYTES))),
            new CommandType<>(93, UserGrantRole.class, (c, out) -> {
                Wire.writeString(out, c.user());
                Wire.writeString(out, c.role());
            }, in -> new UserGrantRole(Wire.readString(in, MAX_FIELD_BYTES), Wire.readString(in, MAX_FIELD_BYTES))),
            new CommandType<>(94, UserRevokeRole.class, (c, out) -> {
                Wire.writeString(out, c.user());
                Wire.writeString(out, c.role());
            }, in -> new UserRevokeRole(Wire.readString(in, MAX_FIELD_BYTES), Wire.readString(in, MAX_FIELD_BYTES))),
            new CommandType<>(95, RoleAdd.class, (c, out) -> Wire.writeString(out, c.name()),
                    in -> new RoleAdd(Wire.readString(in, MAX_FIELD_BYTES))),
            new CommandType<>(96, RoleDelete.class, (c, out) -> Wire.writeString(out, c.name()),
                    in -> new RoleDelete(Wire.readString(in, MAX_FIELD_BYTES))),
            new CommandType<>(97, RoleGrant.class, (c, out) -> {
                Wire.writeString(out, c.role());
                Wire.writeString(out, c.kind());
                Wire.writeString(out, c.prefix());
                out.writeByte(c.level().ordinal());
            }, in -> new RoleGrant(Wire.readString(in, MAX_FIELD_BYTES), Wire.readString(in, MAX_FIELD_BYTES),
                    Wire.readString(in, MAX_FIELD_BYTES), level(in.readByte()))),
            new CommandType<>(98, RoleRevoke.class, (c, out) -> {
                Wire.writeString(out, c.role());
                Wire.writeString(out, c.kind());
                Wire.writeString(out, c.prefix());
            }, in -> new RoleRevoke(Wire.readString(in, MAX_FIELD_BYTES), Wire.readString(in, MAX_FIELD_BYTES),
                    Wire.readString(in, MAX_FIELD_BYTES))),
            new CommandType<>(99, AuthEnable.class, (c, out) -> { }, in -> AuthEnable.INSTANCE),
            new CommandType<>(100, AuthDisable.class, (c, out) -> { }, in -> AuthDisable.INSTANCE),
            new CommandType<>(101, TokenIssue.class, (c, out) -> {
                Wire.writeString(out, c.user());
                Wire.writeString(out, c.tokenHash());
                out.writeLong(c.expiresAtMillis());
            }, in -> new TokenIssue(Wire.readString(in, MAX_FIELD_BYTES), Wire.readString(in, MAX_FIELD_BYTES), in.readLong())),
            new CommandType<>(102, TokenRevoke.class, (c, out) -> {
                Wire.writeString(out, c.user());
                Wire.writeString(out, c.tokenHash());
            }, in -> new TokenRevoke(Wire.readString(in, MAX_FIELD_BYTES), Wire.readString(in, MAX_FIELD_BYTES)))));

    private boolean enabled;
    private final TreeMap<String, User> users = new TreeMap<>();
    private final TreeMap<String, Role> roles = new TreeMap<>();
    /** Token hash → its user: rebuilt from {@link #users} after a snapshot load. */
    private final Map<String, String> userOfTokenHash = new HashMap<>();

    public AccessTable() {
        roles.put(ROOT, new Role(ROOT, List.of()));
    }

    private static Level level(int ordinal) throws IOException {
        Level[] levels = Level.values();
        if (ordinal < 0 || ordinal >= levels.length) {
            throw new io.tenure.core.kernel.CommandFormatException("permission level " + ordinal + " is not one of 0 to " + (levels.length - 1));
        }
        return levels[ordinal];
    }

    /** Users and tokens are the cluster's own bookkeeping, not a resource to watch. */
    @Override
    public boolean watched() {
        return false;
    }

    @Override
    public Kind kind() {
        return KIND_OF;
    }

    @Override
    public Result apply(ApplyContext context, Command command) {
        if (command instanceof UserAdd c) {
            return addUser(c);
        } else if (command instanceof UserDelete c) {
            return deleteUser(c);
        } else if (command instanceof UserPassword c) {
            return changePassword(c);
        } else if (command instanceof UserGrantRole c) {
            return grantRole(c);
        } else if (command instanceof UserRevokeRole c) {
            return revokeRole(c);
        } else if (command instanceof RoleAdd c) {
            return addRole(c);
        } else if (command instanceof RoleDelete c) {
            return deleteRole(c);
        } else if (command instanceof RoleGrant c) {
            return grant(c);
        } else if (command instanceof RoleRevoke c) {
            return revoke(c);
        } else if (command instanceof AuthEnable) {
            return enable();
        } else if (command instanceof AuthDisable) {
            enabled = false;
            return new AccessChanged("authentication switched off");
        } else if (command instanceof TokenIssue c) {
            return issue(c);
        } else if (command instanceof TokenRevoke c) {
            return revokeToken(c);
        }
        throw new IllegalArgumentException("not an access command: " + command.getClass().getName());
    }

    private Result addUser(UserAdd c) {
        Result.Rejected bad = firstProblem(userName("name", c.name()), passwordHash(c.passwordHash()));
        if (bad != null) {
            return bad;
        }
        if (users.containsKey(c.name())) {
            return new Result.Rejected(Result.Code.ALREADY_EXISTS, "user '" + c.name() + "' already exists");
        }
        users.put(c.name(), new User(c.name(), c.passwordHash(), new TreeSet<>(), new TreeMap<>()));
        return new AccessChanged("user '" + c.name() + "' added");
    }

    private Result deleteUser(UserDelete c) {
        User user = users.get(c.name());
        if (user == null) {
            return notFound("user", c.name());
        }
        if (enabled && user.roles().contains(ROOT) && rootUsers() == 1) {
            return new Result.Rejected(Result.Code.FAILED_PRECONDITION, "user '" + c.name()
                    + "' is the last user with the role root while authentication is on: switch it off first, or give another user root");
        }
        users.remove(c.name());
        user.tokens().keySet().forEach(userOfTokenHash::remove);
        return new AccessChanged("user '" + c.name() + "' deleted");
    }

    private Result changePassword(UserPassword c) {
        Result.Rejected bad = passwordHash(c.passwordHash());
        if (bad != null) {
            return bad;
        }
        User user = users.get(c.name());
        if (user == null) {
            return notFound("user", c.name());
        }
        user.tokens().keySet().forEach(userOfTokenHash::remove);
        users.put(c.name(), new User(c.name(), c.passwordHash(), user.roles(), new TreeMap<>()));
        return new AccessChanged("user '" + c.name() + "' has a new password; its tokens were revoked");
    }

    private Result grantRole(UserGrantRole c) {
        User user = users.get(c.user());
        if (user == null) {
            return notFound("user", c.user());
        }
        if (!roles.containsKey(c.role())) {
            return notFound("role", c.role());
        }
        TreeSet<String> held = new TreeSet<>(user.roles());
        held.add(c.role());
        users.put(user.name(), new User(user.name(), user.passwordHash(), held, user.tokens()));
        return new AccessChanged("user '" + c.user() + "' has the role '" + c.role() + "'");
    }

    private Result revokeRole(UserRevokeRole c) {
        User user = users.get(c.user());
        if (user == null) {
            return notFound("user", c.user());
        }
        if (!roles.containsKey(c.role())) {
            return notFound("role", c.role());
        }
        if (!user.roles().contains(c.role())) {
            return new Result.Rejected(Result.Code.NOT_FOUND, "user '" + c.user() + "' does not have the role '" + c.role() + "'");
        }
        if (enabled && c.role().equals(ROOT) && rootUsers() == 1) {
            return new Result.Rejected(Result.Code.FAILED_PRECONDITION, "user '" + c.user()
                    + "' is the last user with the role root while authentication is on: give another user root first");
        }
        TreeSet<String> held = new TreeSet<>(user.roles());
        held.remove(c.role());
        users.put(user.name(), new User(user.name(), user.passwordHash(), held, user.tokens()));
        return new AccessChanged("user '" + c.user() + "' no longer has the role '" + c.role() + "'");
    }

    private Result addRole(RoleAdd c) {
        Result.Rejected bad = roleName("name", c.name());
        if (bad != null) {
            return bad;
        }
        if (roles.containsKey(c.name())) {
            return new Result.Rejected(Result.Code.ALREADY_EXISTS, "role '" + c.name() + "' already exists");
        }
        roles.put(c.name(), new Role(c.name(), List.of()));
        return new AccessChanged("role '" + c.name() + "' added");
    }

    private Result deleteRole(RoleDelete c) {
        if (ROOT.equals(c.name())) {
            return new Result.Rejected(Result.Code.FAILED_PRECONDITION, "the role root cannot be deleted");
        }
        if (!roles.containsKey(c.name())) {
            return notFound("role", c.name());
        }
        roles.remove(c.name());
        for (User user : new ArrayList<>(users.values())) {
            if (user.roles().contains(c.name())) {
                TreeSet<String> held = new TreeSet<>(user.roles());
                held.remove(c.name());
                users.put(user.name(), new User(user.name(), user.passwordHash(), held, user.tokens()));
            }
        }
        return new AccessChanged("role '" + c.name() + "' deleted");
    }

    private Result grant(RoleGrant c) {
        Result.Rejected bad = firstProblem(permissionTarget(c.role(), c.kind(), c.prefix()),
                c.level() == null ? invalid("level", "permission level must be READ, WRITE or ADMIN") : null);
        if (bad != null) {
            return bad;
        }
        Role role = roles.get(c.role());
        TreeMap<Permission, Permission> byTarget = new TreeMap<>();
        role.permissions().forEach(p -> byTarget.put(p, p));
        Permission granted = new Permission(c.kind(), c.prefix(), c.level());
        byTarget.remove(granted);
        byTarget.put(granted, granted);
        roles.put(role.name(), new Role(role.name(), new ArrayList<>(byTarget.values())));
        return new AccessChanged("role '" + c.role() + "' has " + c.level() + " on " + c.kind() + " '" + c.prefix() + "*'");
    }

    private Result revoke(RoleRevoke c) {
        Result.Rejected bad = permissionTarget(c.role(), c.kind(), c.prefix());
        if (bad != null) {
            return bad;
        }
        Role role = roles.get(c.role());
        List<Permission> kept = new ArrayList<>(role.permissions());
        if (!kept.removeIf(p -> p.kind().equals(c.kind()) && p.prefix().equals(c.prefix()))) {
            return new Result.Rejected(Result.Code.NOT_FOUND, "role '" + c.role() + "' has no permission on " + c.kind()
                    + " '" + c.prefix() + "*'");
        }
        roles.put(role.name(), new Role(role.name(), kept));
        return new AccessChanged("role '" + c.role() + "' no longer has a permission on " + c.kind() + " '" + c.prefix() + "*'");
    }

    private Result enable() {
        if (rootUsers() == 0) {
            return new Result.Rejected(Result.Code.FAILED_PRECONDITION, "authentication cannot be switched on before a user has "
                    + "the role root (tenure user add root; tenure user grant-role root root): nobody could manage the cluster");
        }
        enabled = true;
        return new AccessChanged("authentication switched on");
    }

    private Result issue(TokenIssue c) {
        User user = users.get(c.user());
        if (user == null) {
            return notFound("user", c.user());
        }
        if (c.tokenHash() == null || !TOKEN_HASH.matcher(c.tokenHash()).matches()) {
            return invalid("token_hash", "a token hash is 16 to 128 lowercase hex digits");
        }
        if (userOfTokenHash.containsKey(c.tokenHash())) {
            return new Result.Rejected(Result.Code.ALREADY_EXISTS, "that token is already issued");
        }
        TreeMap<String, Long> tokens = new TreeMap<>(user.tokens());
        tokens.put(c.tokenHash(), c.expiresAtMillis());
        while (tokens.size() > MAX_TOKENS_PER_USER) {
            String first = null;
            for (Map.Entry<String, Long> t : tokens.entrySet()) {
                if (first == null || expiry(t.getValue()) < expiry(tokens.get(first))) {
                    first = t.getKey();
                }
            }
            tokens.remove(first);
            userOfTokenHash.remove(first);
        }
        users.put(user.name(), new User(user.name(), user.passwordHash(), user.roles(), tokens));
        userOfTokenHash.put(c.tokenHash(), user.name());
        return new AccessChanged("a token was issued to user '" + c.user() + "'");
    }

    /** A token that never expires (0) goes last. */
    private static long expiry(long expiresAtMillis) {
        return expiresAtMillis == 0 ? Long.MAX_VALUE : expiresAtMillis;
    }

    private Result revokeToken(TokenRevoke c) {
        User user = users.get(c.user());
        if (user == null) {
            return notFound("user", c.user());
        }
        if (!user.tokens().containsKey(c.tokenHash())) {
            return new Result.Rejected(Result.Code.NOT_FOUND, "user '" + c.user() + "' holds no such token");
        }
        TreeMap<String, Long> tokens = new TreeMap<>(user.tokens());
        tokens.remove(c.tokenHash());
        userOfTokenHash.remove(c.tokenHash());
        users.put(user.name(), new User(user.name(), user.passwordHash(), user.roles(), tokens));
        return new AccessChanged("a token of user '" + c.user() + "' was revoked");
    }

    // ---- queries, for the server's checks on every call --------------------------------------

    /** Whether authentication is on. */
    public boolean enabled() {
        return enabled;
    }

    /** The user holding the token whose hash is {@code tokenHash}, if it has not expired at {@code nowMillis}. */
    public Optional<String> userOfToken(String tokenHash, long nowMillis) {
        String user = userOfTokenHash.get(tokenHash);
        if (user == null) {
            return Optional.empty();
        }
        Long expires = users.get(user).tokens().get(tokenHash);
        return expires != null && (expires == 0 || nowMillis < expires) ? Optional.of(user) : Optional.empty();
    }

    public Optional<User> user(String name) {
        return Optional.ofNullable(users.get(name));
    }

    /** Every user, by name. */
    public SortedMap<String, User> users() {
        return Collections.unmodifiableSortedMap(users);
    }

    /** Every role, by name, {@code root} among them. */
    public SortedMap<String, Role> roles() {
        return Collections.unmodifiableSortedMap(roles);
    }

    /** Whether user {@code user} has the role root. */
    public boolean isRoot(String user) {
        User u = users.get(user);
        return u != null && u.roles().contains(ROOT);
    }

    /** Whether user {@code user} may do what {@code level} allows on name {@code name} of primitive {@code kind}. */
    public boolean permits(String user, String kind, String name, Level level) {
        User u = users.get(user);
        if (u == null) {
            return false;
        }
        if (u.roles().contains(ROOT)) {
            return true;
        }
        for (String roleName : u.roles()) {
            Role role = roles.get(roleName);
            if (role == null) {
                continue;
            }
            for (Permission p : role.permissions()) {
                if (p.covers(kind, name, level)) {
                    return true;
                }
            }
        }
        return false;
    }

    private int rootUsers() {
        int n = 0;
        for (User user : users.values()) {
            if (user.roles().contains(ROOT)) {
                n++;
            }
        }
        return n;
    }

    // ---- input checks, each naming its field -------------------------------------------------

    private static Result.Rejected userName(String field, String name) {
        return name != null && USER_NAME.matcher(name).matches() ? null
                : invalid(field, field + " must be 1-63 letters, digits, '_', '.', '@' or '-', starting with a letter or digit, got "
                        + quoted(name));
    }

    private static Result.Rejected roleName(String field, String name) {
        return name != null && ROLE_NAME.matcher(name).matches() ? null
                : invalid(field, field + " must be 1-63 letters, digits, '_', '.', '@' or '-', starting with a letter or digit, got "
                        + quoted(name));
    }

    private static Result.Rejected passwordHash(String hash) {
        return hash != null && !hash.isEmpty() && hash.length() <= MAX_HASH_CHARS ? null
                : invalid("password", "a user needs a password");
    }

    private Result.Rejected permissionTarget(String role, String kind, String prefix) {
        if (role == null || !roles.containsKey(role)) {
            return notFound("role", role);
        }
        if (ROOT.equals(role)) {
            return new Result.Rejected(Result.Code.FAILED_PRECONDITION, "the role root allows everything; its permissions are not changed");
        }
        if (kind == null || !KIND.matcher(kind).matches()) {
            return invalid("kind", "kind must be a primitive kind (lowercase letters and '_', as lock, semaphore, kv) or *, got "
                    + quoted(kind));
        }
        if (prefix == null || prefix.length() > MAX_PREFIX_CHARS) {
            return invalid("prefix", "prefix must be a string of at most " + MAX_PREFIX_CHARS + " characters");
        }
        return null;
    }

    private static Result.Rejected firstProblem(Result.Rejected... problems) {
        for (Result.Rejected problem : problems) {
            if (problem != null) {
                return problem;
            }
        }
        return null;
    }

    private static Result.Rejected invalid(String field, String message) {
        return new Result.Rejected(Result.Code.INVALID_ARGUMENT, message);
    }

    private static Result.Rejected notFound(String what, String name) {
        return new Result.Rejected(Result.Code.NOT_FOUND, what + " '" + name + "' does not exist");
    }

    private static String quoted(String s) {
        return s == null ? "nothing" : "'" + s + "'";
    }

    // ---- snapshot ----------------------------------------------------------------------------

    @Override
    public void writeSnapshot(DataOutputStream out) throws IOException {
        out.writeBoolean(enabled);
        out.writeInt(users.size());
        for (User user : users.values()) {
            Wire.writeString(out, user.name());
            Wire.writeString(out, user.passwordHash());
            out.writeInt(user.roles().size());
            for (String role : user.roles()) {
                Wire.writeString(out, role);
            }
            out.writeInt(user.tokens().size());
            for (Map.Entry<String, Long> token : user.tokens().entrySet()) {
                Wire.writeString(out, token.getKey());
                out.writeLong(token.getValue());
            }
        }
        out.writeInt(roles.size());
        for (Role role : roles.values()) {
            Wire.writeString(out, role.name());
            out.writeInt(role.permissions().size());
            for (Permission p : role.permissions()) {
                Wire.writeString(out, p.kind());
                Wire.writeString(out, p.prefix());
                out.writeByte(p.level().ordinal());
            }
        }
    }

    /** A snapshot written before this section existed has none: the state stays empty (authentication off). */
    @Override
    public void readSnapshot(DataInputStream in, int formatVersion, Leases leases) throws IOException {
        if (formatVersion < 3) {
            return;
        }
        enabled = in.readBoolean();
        int userCount = Wire.count(in, "user");
        for (int i = 0; i < userCount; i++) {
            String name = Wire.readString(in, MAX_FIELD_BYTES);
            String hash = Wire.readString(in, MAX_FIELD_BYTES);
            TreeSet<String> held = new TreeSet<>();
            int roleCount = Wire.count(in, "role of a user");
            for (int r = 0; r < roleCount; r++) {
                held.add(Wire.readString(in, MAX_FIELD_BYTES));
            }
            TreeMap<String, Long> tokens = new TreeMap<>();
            int tokenCount = Wire.count(in, "token");
            for (int t = 0; t < tokenCount; t++) {
                tokens.put(Wire.readString(in, MAX_FIELD_BYTES), in.readLong());
            }
            users.put(name, new User(name, hash, held, tokens));
            tokens.keySet().forEach(hashOf -> userOfTokenHash.put(hashOf, name));
        }
        int roleCount = Wire.count(in, "role");
        roles.clear();
        for (int i = 0; i < roleCount; i++) {
            String name = Wire.readString(in, MAX_FIELD_BYTES);
            List<Permission> permissions = new ArrayList<>();
            int count = Wire.count(in, "permission");
            for (int p = 0; p < count; p++) {
                permissions.add(new Permission(Wire.readString(in, MAX_FIELD_BYTES), Wire.readString(in, MAX_FIELD_BYTES),
                        level(in.readByte())));
            }
            roles.put(name, new Role(name, permissions));
        }
        roles.putIfAbsent(ROOT, new Role(ROOT, List.of()));
    }
}

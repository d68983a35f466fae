package io.tenure.cli;

import io.tenure.client.TenureClient;
import io.tenure.proto.v1.Permission;
import io.tenure.proto.v1.PermissionLevel;
import io.tenure.proto.v1.Role;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code tenure role add|delete|grant|revoke|list}: roles and their permissions on name prefixes. */
@Command(name = "role", mixinStandardHelpOptions = true,
        description = {
            "Adds, deletes and lists roles, and grants and revokes their permissions: read, write or admin on the names "
                    + "of one kind of primitive (or every kind, '*') that start with a prefix.",
            "The role root always exists and can do everything. While authentication is on, each needs a user with the role root."
        },
        subcommands = {RoleCommand.Add.class, RoleCommand.Delete.class, RoleCommand.Grant.class, RoleCommand.Revoke.class,
            RoleCommand.ListRoles.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:success", "1:refused (the message says why) or no member answered", "2:usage error"})
final class RoleCommand {

    /** One line per role: name, then its permissions as kind:prefix*=level. */
    static void print(List<Role> roles, PrintWriter out) {
        for (Role role : roles) {
            StringBuilder line = new StringBuilder(role.getName());
            if (role.getPermissionsCount() == 0) {
                line.append("  -");
            }
            for (Permission p : role.getPermissionsList()) {
                line.append("  ").append(p.getKind()).append(':').append(p.getPrefix()).append("*=")
                        .append(p.getLevel().name().toLowerCase(Locale.ROOT));
            }
            out.println(line);
        }
        out.flush();
    }

    abstract static class OnRole implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "ROLE", description = "The role.")
        String name;

        @Mixin
        EndpointsOption endpoints;

        abstract Role change(TenureClient client);

        @Override
        public Integer call() {
            try (TenureClient client = endpoints.connect()) {
                print(List.of(change(client)), spec.commandLine().getOut());
            }
            return TenureCli.EXIT_OK;
        }
    }

    @Command(name = "add", mixinStandardHelpOptions = true, description = "Adds ROLE, with no permission yet.")
    static final class Add extends OnRole {
        @Override
        Role change(TenureClient client) {
            return client.auth().addRole(name);
        }
    }

    @Command(name = "delete", mixinStandardHelpOptions = true, description = "Deletes ROLE and takes it from every user.")
    static final class Delete extends OnRole {
        @Override
        Role change(TenureClient client) {
            return client.auth().deleteRole(name);
        }
    }

    @Command(name = "grant", mixinStandardHelpOptions = true,
            description = "Grants ROLE LEVEL (read, write or admin) on the names of --kind starting with --prefix.")
    static final class Grant extends OnRole {
        @Parameters(index = "1", paramLabel = "LEVEL", description = "read, write or admin.")
        String level;

        @Option(names = "--kind", defaultValue = "*", paramLabel = "KIND",
                description = "lock, semaphore, election, barrier, double_barrier, latch, counter, kv, list, signal, lease, or * "
                        + "(default: *).")
        String kind;

        @Option(names = "--prefix", defaultValue = "", paramLabel = "PREFIX", description = "The names' prefix (default: every name).")
        String prefix;

        @Override
        Role change(TenureClient client) {
            PermissionLevel parsed = switch (level.toLowerCase(Locale.ROOT)) {
                case "read" -> PermissionLevel.READ;
                case "write" -> PermissionLevel.WRITE;
                case "admin" -> PermissionLevel.ADMIN;
                default -> throw new ParameterException(spec.commandLine(),
                        "Invalid value for positional parameter LEVEL: '" + level + "' (read, write or admin)");
            };
            return client.auth().grantPermission(name, kind, prefix, parsed);
        }
    }

    @Command(name = "revoke", mixinStandardHelpOptions = true, description = "Revokes ROLE's permission on --kind and --prefix.")
    static final class Revoke extends OnRole {
        @Option(names = "--kind", defaultValue = "*", paramLabel = "KIND", description = "As granted (default: *).")
        String kind;

        @Option(names = "--prefix", defaultValue = "", paramLabel = "PREFIX", description = "As granted (default: every name).")
        String prefix;

        @Override
        Role change(TenureClient client) {
            return client.auth().revokePermission(name, kind, prefix);
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "Prints the roles and their permissions.")
    static final class ListRoles implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        EndpointsOption endpoints;

        @Override
        public Integer call() {
            try (TenureClient client = endpoints.connect()) {
                print(client.auth().roles(), spec.commandLine().getOut());
            }
            return TenureCli.EXIT_OK;
        }
    }
}

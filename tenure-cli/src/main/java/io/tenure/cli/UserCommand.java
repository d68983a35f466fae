package io.tenure.cli;

import io.tenure.client.TenureClient;
import io.tenure.proto.v1.User;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code tenure user add|delete|passwd|list|grant-role|revoke-role}: the users of the cluster. */
@Command(name = "user", mixinStandardHelpOptions = true,
        description = {
            "Adds, deletes and lists users, changes their passwords, and grants and revokes their roles.",
            "While authentication is on, each needs a user with the role root (a user may change their own password). "
                    + "Passwords are read from standard input, a file or a prompt, never the command line; the member keeps "
                    + "them hashed (PBKDF2)."
        },
        subcommands = {UserCommand.Add.class, UserCommand.Delete.class, UserCommand.Passwd.class, UserCommand.ListUsers.class,
            UserCommand.GrantRole.class, UserCommand.RevokeRole.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:success", "1:refused (the message says why) or no member answered", "2:usage error"})
final class UserCommand {

    /** One line per user: name, roles (comma-separated, '-' for none), tokens held. */
    static void print(List<User> users, PrintWriter out) {
        int width = 1;
        for (User user : users) {
            width = Math.max(width, user.getName().length());
        }
        for (User user : users) {
            String roles = user.getRolesCount() == 0 ? "-" : String.join(",", user.getRolesList());
            out.println(String.format("%-" + width + "s  roles=%s  tokens=%d", user.getName(), roles, user.getTokens()));
        }
        out.flush();
    }

    abstract static class OnUser implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "USER", description = "The user.")
        String name;

        @Mixin
        EndpointsOption endpoints;

        abstract User change(TenureClient client);

        @Override
        public Integer call() {
            try (TenureClient client = endpoints.connect()) {
                print(List.of(change(client)), spec.commandLine().getOut());
            }
            return TenureCli.EXIT_OK;
        }
    }

    @Command(name = "add", mixinStandardHelpOptions = true, description = "Adds USER with a password.")
    static final class Add extends OnUser {
        @Mixin
        PasswordOption password;

        @Override
        User change(TenureClient client) {
            return client.auth().addUser(name, password.read("password for " + name + ": "));
        }
    }

    @Command(name = "delete", mixinStandardHelpOptions = true, description = "Deletes USER; its tokens stop working.")
    static final class Delete extends OnUser {
        @Override
        User change(TenureClient client) {
            return client.auth().deleteUser(name);
        }
    }

    @Command(name = "passwd", mixinStandardHelpOptions = true, description = "Changes USER's password; its tokens stop working.")
    static final class Passwd extends OnUser {
        @Mixin
        PasswordOption password;

        @Override
        User change(TenureClient client) {
            return client.auth().changePassword(name, password.read("new password for " + name + ": "));
        }
    }

    @Command(name = "grant-role", mixinStandardHelpOptions = true, description = "Gives USER the role ROLE.")
    static final class GrantRole extends OnUser {
        @Parameters(index = "1", paramLabel = "ROLE", description = "The role (root, or one made with 'tenure role add').")
        String role;

        @Override
        User change(TenureClient client) {
            return client.auth().grantRole(name, role);
        }
    }

    @Command(name = "revoke-role", mixinStandardHelpOptions = true, description = "Takes the role ROLE from USER.")
    static final class RevokeRole extends OnUser {
        @Parameters(index = "1", paramLabel = "ROLE", description = "The role.")
        String role;

        @Override
        User change(TenureClient client) {
            return client.auth().revokeRole(name, role);
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "Prints the users: name, roles, tokens held.")
    static final class ListUsers implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        EndpointsOption endpoints;

        @Override
        public Integer call() {
            try (TenureClient client = endpoints.connect()) {
                print(client.auth().users(), spec.commandLine().getOut());
            }
            return TenureCli.EXIT_OK;
        }
    }
}

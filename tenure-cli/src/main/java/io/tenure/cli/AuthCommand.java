package io.tenure.cli;

import io.tenure.client.TenureAuth;
import io.tenure.client.TenureClient;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code tenure auth enable|disable|status|token}: the authentication switch, and bearer tokens. */
@Command(name = "auth", mixinStandardHelpOptions = true,
        description = {
            "Switches authentication on or off, says whether it is on, or gets a bearer token for a user.",
            "Once on, every call must show a token (--token, TENURE_TOKEN) or a client certificate whose CN names a user; "
                    + "'enable' is refused until a user with the role root exists ('tenure user add root', "
                    + "'tenure user grant-role root root')."
        },
        subcommands = {AuthCommand.Enable.class, AuthCommand.Disable.class, AuthCommand.Status.class, AuthCommand.Token.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:success", "1:refused (the message says why) or no member answered", "2:usage error"})
final class AuthCommand {

    static void print(TenureAuth.Status status, PrintWriter out) {
        out.println("authentication: " + (status.enabled() ? "on" : "off"));
        out.println("you: " + (status.user().isEmpty() ? "-" : status.user() + " (" + status.credential() + ")"));
        out.flush();
    }

    /** A call that answers with the switch's position and who the caller is. */
    abstract static class OnSwitch implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        EndpointsOption endpoints;

        abstract TenureAuth.Status call(TenureAuth auth);

        @Override
        public Integer call() {
            try (TenureClient client = endpoints.connect()) {
                print(call(client.auth()), spec.commandLine().getOut());
            }
            return TenureCli.EXIT_OK;
        }
    }

    @Command(name = "enable", mixinStandardHelpOptions = true, description = "Switches authentication on (needs a root user).")
    static final class Enable extends OnSwitch {
        @Override
        TenureAuth.Status call(TenureAuth auth) {
            return auth.enable();
        }
    }

    @Command(name = "disable", mixinStandardHelpOptions = true, description = "Switches authentication off (as root).")
    static final class Disable extends OnSwitch {
        @Override
        TenureAuth.Status call(TenureAuth auth) {
            return auth.disable();
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true,
            description = "Prints whether authentication is on, and who these calls are made as.")
    static final class Status extends OnSwitch {
        @Override
        TenureAuth.Status call(TenureAuth auth) {
            return auth.status();
        }
    }

    @Command(name = "token", mixinStandardHelpOptions = true,
            description = {"Prints a bearer token for USER, whose password it reads (--password-stdin, --password-file, or a prompt).",
                "TENURE_TOKEN=$(tenure auth token USER --password-file pw) makes the next commands use it."})
    static final class Token implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "USER", description = "The user to authenticate as.")
        String user;

        @Option(names = "--ttl", paramLabel = "DURATION", defaultValue = "24h", converter = DurationConverter.class,
                description = "How long the token works, e.g. 1h, 7d; at most 30 days (default: 24h).")
        Duration ttl;

        @Mixin
        PasswordOption password;

        @Mixin
        EndpointsOption endpoints;

        @Override
        public Integer call() {
            String secret = password.read("password for " + user + ": ");
            try (TenureClient client = endpoints.connect()) {
                spec.commandLine().getOut().println(client.auth().authenticate(user, secret, ttl));
                spec.commandLine().getOut().flush();
            }
            return TenureCli.EXIT_OK;
        }
    }
}

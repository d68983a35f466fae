package io.tenure.cli;

import io.tenure.client.TenureException;
import java.io.PrintWriter;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

/** The {@code tenure} command: a member of a Tenure cluster, and a client of one. */
@Command(name = "tenure", mixinStandardHelpOptions = true, versionProvider = TenureCli.Version.class,
        description = "Tenure: a Raft-replicated lock and lease service with fencing tokens.",
        subcommands = {ServerCommand.class, LockCommand.class, StatusCommand.class, MemberCommand.class,
            LocksCommand.class, DescribeCommand.class, LeaseCommand.class, WatchCommand.class, SnapshotCommand.class, BenchCommand.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:success (tenure lock: COMMAND's own status, 0..255)",
            "1:error (no member answered, or the cluster refused the request; the message says which)",
            "2:usage error",
            "3:tenure lock: the lease was lost",
            "4:tenure lock: the lock was not acquired within --timeout"
        })
public final class TenureCli {
    static final int EXIT_OK = 0;
    static final int EXIT_ERROR = 1;
    static final int EXIT_USAGE = 2;
    static final int EXIT_LEASE_LOST = 3;
    static final int EXIT_LOCK_NOT_ACQUIRED = 4;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line with Tenure's error handling, for {@link #main} and tests. */
    static CommandLine commandLine() {
        return commandLine(System.getenv());
    }

    /** As {@link #commandLine()}, with settings read from {@code environment} (see {@link SettingSources}). */
    static CommandLine commandLine(Map<String, String> environment) {
        CommandLine commandLine = new CommandLine(new TenureCli());
        // Set on the root after the subcommands exist: picocli hands it down to every one of them.
        commandLine.setDefaultValueProvider(new SettingSources(environment));
        commandLine.setParameterExceptionHandler(TenureCli::usageError);
        commandLine.setExecutionExceptionHandler((failure, failed, parseResult) -> {
            PrintWriter err = failed.getErr();
            String what = failure instanceof TenureException || failure instanceof java.io.IOException
                    ? failure.getMessage()
                    : failure.toString();
            err.println(failed.getCommandSpec().qualifiedName() + ": " + what);
            err.flush();
            return EXIT_ERROR;
        });
        return commandLine;
    }

    /** The message and a pointer to --help, instead of the whole usage text. */
    private static int usageError(ParameterException problem, String[] args) {
        CommandLine failed = problem.getCommandLine();
        PrintWriter err = failed.getErr();
        err.println(failed.getCommandSpec().qualifiedName() + ": " + sourced(problem));
        UnmatchedArgumentException.printSuggestions(problem, err);
        err.println("Try '" + failed.getCommandSpec().qualifiedName() + " --help' for more information.");
        err.flush();
        return EXIT_USAGE;
    }

    /**
     * The message of {@code problem}, preceded by where the value came from when it was not a flag
     * ({@code TENURE_CLIENT_PORT=abc: Invalid value for option '--client-port': ...}).
     */
    private static String sourced(ParameterException problem) {
        ArgSpec arg = problem.getArgSpec();
        if (arg != null && problem.getCommandLine().getCommandSpec().defaultValueProvider() instanceof SettingSources sources) {
            String source = sources.sourceOf(arg);
            if (source != null && !problem.getMessage().startsWith(source)) {
                return source + ": " + problem.getMessage();
            }
        }
        return problem.getMessage();
    }

    /** The version recorded in the jar's manifest at build time. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = TenureCli.class.getPackage().getImplementationVersion();
            return new String[] {"tenure " + (version != null ? version : "(development build)"),
                    "Java " + Runtime.version()};
        }
    }
}

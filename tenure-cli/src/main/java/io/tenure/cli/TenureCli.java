package io.tenure.cli;

import io.tenure.client.TenureException;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

/** The {@code tenure} command: a member of a Tenure cluster, and a client of one. */
@Command(name = "tenure", mixinStandardHelpOptions = true, versionProvider = TenureCli.Version.class,
        description = "Tenure: a Raft-replicated lock and lease service with fencing tokens.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:success (tenure lock, tenure semaphore, tenure elect: COMMAND's own status, 0..255)",
            "1:error (no member answered, or the cluster refused the request; the message says which)",
            "2:usage error",
            "3:tenure lock, tenure semaphore, tenure elect: the lease was lost",
            "4:tenure lock, tenure semaphore, tenure elect: the lock or semaphore was not acquired, or not elected, "
                    + "within --timeout",
            "5:tenure leader: nobody leads the election"
        })
public final class TenureCli {
    static final int EXIT_OK = 0;
    static final int EXIT_ERROR = 1;
    static final int EXIT_USAGE = 2;
    static final int EXIT_LEASE_LOST = 3;
    static final int EXIT_NOT_ACQUIRED = 4;
    static final int EXIT_NO_LEADER = 5;

    /**
     * The subcommands, in the order the help lists them. Made only when needed: picocli reads a
     * command's annotations when it is added, and reading all of them took about 0.3 s of every
     * start on two cores, a sixth of a member's start-up.
     */
    private static final Map<String, Supplier<Object>> SUBCOMMANDS = subcommands();

    private static Map<String, Supplier<Object>> subcommands() {
        Map<String, Supplier<Object>> all = new LinkedHashMap<>();
        all.put("server", ServerCommand::new);
        all.put("lock", LockCommand::new);
        all.put("semaphore", SemaphoreCommand::new);
        all.put("elect", ElectCommand::new);
        all.put("leader", LeaderCommand::new);
        all.put("barrier", BarrierCommand::new);
        all.put("latch", LatchCommand::new);
        all.put("counter", CounterCommand::new);
        all.put("list", ListCommand::new);
        all.put("kv", KvCommand::new);
        all.put("signal", SignalCommand::new);
        all.put("listen", ListenCommand::new);
        all.put("status", StatusCommand::new);
        all.put("member", MemberCommand::new);
        all.put("auth", AuthCommand::new);
        all.put("user", UserCommand::new);
        all.put("role", RoleCommand::new);
        all.put("locks", LocksCommand::new);
        all.put("describe", DescribeCommand::new);
        all.put("lease", LeaseCommand::new);
        all.put("watch", WatchCommand::new);
        all.put("snapshot", SnapshotCommand::new);
        all.put("bench", BenchCommand::new);
        return all;
    }

    public static void main(String[] args) {
        // The named subcommand alone; without one (help, a typo to suggest for), every one.
        String named = args.length > 0 && SUBCOMMANDS.containsKey(args[0]) ? args[0] : null;
        if ("server".equals(named)) {
            // A member's start waits for its logging; set it up while the command line is read.
            LogSetup.startEarly();
        }
        System.exit(commandLine(System.getenv(), named).execute(args));
    }

    /** The command line with Tenure's error handling and every subcommand, for tests. */
    static CommandLine commandLine() {
        return commandLine(System.getenv());
    }

    /** As {@link #commandLine()}, with settings read from {@code environment} (see {@link SettingSources}). */
    static CommandLine commandLine(Map<String, String> environment) {
        return commandLine(environment, null);
    }

    /** With only subcommand {@code only}, or every one when it is null. */
    private static CommandLine commandLine(Map<String, String> environment, String only) {
        CommandLine commandLine = new CommandLine(new TenureCli());
        SUBCOMMANDS.forEach((name, command) -> {
            if (only == null || only.equals(name)) {
                commandLine.addSubcommand(name, command.get());
            }
        });
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

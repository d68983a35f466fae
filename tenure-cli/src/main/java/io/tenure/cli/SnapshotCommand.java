package io.tenure.cli;

import io.tenure.server.RaftEngine;
import io.tenure.server.ServerConfig;
import io.tenure.server.SnapshotRestore;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code tenure snapshot save|restore}: backup and disaster recovery. */
@Command(name = "snapshot", mixinStandardHelpOptions = true,
        description = {
            "Backs up a cluster's state, and restores it to start a new cluster from.",
            "'save' copies the state of a running cluster into a file; 'restore' makes a data directory from such a "
                    + "file: the way back after losing a majority of the members (or every one).",
            "  tenure snapshot save backup.snap --endpoints ...",
            "  tenure snapshot restore backup.snap --data-dir DIR [--raft-engine ratis|jraft]",
            "  tenure server --data-dir DIR ...          (alone, on that engine; then grow it with --join and 'tenure member add')"
        },
        subcommands = {SnapshotCommand.Save.class, SnapshotCommand.Restore.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:success", "1:error (the message says which)", "2:usage error"})
final class SnapshotCommand {

    @Command(name = "save", mixinStandardHelpOptions = true,
            description = {
                "Saves a consistent copy of the cluster's state (leases, locks with their holders, fencing tokens "
                        + "and queues) into FILE. Any member serves it, after a linearizable read, so it holds every "
                        + "write acknowledged before the command started.",
                "FILE is written atomically: the copy goes to a temporary file beside it, is checked (its SHA-256 "
                        + "against the member's, and the snapshot's own format and CRC), forced to disk and only then "
                        + "renamed to FILE, replacing an older backup. Prints the file, the revision and applied index "
                        + "the copy reflects, its size and SHA-256, and the member that sent it."
            },
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:saved", "1:no member could send a copy, the copy failed its checks, or FILE could not be "
                    + "written (FILE is then unchanged)", "2:usage error"})
    static final class Save implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "FILE", description = "Where to save the backup.")
        Path file;

        @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "10m", converter = DurationConverter.class,
                description = "How long the transfer from one member may take (default: ${DEFAULT-VALUE}).")
        Duration timeout;

        @Mixin
        EndpointsOption endpoints;

        @Override
        public Integer call() throws IOException {
            if (timeout.isZero()) {
                throw new ParameterException(spec.commandLine(), "Invalid value for option '--timeout': must be more than 0");
            }
            if (Files.isDirectory(file)) {
                throw new ParameterException(spec.commandLine(), "Invalid value for positional parameter FILE: "
                        + file + " is a directory");
            }
            for (String endpoint : endpoints.endpoints) {
                String problem = MemberCommand.addressProblem(endpoint);
                if (problem != null) {
                    throw new ParameterException(spec.commandLine(), endpoints.sourceOf("--endpoints")
                            + "Invalid value for option '--endpoints': '" + endpoint + "' " + problem);
                }
            }
            BackupDownload.Saved saved = new BackupDownload(endpoints.endpoints, endpoints.requestTimeout, timeout).saveTo(file);
            PrintWriter out = spec.commandLine().getOut();
            out.println("file: " + file.toAbsolutePath().normalize());
            out.println("revision: " + saved.revision());
            out.println("applied_index: " + saved.appliedIndex());
            out.println("size: " + saved.bytes());
            out.println("sha256: " + saved.sha256());
            out.println("member: " + saved.member());
            out.flush();
            return TenureCli.EXIT_OK;
        }
    }

    @Command(name = "restore", mixinStandardHelpOptions = true,
            description = {
                "Makes data directory DIR from backup FILE (made by 'tenure snapshot save'), for member --id of "
                        + "cluster --cluster. 'tenure server --data-dir DIR --id NAME --cluster NAME ...' then starts "
                        + "with the backup's leases, locks, holders, fencing tokens and queues, and grants fencing "
                        + "tokens above every one in the backup.",
                "FILE is checked first (format, version, CRC); a damaged file is refused. DIR must not exist or be "
                        + "empty; it is never overwritten. Nothing is read from the environment.",
                "DIR is made for the Raft engine --raft-engine names, which the member must then start with too "
                        + "('tenure server --raft-engine ENGINE'), as every member that joins it; a backup from a "
                        + "cluster on one engine restores into either.",
                "Start the restored member alone, as a single member or with --peers naming only itself; then add "
                        + "members one at a time (new, empty data directories): 'tenure server --join ...' and 'tenure "
                        + "member add'. The leader brings each up to date. Do not start it next to members of the old "
                        + "cluster. Leases in the backup get their full TTL from the start; clients that renew them "
                        + "(at the new endpoints) keep them."
            },
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:restored", "1:FILE is missing or damaged, DIR is not empty, or writing failed (DIR is "
                    + "then left as it was)", "2:usage error"})
    static final class Restore implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "FILE", description = "The backup.")
        Path file;

        @Option(names = "--data-dir", paramLabel = "DIR", required = true,
                description = "The new data directory: absent or empty.")
        Path dataDir;

        @Option(names = {"--id", "--member"}, paramLabel = "NAME", defaultValue = ServerConfig.DEFAULT_MEMBER,
                description = "The member that will start from DIR: its --id (default: ${DEFAULT-VALUE}).")
        String member;

        @Option(names = "--cluster", paramLabel = "NAME", defaultValue = ServerConfig.DEFAULT_CLUSTER,
                description = "The new cluster's name: its members' --cluster (default: ${DEFAULT-VALUE}).")
        String cluster;

        /** No default here: absent, it is {@link SnapshotRestore#DEFAULT_ENGINE} ({@link #engine()}). */
        @Option(names = "--raft-engine", paramLabel = "ENGINE",
                description = "The Raft engine DIR is made for: jraft, ratis, or auto (jraft, the engine of a new cluster "
                        + "of several members); the member then runs on it, and members that join it learn it "
                        + "(default: jraft).")
        String raftEngine;

        /** The engine named by --raft-engine; without it (or with auto), {@link SnapshotRestore#DEFAULT_ENGINE}. */
        RaftEngine engine() {
            if (raftEngine == null) {
                return SnapshotRestore.DEFAULT_ENGINE;
            }
            RaftEngine named;
            try {
                named = RaftEngine.parse(raftEngine);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), "Invalid value for option '--raft-engine': " + e.getMessage());
            }
            return named == RaftEngine.AUTO ? SnapshotRestore.DEFAULT_ENGINE : named;
        }

        @Override
        public Integer call() throws IOException {
            RaftEngine engine = engine();
            SnapshotRestore.Backup restored;
            try {
                restored = SnapshotRestore.restore(file, dataDir, cluster, member, engine);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), ServerCommand.describe(e.getMessage(), false));
            }
            String engineName = engine.flag();
            PrintWriter out = spec.commandLine().getOut();
            out.println("data_dir: " + dataDir.toAbsolutePath().normalize());
            out.println("member: " + member);
            out.println("cluster: " + cluster);
            out.println("raft_engine: " + engineName);
            out.println("revision: " + restored.revision());
            out.println("log_continues_after_index: " + restored.index());
            out.println("leases: " + restored.leases());
            out.println("locks: " + restored.locks());
            out.println("waiters: " + restored.waiters());
            out.flush();
            PrintWriter err = spec.commandLine().getErr();
            err.println("tenure snapshot restore: start it with 'tenure server --data-dir " + dataDir + " --id " + member
                    + " --cluster " + cluster + " --raft-engine " + engineName + " ...', alone; then add members with "
                    + "'tenure server --join --raft-engine " + engineName + "' and 'tenure member add'");
            err.flush();
            return TenureCli.EXIT_OK;
        }
    }
}

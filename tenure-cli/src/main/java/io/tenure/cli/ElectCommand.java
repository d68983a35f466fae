package io.tenure.cli;

import io.tenure.client.Lease;
import io.tenure.client.Leadership;
import io.tenure.client.NotElectedException;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureElection;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/** {@code tenure elect NAME --value V -- COMMAND}: runs a command while leading an election. */
@Command(name = "elect", resourceBundle = "io.tenure.cli.ElectCommand",
        description = {
            "Runs COMMAND while leader of election NAME.",
            "Grants a lease, stands for leader with --value and waits until elected, runs COMMAND with the terminal's "
                    + "input and output, keeps the lease alive while it runs, then resigns (the next candidate leads) "
                    + "and revokes the lease. Candidates lead in the order they stood. COMMAND sees TENURE_LOCK_KEY (the "
                    + "election's name), TENURE_LEASE_ID and TENURE_FENCING_TOKEN (above every earlier leader's) in its "
                    + "environment; pass the token to any storage it writes, so writes of a deposed leader can be "
                    + "refused.",
            "The value is what 'tenure leader NAME' prints and observers follow (an address, for example). A NAME held "
                    + "or waited for as a lock or a semaphore is refused (exit 1).",
            LeaseBoundCommand.LOST_LEASE_HELP + "leadership to the next candidate.",
            LeaseBoundCommand.DOUBLE_DASH_HELP
        })
final class ElectCommand extends LeaseBoundCommand {
    @Parameters(index = "0", paramLabel = "NAME", description = "The election to lead.")
    String name;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "COMMAND", description = "The command and its arguments.")
    List<String> command;

    @Option(names = "--value", required = true, paramLabel = "V",
            description = "What others see while COMMAND leads ('tenure leader'), up to "
                    + TenureElection.MAX_VALUE_BYTES / 1024 + " KiB in UTF-8.")
    String value;

    @Override
    String name() {
        return name;
    }

    @Override
    List<String> command() {
        return command;
    }

    @Override
    void validate() {
        int bytes = value.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > TenureElection.MAX_VALUE_BYTES) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--value': at most "
                    + TenureElection.MAX_VALUE_BYTES + " bytes in UTF-8, got " + bytes);
        }
    }

    @Override
    Grant acquire(TenureClient client, Lease lease) throws NotAcquired {
        TenureElection election = client.election(name, lease);
        Leadership leading;
        try {
            leading = timeout == null ? election.campaign(value) : election.campaign(value, timeout);
        } catch (NotElectedException e) {
            StringBuilder why = new StringBuilder("not elected leader of '").append(name).append("' within ")
                    .append(timeout.toMillis()).append(" ms");
            if (!e.leader().isEmpty()) {
                why.append("; '").append(e.leader()).append("' leads");
            }
            if (e.candidates() > 0) {
                why.append(e.leader().isEmpty() ? "; " : ", ").append(e.candidates())
                        .append(e.candidates() == 1 ? " candidate" : " candidates").append(" ahead");
            }
            throw new NotAcquired(why.toString());
        }
        return new Grant(leading.name(), leading.fencingToken(), Map.of(), leading::resign);
    }
}

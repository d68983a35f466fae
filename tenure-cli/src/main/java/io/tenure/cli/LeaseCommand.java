package io.tenure.cli;

import io.tenure.client.TenureClient;
import io.tenure.proto.v1.LeaseSummary;
import io.tenure.proto.v1.LeaseTimeToLiveResponse;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code tenure lease grant|revoke|ttl|list}: leases by hand, for scripts and operators. */
@Command(name = "lease", mixinStandardHelpOptions = true,
        description = {
            "Grants, revokes, inspects and lists leases.",
            "A lease lives for its TTL after its last renewal; when it ends, its locks pass to their next waiters and "
                    + "its waits end."
        },
        subcommands = {LeaseCommand.Grant.class, LeaseCommand.Revoke.class, LeaseCommand.TimeToLive.class,
            LeaseCommand.ListLeases.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:success", "1:no member answered, or the cluster refused the request (for example an "
                + "unknown lease)", "2:usage error"})
final class LeaseCommand {

    @Command(name = "grant", mixinStandardHelpOptions = true,
            description = {
                "Grants a lease and prints its id (only the id, on standard output: L=$(tenure lease grant --ttl 60s)).",
                "The lease is NOT kept alive by this command: it ends --ttl after the grant unless something renews "
                        + "it (the LeaseKeepAlive RPC) or revokes it ('tenure lease revoke'). To hold a lock while a "
                        + "command runs, use 'tenure lock', which keeps its lease alive."
            },
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:granted", "1:refused (for example a TTL under the cluster's minimum) or no member answered",
                "2:usage error"})
    static final class Grant implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--ttl", required = true, paramLabel = "DURATION", converter = DurationConverter.class,
                description = "Time to live, 1s to 24h, e.g. 30s, 10m; a cluster's minimum is 10 election timeouts (5s by default).")
        Duration ttl;

        @Option(names = "--client-id", paramLabel = "ID",
                description = "The holder name others see for the lease's locks (default: user@hostname:pid).")
        String clientId;

        @Mixin
        EndpointsOption endpoints;

        @Override
        public Integer call() {
            String holder = clientId != null ? clientId : LeaseBoundCommand.defaultClientId();
            try (TenureClient client = endpoints.connect()) {
                long id;
                try {
                    id = client.grantDetachedLease(ttl, holder);
                } catch (IllegalArgumentException e) {
                    throw new ParameterException(spec.commandLine(), "Invalid value for option '"
                            + (e.getMessage().startsWith("client id") ? "--client-id" : "--ttl") + "': " + e.getMessage());
                }
                spec.commandLine().getOut().println(id);
                spec.commandLine().getOut().flush();
                spec.commandLine().getErr().println("tenure lease grant: lease " + id + " is not kept alive by this command;"
                        + " it ends " + Formats.millis(ttl.toMillis()) + " after the grant unless renewed or revoked");
                spec.commandLine().getErr().flush();
            }
            return TenureCli.EXIT_OK;
        }
    }

    @Command(name = "revoke", mixinStandardHelpOptions = true,
            description = "Revokes lease ID: its locks pass to their next waiters and its waits end.",
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:revoked", "1:no such lease (expired, revoked or never granted), or no member answered",
                "2:usage error"})
    static final class Revoke implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "ID", description = "The lease's id.")
        long id;

        @Mixin
        EndpointsOption endpoints;

        @Override
        public Integer call() {
            try (TenureClient client = endpoints.connect()) {
                client.revokeLease(id);
            }
            spec.commandLine().getOut().println("revoked lease " + id);
            spec.commandLine().getOut().flush();
            return TenureCli.EXIT_OK;
        }
    }

    @Command(name = "ttl", mixinStandardHelpOptions = true,
            description = {
                "Prints lease ID, read linearizably, one 'name: value' per line: lease, client_id, remaining (before "
                        + "the serving member could expire it, on its own clock), granted_ttl, the numbers of keys held "
                        + "and waited for, then one 'held:' line per key it holds and one 'waiting:' line per key it "
                        + "waits for."
            },
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:the lease exists", "1:no such lease (expired, revoked or never granted), or no member answered",
                "2:usage error"})
    static final class TimeToLive implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "ID", description = "The lease's id.")
        long id;

        @Mixin
        EndpointsOption endpoints;

        @Override
        public Integer call() {
            LeaseTimeToLiveResponse lease;
            try (TenureClient client = endpoints.connect()) {
                lease = client.leaseTimeToLive(id);
            }
            if (lease.getTtlMs() < 0) {
                spec.commandLine().getErr().println("tenure lease ttl: lease " + id
                        + " not found (expired, revoked or never granted)");
                spec.commandLine().getErr().flush();
                return TenureCli.EXIT_ERROR;
            }
            print(lease, spec.commandLine().getOut());
            return TenureCli.EXIT_OK;
        }

        static void print(LeaseTimeToLiveResponse lease, PrintWriter out) {
            out.println("lease: " + lease.getId());
            out.println("client_id: " + lease.getClientId());
            out.println("remaining: " + Formats.millis(lease.getTtlMs()));
            out.println("granted_ttl: " + Formats.millis(lease.getGrantedTtlMs()));
            out.println("keys_held: " + lease.getKeysCount());
            out.println("keys_waiting: " + lease.getWaitingCount());
            lease.getKeysList().forEach(key -> out.println("held: " + key));
            lease.getWaitingList().forEach(key -> out.println("waiting: " + key));
            out.flush();
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "Lists the live leases in id order, read linearizably: one line each under a header, with the "
                    + "id, client id, granted TTL, remaining TTL on the serving member's clock ('unknown' right after it "
                    + "restarted), and the numbers of locks held and waited for.",
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:success", "1:no member answered", "2:usage error"})
    static final class ListLeases implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        EndpointsOption endpoints;

        @Override
        public Integer call() {
            List<LeaseSummary> leases;
            try (TenureClient client = endpoints.connect()) {
                leases = client.leases();
            }
            Table table = new Table(">ID", "CLIENT", ">TTL", ">REMAINING", ">HELD", ">WAITING");
            for (LeaseSummary lease : leases) {
                table.row(lease.getId(), lease.getClientId(), Formats.millis(lease.getTtlMs()),
                        Formats.millis(lease.getRemainingMs()), lease.getHeld(), lease.getWaiting());
            }
            table.print(spec.commandLine().getOut());
            return TenureCli.EXIT_OK;
        }
    }
}

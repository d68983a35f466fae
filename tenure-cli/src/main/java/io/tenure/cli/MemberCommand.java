package io.tenure.cli;

import io.tenure.client.TenureClient;
import io.tenure.proto.v1.Member;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code tenure member list|add|remove}: the cluster's membership, changed at run time. */
@Command(name = "member", mixinStandardHelpOptions = true,
        description = {
            "Lists the cluster's members, or changes them at run time through a Raft configuration change.",
            "Each member prints as one line: name, id, Raft peer address, client endpoint ('-' until the member "
                    + "has announced it), and 'leader' for the leader. Any member can serve these commands."
        },
        subcommands = {MemberCommand.ListMembers.class, MemberCommand.Add.class, MemberCommand.Remove.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:success",
            "1:the cluster refused the change (the server's message says why: the member exists, is unknown, or is "
                    + "the last voting member) or no member answered",
            "2:usage error"
        })
final class MemberCommand {

    /** One line per member: name, id, peer address, client endpoint, leader marker; columns aligned. */
    static void print(List<Member> members, PrintWriter out) {
        int nameWidth = 1;
        int idWidth = 1;
        int peerWidth = 1;
        int endpointWidth = 1;
        for (Member member : members) {
            nameWidth = Math.max(nameWidth, member.getName().length());
            idWidth = Math.max(idWidth, Long.toUnsignedString(member.getId()).length());
            peerWidth = Math.max(peerWidth, orDash(member.getPeerAddress()).length());
            endpointWidth = Math.max(endpointWidth, orDash(member.getClientEndpoint()).length());
        }
        String format = "%-" + nameWidth + "s  %" + idWidth + "s  %-" + peerWidth + "s  %-" + endpointWidth + "s%s%n";
        for (Member member : members) {
            String line = String.format(format, member.getName(), Long.toUnsignedString(member.getId()),
                    orDash(member.getPeerAddress()), orDash(member.getClientEndpoint()),
                    member.getLeader() ? "  leader" : "");
            // No trailing blanks on lines without the marker.
            out.print(line.stripTrailing() + System.lineSeparator());
        }
        out.flush();
    }

    private static String orDash(String value) {
        return value == null || value.isEmpty() ? "-" : value;
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "Prints the members, one line each: name, id, peer address, client endpoint, leader marker.",
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:success", "1:no member answered", "2:usage error"})
    static final class ListMembers implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        EndpointsOption endpoints;

        @Override
        public Integer call() {
            try (TenureClient client = endpoints.connect()) {
                print(client.members(), spec.commandLine().getOut());
            }
            return TenureCli.EXIT_OK;
        }
    }

    @Command(name = "add", mixinStandardHelpOptions = true,
            description = {
                "Adds member NAME, whose Raft (peer) port is at PEER_ADDRESS, as a voting member, and prints the "
                        + "members after the change.",
                "Start it first: 'tenure server --join --id NAME --peers ...' with a --peers list that includes it. "
                        + "The leader brings it up to date (by snapshot if needed) before it votes; for a long log, "
                        + "raise --request-timeout to match."
            },
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {
                "0:added",
                "1:refused (a member with that name or peer address exists, or the input was invalid) or no member answered",
                "2:usage error"
            })
    static final class Add implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "NAME", description = "The new member's name (its --id).")
        String name;

        @Parameters(index = "1", paramLabel = "PEER_ADDRESS", description = "HOST:PORT of its Raft peer port.")
        String peerAddress;

        @Mixin
        EndpointsOption endpoints;

        @Override
        public Integer call() {
            String problem = addressProblem(peerAddress);
            if (problem != null) {
                throw new ParameterException(spec.commandLine(),
                        "Invalid value for positional parameter PEER_ADDRESS: '" + peerAddress + "' " + problem);
            }
            try (TenureClient client = endpoints.connect()) {
                print(client.addMember(name, peerAddress), spec.commandLine().getOut());
            }
            return TenureCli.EXIT_OK;
        }
    }

    @Command(name = "remove", mixinStandardHelpOptions = true,
            description = "Removes member NAME through a Raft configuration change and prints the members after it. "
                    + "The removed member stops taking part; stop its process afterwards.",
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {
                "0:removed",
                "1:refused (no member has that name, or it is the last voting member) or no member answered",
                "2:usage error"
            })
    static final class Remove implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "NAME", description = "The member to remove.")
        String name;

        @Mixin
        EndpointsOption endpoints;

        @Override
        public Integer call() {
            try (TenureClient client = endpoints.connect()) {
                print(client.removeMember(name), spec.commandLine().getOut());
            }
            return TenureCli.EXIT_OK;
        }
    }

    /** Why {@code address} is not {@code host:port}, or null when it is. */
    static String addressProblem(String address) {
        int colon = address.lastIndexOf(':');
        if (colon <= 0 || colon == address.length() - 1) {
            return "is not HOST:PORT";
        }
        try {
            int port = Integer.parseInt(address.substring(colon + 1));
            return port >= 1 && port <= 65535 ? null : "has a port outside 1-65535";
        } catch (NumberFormatException e) {
            return "has a non-numeric port";
        }
    }
}

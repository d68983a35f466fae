package io.tenure.cli;

import io.tenure.client.TenureClient;
import io.tenure.proto.v1.Member;
import io.tenure.proto.v1.StatusResponse;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code tenure status}: one member's view of the cluster. */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "Prints the serving member's view of the cluster, one 'name: value' per line.")
final class StatusCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    EndpointsOption endpoints;

    @Override
    public Integer call() {
        try (TenureClient client = endpoints.connect()) {
            print(client.status(), spec.commandLine().getOut());
        }
        return TenureCli.EXIT_OK;
    }

    static void print(StatusResponse status, PrintWriter out) {
        out.println("member_name: " + status.getMemberName());
        out.println("member_id: " + Long.toUnsignedString(status.getMemberId()));
        out.println("cluster_id: " + Long.toUnsignedString(status.getClusterId()));
        out.println("leader: " + status.getLeader());
        out.println("leader_endpoint: " + status.getLeaderEndpoint());
        out.println("raft_term: " + Long.toUnsignedString(status.getRaftTerm()));
        out.println("revision: " + status.getRevision());
        out.println("applied_index: " + status.getAppliedIndex());
        out.println("commit_index: " + status.getCommitIndex());
        out.println("version: " + status.getVersion());
        out.println("raft_engine: " + status.getRaftEngine());
        for (Member member : status.getMembersList()) {
            out.println("member: " + member.getName() + " id=" + Long.toUnsignedString(member.getId())
                    + " peer=" + member.getPeerAddress() + " client=" + member.getClientEndpoint()
                    + (member.getLeader() ? " leader" : ""));
        }
        out.flush();
    }
}

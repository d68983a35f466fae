package io.tenure.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.tenure.proto.v1.ClusterServiceGrpc;
import io.tenure.proto.v1.Member;
import io.tenure.proto.v1.MemberAddRequest;
import io.tenure.proto.v1.MemberListRequest;
import io.tenure.proto.v1.MemberListResponse;
import io.tenure.proto.v1.MemberRemoveRequest;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code tenure member list|add|remove} against a ClusterService of the test's own, over real gRPC. */
class MemberCommandTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private final List<Member> members = new ArrayList<>();
    private Server server;
    private String endpoint;

    @BeforeEach
    void startServer() throws IOException {
        members.add(Member.newBuilder().setName("n1").setId(1234567890123L).setPeerAddress("127.0.0.1:7071")
                .setClientEndpoint("127.0.0.1:7070").setLeader(true).build());
        members.add(Member.newBuilder().setName("n2").setId(42).setPeerAddress("127.0.0.1:7171")
                .setClientEndpoint("127.0.0.1:7170").build());
        server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
                .addService(new FakeClusterService()).build().start();
        endpoint = "127.0.0.1:" + server.getPort();
    }

    @AfterEach
    void stopServer() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    private int run(String... args) {
        out.getBuffer().setLength(0);
        err.getBuffer().setLength(0);
        CommandLine commandLine = TenureCli.commandLine();
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        return commandLine.execute(args);
    }

    @Test
    void listPrintsOneAlignedLinePerMemberWithTheLeaderMarked() {
        assertThat(run("member", "list", "--endpoints", endpoint)).isZero();

        assertThat(out.toString().lines()).containsExactly(
                "n1  1234567890123  127.0.0.1:7071  127.0.0.1:7070  leader",
                "n2             42  127.0.0.1:7171  127.0.0.1:7170");
        assertThat(err.toString()).isEmpty();
    }

    @Test
    void addPrintsTheNewMembershipAndAMemberWithoutEndpointShowsADash() {
        assertThat(run("member", "add", "n3", "127.0.0.1:7271", "--endpoints", endpoint)).isZero();

        assertThat(out.toString().lines()).containsExactly(
                "n1  1234567890123  127.0.0.1:7071  127.0.0.1:7070  leader",
                "n2             42  127.0.0.1:7171  127.0.0.1:7170",
                "n3              3  127.0.0.1:7271  -");
    }

    @Test
    void removePrintsTheRemainingMembers() {
        assertThat(run("member", "remove", "n2", "--endpoints", endpoint)).isZero();

        assertThat(out.toString().lines()).containsExactly("n1  1234567890123  127.0.0.1:7071  127.0.0.1:7070  leader");
    }

    @Test
    void refusalsPrintTheServersMessageAndExit1() {
        assertThat(run("member", "add", "n2", "127.0.0.1:7999", "--endpoints", endpoint)).isEqualTo(1);
        assertThat(err.toString()).contains("tenure member add: ").contains("member 'n2' already exists");
        assertThat(out.toString()).isEmpty();

        assertThat(run("member", "remove", "n9", "--endpoints", endpoint)).isEqualTo(1);
        assertThat(err.toString()).contains("tenure member remove: ").contains("no member named 'n9'");

        assertThat(run("member", "remove", "n2", "--endpoints", endpoint)).isZero();
        assertThat(run("member", "remove", "n1", "--endpoints", endpoint)).isEqualTo(1);
        assertThat(err.toString()).contains("'n1' is the last voting member");
    }

    @Test
    void anUnreachableClusterExits1() {
        assertThat(run("member", "list", "--endpoints", "127.0.0.1:1", "--request-timeout", "300ms")).isEqualTo(1);
        assertThat(err.toString()).contains("tenure member list: ").contains("127.0.0.1:1").contains("unavailable");
    }

    @Test
    void badArgumentsAreUsageErrors() {
        assertThat(run("member")).isEqualTo(2);
        assertThat(err.toString()).contains("subcommand");

        assertThat(run("member", "add", "n3")).isEqualTo(2);
        assertThat(err.toString()).contains("PEER_ADDRESS");

        assertThat(run("member", "add", "n3", "nowhere", "--endpoints", endpoint)).isEqualTo(2);
        assertThat(err.toString()).contains("PEER_ADDRESS").contains("'nowhere' is not HOST:PORT");

        assertThat(run("member", "add", "n3", "127.0.0.1:99999", "--endpoints", endpoint)).isEqualTo(2);
        assertThat(err.toString()).contains("outside 1-65535");

        assertThat(run("member", "remove")).isEqualTo(2);
        assertThat(run("member", "list", "--endpoints", "nonsense")).isEqualTo(2);
        assertThat(err.toString()).contains("--endpoints");
        assertThat(run("member", "list", "--request-timeout", "0")).isEqualTo(2);
        assertThat(err.toString()).contains("--request-timeout");
        assertThat(members).hasSize(2);
    }

    @Test
    void helpDescribesTheSubcommandsAndExitCodes() {
        assertThat(run("member", "--help")).isZero();
        assertThat(out.toString()).contains("list", "add", "remove", "Exit codes", "last voting member");

        assertThat(run("member", "add", "--help")).isZero();
        assertThat(out.toString()).contains("NAME", "PEER_ADDRESS", "--join", "--endpoints", "--request-timeout", "Exit codes");
    }

    /** Refuses like the real one: ALREADY_EXISTS, NOT_FOUND, FAILED_PRECONDITION. */
    private final class FakeClusterService extends ClusterServiceGrpc.ClusterServiceImplBase {
        @Override
        public synchronized void memberList(MemberListRequest request, StreamObserver<MemberListResponse> responses) {
            answer(responses);
        }

        @Override
        public synchronized void memberAdd(MemberAddRequest request, StreamObserver<MemberListResponse> responses) {
            if (members.stream().anyMatch(m -> m.getName().equals(request.getName()))) {
                responses.onError(Status.ALREADY_EXISTS.withDescription("member '" + request.getName() + "' already exists")
                        .asRuntimeException());
                return;
            }
            members.add(Member.newBuilder().setName(request.getName()).setId(members.size() + 1L)
                    .setPeerAddress(request.getPeerAddress()).build());
            answer(responses);
        }

        @Override
        public synchronized void memberRemove(MemberRemoveRequest request, StreamObserver<MemberListResponse> responses) {
            if (members.stream().noneMatch(m -> m.getName().equals(request.getName()))) {
                responses.onError(Status.NOT_FOUND.withDescription("no member named '" + request.getName() + "'")
                        .asRuntimeException());
                return;
            }
            if (members.size() == 1) {
                responses.onError(Status.FAILED_PRECONDITION.withDescription("member '" + request.getName()
                        + "' is the last voting member").asRuntimeException());
                return;
            }
            members.removeIf(m -> m.getName().equals(request.getName()));
            answer(responses);
        }

        private void answer(StreamObserver<MemberListResponse> responses) {
            responses.onNext(MemberListResponse.newBuilder().addAllMembers(members).build());
            responses.onCompleted();
        }
    }
}

package io.tenure.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.tenure.proto.v1.Member;
import io.tenure.proto.v1.MemberAddRequest;
import io.tenure.proto.v1.MemberRemoveRequest;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Cluster administration through the client: list, add, remove, and how refusals arrive. */
class MembershipTest {
    private final InProcessMembers members = new InProcessMembers(2);
    private final ScriptedClusterService first = members.cluster(0);
    private final ScriptedClusterService second = members.cluster(1);
    private final TenureClient client = members.client();

    @AfterEach
    void tearDown() {
        members.close();
    }

    @Test
    void membersListsNameIdPeerAddressEndpointAndLeader() {
        List<Member> list = client.members();

        assertThat(list).extracting(Member::getName).containsExactly("n1", "n2");
        assertThat(list.get(0).getLeader()).isTrue();
        assertThat(list.get(1).getLeader()).isFalse();
        assertThat(list.get(1).getPeerAddress()).isEqualTo("127.0.0.1:7171");
        assertThat(list.get(1).getId()).isEqualTo(2);
    }

    @Test
    void addAndRemoveSendTheirArgumentsAndReturnTheNewMembership() throws Exception {
        List<Member> added = client.addMember("n3", "127.0.0.1:7271");

        assertThat(added).extracting(Member::getName).containsExactly("n1", "n2", "n3");
        assertThat(first.requests.poll(5, TimeUnit.SECONDS)).isEqualTo(
                MemberAddRequest.newBuilder().setName("n3").setPeerAddress("127.0.0.1:7271").build());

        List<Member> removed = client.removeMember("n1");

        assertThat(removed).extracting(Member::getName).containsExactly("n2", "n3");
        assertThat(first.requests.poll(5, TimeUnit.SECONDS)).isEqualTo(MemberRemoveRequest.newBuilder().setName("n1").build());
    }

    @Test
    void refusalsArriveAsTypedExceptionsWithTheServersText() {
        assertThatThrownBy(() -> client.addMember("n2", "127.0.0.1:9999"))
                .isInstanceOf(AlreadyExistsException.class).hasMessageContaining("'n2'").hasMessageContaining("already exists");
        assertThatThrownBy(() -> client.removeMember("n9"))
                .isExactlyInstanceOf(NotFoundException.class).hasMessageContaining("no member named 'n9'");
        client.removeMember("n2");
        assertThatThrownBy(() -> client.removeMember("n1"))
                .isExactlyInstanceOf(FailedPreconditionException.class).hasMessageContaining("last voting member");
        first.failure = Status.INVALID_ARGUMENT.withDescription("peer address 'x' is not host:port");
        assertThatThrownBy(() -> client.addMember("n3", "x"))
                .isInstanceOf(InvalidArgumentException.class).hasMessage("peer address 'x' is not host:port");
    }

    @Test
    void aChangeRetriedOnAnotherMemberAfterItsAnswerWasLostSucceeds() {
        // n1 makes the change and dies before answering; n2 finds it made.
        first.answerLost = Status.UNAVAILABLE.withDescription("connection reset");

        assertThat(client.addMember("n3", "127.0.0.1:7271")).extracting(Member::getName).containsExactly("n1", "n2", "n3");
        assertThat(client.removeMember("n3")).extracting(Member::getName).containsExactly("n1", "n2");
    }

    @Test
    void aRetryDoesNotHideARealConflict() {
        first.failure = Status.UNAVAILABLE.withDescription("not ready");

        // n2 refuses: the address is n1's. The member list does not show n3 there, so it is an error.
        assertThatThrownBy(() -> client.addMember("n3", "127.0.0.1:7071"))
                .isInstanceOf(AlreadyExistsException.class).hasMessageContaining("'n1'");
    }

    @Test
    void membershipCallsFailOverLikeEveryOther() {
        first.failure = Status.UNAVAILABLE.withDescription("not ready");

        assertThat(client.members()).hasSize(2);
        assertThat(second.requests).hasSize(1);
    }
}

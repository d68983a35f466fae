package io.tenure.it;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.tenure.proto.v1.Member;
import io.tenure.proto.v1.MemberAddRequest;
import io.tenure.proto.v1.MemberListRequest;
import io.tenure.proto.v1.MemberListResponse;
import io.tenure.proto.v1.MemberRemoveRequest;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.testing.Await;
import io.tenure.testing.MemberProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Membership changes at run time through ClusterService while a client keeps doing lock/unlock
 * cycles: a 4th member joins ({@code --join}, then MemberAdd), then an original member (the
 * leader, the hardest case) is removed (MemberRemove). No cycle fails beyond UNAVAILABLE retries,
 * and every member's list shows each change. Bad input gets its gRPC status and changes nothing.
 *
 * <p>Runs the same in CI and in the long form ({@code mvn -B -ntp test -pl tenure-it -Pfaults-long}).
 */
@ExtendWith(ItLogs.class)
class MembershipTest {
    static final int CYCLES_PER_STEP = ItScale.of("membershipCycles", 30, 300);
    static final Duration STEP_LIMIT = Duration.ofSeconds(90);

    @TempDir
    Path work;

    @Test
    @Timeout(value = 20, unit = TimeUnit.MINUTES)
    void addingAFourthMemberAndRemovingAnOriginalOneKeepsTheClusterServing() throws Exception {
        try (Cluster cluster = Cluster.start(work, 3)) {
            MemberProcess joining = cluster.prepareJoin();
            List<String> endpoints = new java.util.ArrayList<>(cluster.endpoints());
            endpoints.add(joining.endpoint()); // down until it starts: the client fails over past it
            try (LockCycler cycler = new LockCycler(endpoints, "members")) {
                cycler.start(1);
                cycler.awaitMoreCycles(CYCLES_PER_STEP, STEP_LIMIT, "before any change");

                // Add n4: start it with --join and the new peer list, then MemberAdd on a follower
                // (which must pass it to the leader).
                joining.launch();
                joining.awaitServing(Cluster.START_LIMIT, false);
                String follower = cluster.followers().get(0);
                MemberListResponse afterAdd = cluster.member(follower).admin()
                        .memberAdd(MemberAddRequest.newBuilder().setName(joining.name()).setPeerAddress(joining.peerAddress()).build());
                assertThat(names(afterAdd)).as("MemberAdd's answer").containsExactlyInAnyOrder("n1", "n2", "n3", joining.name());
                cluster.added(joining.name());
                awaitMemberLists(cluster, Set.of("n1", "n2", "n3", joining.name()), Map.of(joining.name(), joining.peerAddress()));
                cycler.awaitMoreCycles(CYCLES_PER_STEP, STEP_LIMIT, "after adding " + joining.name());
                // The new member serves and has caught up.
                awaitSameAppliedIndex(cluster, joining.name());

                // Remove the leader, through another member.
                String removed = cluster.leader();
                String via = cluster.live().stream().filter(n -> !n.equals(removed)).findFirst().orElseThrow();
                MemberListResponse afterRemove = cluster.member(via).admin()
                        .memberRemove(MemberRemoveRequest.newBuilder().setName(removed).build());
                assertThat(names(afterRemove)).as("MemberRemove's answer").doesNotContain(removed).hasSize(3);
                cluster.removed(removed);
                Set<String> remaining = Set.copyOf(cluster.names());
                String newLeader = cluster.awaitNewLeader(removed, Cluster.ELECTION_LIMIT);
                assertThat(remaining).contains(newLeader);
                awaitMemberLists(cluster, remaining, Map.of());
                cluster.stop(removed); // an operator stops the removed member
                cycler.awaitMoreCycles(CYCLES_PER_STEP, STEP_LIMIT, "after removing " + removed);

                // Bad input: clear statuses, and the configuration stays as it is.
                MemberProcess any = cluster.member(newLeader);
                String existing = remaining.stream().filter(n -> !n.equals(newLeader)).findFirst().orElseThrow();
                assertStatus(() -> any.admin().memberAdd(MemberAddRequest.newBuilder().setName(existing)
                        .setPeerAddress(cluster.member(existing).peerAddress()).build()), Status.Code.ALREADY_EXISTS, existing);
                assertStatus(() -> any.admin().memberAdd(MemberAddRequest.newBuilder().setName("n9")
                        .setPeerAddress(cluster.member(existing).peerAddress()).build()), Status.Code.ALREADY_EXISTS,
                        cluster.member(existing).peerAddress());
                assertStatus(() -> any.admin().memberRemove(MemberRemoveRequest.newBuilder().setName("nobody").build()),
                        Status.Code.NOT_FOUND, "nobody");
                assertStatus(() -> any.admin().memberRemove(MemberRemoveRequest.newBuilder().setName(removed).build()),
                        Status.Code.NOT_FOUND, removed);
                awaitMemberLists(cluster, remaining, Map.of());

                cycler.awaitMoreCycles(CYCLES_PER_STEP, STEP_LIMIT, "at the end");
                cycler.close();
                System.out.printf("MembershipTest: added %s, removed %s (leader then %s); %d cycles, %d UNAVAILABLE retried,"
                        + " longest gap between cycles %d ms%n", joining.name(), removed, newLeader, cycler.cycles(),
                        cycler.unavailable(), cycler.maxGapMillis());
                assertThat(cycler.failures()).as("failed lock/unlock cycles").isEmpty();
            }
        }
    }

    private static List<String> names(MemberListResponse list) {
        return list.getMembersList().stream().map(Member::getName).collect(Collectors.toList());
    }

    /** Waits until every live member's MemberList and Status name exactly {@code expected}, with the given peer addresses. */
    private static void awaitMemberLists(Cluster cluster, Set<String> expected, Map<String, String> addresses) {
        Map<String, Object> seen = new TreeMap<>();
        Await.PROCESSES.until(() -> "every member lists " + expected + " (seen " + seen + ")", STEP_LIMIT, () -> {
            for (String name : cluster.live()) {
                try {
                    MemberListResponse list = cluster.member(name).admin().withDeadlineAfter(2, TimeUnit.SECONDS)
                            .memberList(MemberListRequest.getDefaultInstance());
                    seen.put(name, names(list));
                    if (!Set.copyOf(names(list)).equals(expected) || names(list).size() != expected.size()) {
                        return false;
                    }
                    for (Member member : list.getMembersList()) {
                        String address = addresses.get(member.getName());
                        if (address != null && !address.equals(member.getPeerAddress())) {
                            seen.put(name, list.getMembersList());
                            return false;
                        }
                    }
                    StatusResponse status = cluster.member(name).status(Duration.ofSeconds(2));
                    Set<String> statusMembers = status.getMembersList().stream().map(Member::getName).collect(Collectors.toSet());
                    if (!statusMembers.equals(expected)) {
                        seen.put(name + " Status", statusMembers);
                        return false;
                    }
                } catch (StatusRuntimeException e) {
                    seen.put(name, e.getStatus());
                    return false;
                }
            }
            return true;
        });
    }

    private static void awaitSameAppliedIndex(Cluster cluster, String member) {
        Await.PROCESSES.until(member + " applies what the leader committed", STEP_LIMIT, () -> {
            StatusResponse leader = cluster.statusOrNull(cluster.leader());
            StatusResponse mine = cluster.statusOrNull(member);
            return leader != null && mine != null && !mine.getLeader().isEmpty()
                    && mine.getAppliedIndex() >= leader.getCommitIndex();
        });
    }

    private static void assertStatus(Runnable call, Status.Code code, String named) {
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, call::run);
        assertThat(e).as("the call fails with " + code).isNotNull();
        assertThat(e.getStatus().getCode()).as(e.getStatus().toString()).isEqualTo(code);
        assertThat(e.getStatus().getDescription()).as("the message names " + named).contains(named);
    }
}

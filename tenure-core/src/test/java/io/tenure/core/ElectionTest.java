package io.tenure.core;

import io.tenure.core.election.ElectionCampaign;
import io.tenure.core.election.ElectionProclaim;
import io.tenure.core.election.ElectionResign;
import io.tenure.core.election.ElectionResult.Candidate;
import io.tenure.core.election.ElectionResult.Elected;
import io.tenure.core.election.ElectionResult.Led;
import io.tenure.core.election.ElectionResult.Proclaimed;
import io.tenure.core.election.ElectionResult.Resigned;
import io.tenure.core.election.ElectionTable;
import io.tenure.core.election.ElectionView;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Effect;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.Result.Rejected;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static io.tenure.core.Replica.expect;
import static org.assertj.core.api.Assertions.assertThat;

/** Leader elections, one rule per scenario; {@link ElectionModelTest} explores their combinations. */
class ElectionTest {
    private final Replica replica = new Replica();

    @BeforeEach
    void leases() {
        for (long id = 1; id <= 4; id++) {
            replica.grantLease(id);
        }
    }

    private Applied campaign(String name, long lease, String value) {
        return replica.apply(new ElectionCampaign(name, lease, value.getBytes(StandardCharsets.UTF_8), true, 0));
    }

    private ElectionView view(String name) {
        return replica.state.primitive(ElectionTable.class).election(name);
    }

    @Test
    void theFirstCandidateLeadsAndObserversSeeEveryChangeIncludingNoLeader() {
        Applied first = campaign("leader", 1, "n1:9000");
        Elected elected = expect(first.result(), Elected.class);
        Candidate second = expect(campaign("leader", 2, "n2:9000").result(), Candidate.class);
        assertThat(second.ahead()).isZero();
        assertThat(second.leader()).isEqualTo(Replica.clientOf(1));

        Applied proclaim = replica.apply(new ElectionProclaim("leader", 1, elected.fencingToken(), "n1:9001".getBytes(StandardCharsets.UTF_8)));
        Proclaimed proclaimed = expect(proclaim.result(), Proclaimed.class);
        assertThat(proclaimed.fencingToken()).as("no new election").isEqualTo(elected.fencingToken());
        assertThat(new String(view("leader").value(), StandardCharsets.UTF_8)).isEqualTo("n1:9001");

        Applied resign = replica.apply(new ElectionResign("leader", 1, elected.fencingToken()));
        long next = expect(resign.result(), Resigned.class).nextFencingToken();
        assertThat(next).isGreaterThan(proclaimed.revision());
        assertThat(Replica.effects(resign, Effect.Wake.class)).singleElement()
                .satisfies(w -> assertThat(((Elected) w.result()).leaseId()).isEqualTo(2));
        Applied last = replica.apply(new ElectionResign("leader", 2, next));

        List<WatchEvent> events = new java.util.ArrayList<>();
        events.addAll(Replica.watched(first));
        events.addAll(Replica.watched(proclaim));
        events.addAll(Replica.watched(resign));
        events.addAll(Replica.watched(last));
        assertThat(events).extracting(WatchEvent::type).containsExactly(WatchEvent.Type.PUT, WatchEvent.Type.PUT, WatchEvent.Type.PUT,
                WatchEvent.Type.DELETE);
        assertThat(events).extracting(e -> e.type() == WatchEvent.Type.DELETE ? "" : new String(e.kv().metadata(), StandardCharsets.UTF_8))
                .containsExactly("n1:9000", "n1:9001", "n2:9000", "");
        assertThat(events.get(1).kv().createRevision()).as("the leader's token").isEqualTo(elected.fencingToken());
        assertThat(events.get(1).kv().modRevision()).isEqualTo(proclaimed.revision());
        assertThat(events.get(2).kv().createRevision()).isEqualTo(next);
        assertThat(view("leader")).isNull();
    }

    @Test
    void onlyTheLeaderWithItsTokenProclaimsOrResigns() {
        long token = expect(campaign("leader", 1, "a").result(), Elected.class).fencingToken();
        campaign("leader", 2, "b");

        Rejected stranger = expect(replica.run(new ElectionProclaim("leader", 2, token, new byte[0])), Rejected.class);
        Rejected stale = expect(replica.run(new ElectionResign("leader", 1, token - 1)), Rejected.class);
        Rejected gone = expect(replica.run(new ElectionResign("leader", 99, token)), Rejected.class);

        assertThat(stranger.code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(stranger.message()).contains("does not lead election 'leader'");
        assertThat(stale.message()).contains("stale");
        assertThat(gone.code()).isEqualTo(Code.NOT_FOUND);
        assertThat(view("leader").leaderLeaseId()).isEqualTo(1);
    }

    @Test
    void aLeaderWhoseLeaseEndsHandsOverAndACampaignThatDoesNotWaitIsTold() {
        campaign("leader", 1, "a");
        campaign("leader", 2, "b");
        Led led = expect(replica.run(new ElectionCampaign("leader", 3, new byte[0], false, 0)), Led.class);
        assertThat(led.candidates()).isEqualTo(1);

        replica.revoke(1);

        assertThat(view("leader").leaderLeaseId()).isEqualTo(2);
        assertThat(new String(view("leader").value(), StandardCharsets.UTF_8)).isEqualTo("b");
    }

    @Test
    void anElectionAndALockNeverShareAName() {
        campaign("shared/name", 1, "a");
        Rejected asLock = expect(replica.run(new LockAcquire("shared/name", 2, null, true)), Rejected.class);
        replica.run(new LockAcquire("jobs/x", 2, null, true));
        Rejected asElection = expect(campaign("jobs/x", 3, "c").result(), Rejected.class);

        assertThat(asLock.message()).contains("'shared/name' is an election, not a lock");
        assertThat(asElection.message()).contains("'jobs/x' is a lock, not an election");
    }
}

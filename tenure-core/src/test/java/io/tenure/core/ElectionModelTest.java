package io.tenure.core;

import io.tenure.core.election.ElectionCampaign;
import io.tenure.core.election.ElectionCancel;
import io.tenure.core.election.ElectionProclaim;
import io.tenure.core.election.ElectionResign;
import io.tenure.core.election.ElectionResult;
import io.tenure.core.election.ElectionTable;
import io.tenure.core.election.ElectionView;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leader elections against a plain reference model, over thousands of seeded command sequences
 * (campaigns that wait or not, proclaims and resigns with right and stale tokens, withdrawals,
 * leases revoked while leading and campaigning). At every applied index: the same leader, value
 * and candidates (in order) as the model, one leader per election, no leader or candidate on an
 * ended lease, each new leader's token above every token the election had before and never
 * shared by two leaders, and every 25 commands a snapshot that restores to byte-identical state
 * ({@link ModelRun}).
 */
class ElectionModelTest {
    private static final String[] NAMES = {"leader/a", "leader/b"};
    private static final long[] LEASES = {1, 2, 3, 4, 5};

    @Test
    void everyAppliedIndexMatchesTheReferenceModel() {
        ModelRun.run(2_000, 120, LEASES, Model::new);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Elections as plain maps, with the rules written out once more, simply. */
    private static final class Model extends ModelRun.Model {
        final TreeMap<String, Race> races = new TreeMap<>();
        /** The leader of each token seen. */
        final Map<Long, Long> leaderOfToken = new HashMap<>();
        /** Resignations already done, by token: a retry succeeds again. */
        final Map<Long, String> resigned = new HashMap<>();

        static final class Race {
            long leader;
            String value;
            /** The leader's token, learnt from the state it was checked against. */
            long token;
            final LinkedHashMap<Long, String> candidates = new LinkedHashMap<>();

            /** The first candidate leads; false when there is none. */
            boolean next() {
                if (candidates.isEmpty()) {
                    return false;
                }
                Map.Entry<Long, String> head = candidates.entrySet().iterator().next();
                candidates.remove(head.getKey());
                leader = head.getKey();
                value = head.getValue();
                return true;
            }
        }

        @Override
        void leaseEnded(long leaseId) {
            for (String name : List.copyOf(races.keySet())) {
                Race race = races.get(name);
                if (race.leader == leaseId && !race.next()) {
                    races.remove(name);
                }
            }
            for (Race race : races.values()) {
                race.candidates.remove(leaseId);
            }
        }

        @Override
        String outcome(Result result) {
            if (result instanceof ElectionResult.Elected e) {
                return e.again() ? "Elected again" : "Elected";
            }
            return super.outcome(result);
        }

        @Override
        Command next(Random random, Replica replica, int step) {
            String name = NAMES[random.nextInt(NAMES.length)];
            long lease = LEASES[random.nextInt(LEASES.length)];
            int dice = random.nextInt(100);
            Command churn = leaseChurn(dice, 3, lease);
            if (churn != null) {
                return churn;
            } else if (dice < 50) {
                return new ElectionCampaign(name, lease, bytes("v" + lease + "." + step), random.nextInt(4) != 0, 0);
            } else if (dice < 58) {
                return new ElectionCancel(name, lease, 0);
            }
            ElectionView view = replica.state.primitive(ElectionTable.class).election(name);
            long leader = view != null && random.nextInt(5) != 0 ? view.leaderLeaseId() : lease;
            long token = view != null ? view.fencingToken() + (random.nextInt(8) == 0 ? 1 : 0) : 1 + random.nextInt(1 << 20);
            return dice < 78 ? new ElectionProclaim(name, leader, token, bytes("p" + step)) : new ElectionResign(name, leader, token);
        }

        @Override
        void check(Replica replica, Applied applied, String context) {
            for (String name : NAMES) {
                ElectionView view = replica.state.primitive(ElectionTable.class).election(name);
                Race race = races.get(name);
                if (race == null) {
                    assertThat(view).as(context + " " + name + " has a leader").isNull();
                    continue;
                }
                assertThat(view).as(context + " " + name).isNotNull();
                assertThat(view.leaderLeaseId()).as(context + " leader of " + name).isEqualTo(race.leader);
                assertThat(new String(view.value(), StandardCharsets.UTF_8)).as(context + " value of " + name).isEqualTo(race.value);
                assertThat(view.candidates().stream().map(ElectionView.Candidate::leaseId).toList())
                        .as(context + " candidates of " + name).isEqualTo(List.copyOf(race.candidates.keySet()));
                assertThat(alive).as(context + " leader alive").contains(view.leaderLeaseId());
                view.candidates().forEach(c -> assertThat(alive).as(context + " candidate alive").contains(c.leaseId()));
                Long before = leaderOfToken.putIfAbsent(view.fencingToken(), view.leaderLeaseId());
                assertThat(before == null ? view.leaderLeaseId() : before).as(context + " one leader per token")
                        .isEqualTo(view.leaderLeaseId());
                checkNewTokens(name, List.of(view.fencingToken()), context);
                race.token = view.fencingToken();
            }
        }

        @Override
        String applyOwn(Command command) {
            if (command instanceof ElectionCampaign c) {
                if (!alive.contains(c.leaseId())) {
                    return "Rejected " + Code.NOT_FOUND;
                }
                Race race = races.get(c.key());
                if (race == null) {
                    race = new Race();
                    race.leader = c.leaseId();
                    race.value = new String(c.value(), StandardCharsets.UTF_8);
                    races.put(c.key(), race);
                    return "Elected";
                }
                if (race.leader == c.leaseId()) {
                    return "Elected again";
                }
                if (race.candidates.containsKey(c.leaseId())) {
                    return "Candidate";
                }
                if (!c.queue()) {
                    return "Led";
                }
                race.candidates.put(c.leaseId(), new String(c.value(), StandardCharsets.UTF_8));
                return "Candidate";
            }
            if (command instanceof ElectionCancel c) {
                Race race = races.get(c.key());
                if (race != null && race.leader == c.leaseId()) {
                    return "Elected again";
                }
                if (race != null) {
                    race.candidates.remove(c.leaseId());
                }
                return "Withdrawn";
            }
            if (command instanceof ElectionProclaim p) {
                Race race = races.get(p.key());
                if (race != null && race.leader == p.leaseId() && race.token == p.fencingToken()) {
                    race.value = new String(p.value(), StandardCharsets.UTF_8);
                    return "Proclaimed";
                }
                return "Rejected " + (alive.contains(p.leaseId()) ? Code.FAILED_PRECONDITION : Code.NOT_FOUND);
            }
            if (command instanceof ElectionResign r) {
                Race race = races.get(r.key());
                if (race != null && race.leader == r.leaseId() && race.token == r.fencingToken()) {
                    if (!race.next()) {
                        races.remove(r.key());
                    }
                    resigned.put(r.fencingToken(), r.key() + "/" + r.leaseId());
                    return "Resigned";
                }
                if ((r.key() + "/" + r.leaseId()).equals(resigned.get(r.fencingToken()))) {
                    return "Resigned";
                }
                return "Rejected " + (alive.contains(r.leaseId()) ? Code.FAILED_PRECONDITION : Code.NOT_FOUND);
            }
            throw new IllegalArgumentException("unexpected " + command);
        }
    }
}

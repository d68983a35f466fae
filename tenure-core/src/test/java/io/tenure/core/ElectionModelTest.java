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
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.kernel.LeaseRevoke;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leader elections against a plain reference model, over thousands of seeded command sequences
 * (campaigns that wait or not, proclaims and resigns with right and stale tokens, withdrawals,
 * leases revoked while leading and campaigning). At every applied index: the same leader, value
 * and candidates (in order) as the model, one leader per election, no leader or candidate on an
 * ended lease, each new leader's token above every token the election had before and never
 * shared by two leaders, and every 25 commands a snapshot that restores to byte-identical state.
 */
class ElectionModelTest {
    private static final String[] NAMES = {"leader/a", "leader/b"};
    private static final long[] LEASES = {1, 2, 3, 4, 5};
    private static final int SEQUENCES = 2_000;
    private static final int STEPS = 120;

    @Test
    void everyAppliedIndexMatchesTheReferenceModel() {
        for (long seed = 1; seed <= SEQUENCES; seed++) {
            run(seed);
        }
    }

    private static void run(long seed) {
        Random random = new Random(seed);
        Replica replica = new Replica();
        Model model = new Model();
        Map<String, Long> highestToken = new HashMap<>();
        Map<Long, Long> leaderOfToken = new HashMap<>();
        for (long lease : LEASES) {
            replica.grantLease(lease);
            model.alive.add(lease);
        }
        for (int step = 0; step < STEPS; step++) {
            Command command = next(random, replica, model, step);
            Applied applied = replica.apply(command);
            String expected = model.apply(command);
            String context = "seed " + seed + " step " + step + " " + Rendering.of(command);
            assertThat(outcome(applied.result())).as(context).isEqualTo(expected);
            for (String name : NAMES) {
                ElectionView view = replica.state.primitive(ElectionTable.class).election(name);
                Model.Race race = model.races.get(name);
                if (race == null) {
                    assertThat(view).as(context + " " + name + " has a leader").isNull();
                    continue;
                }
                assertThat(view).as(context + " " + name).isNotNull();
                assertThat(view.leaderLeaseId()).as(context + " leader of " + name).isEqualTo(race.leader);
                assertThat(new String(view.value(), StandardCharsets.UTF_8)).as(context + " value of " + name).isEqualTo(race.value);
                assertThat(view.candidates().stream().map(ElectionView.Candidate::leaseId).toList())
                        .as(context + " candidates of " + name).isEqualTo(List.copyOf(race.candidates.keySet()));
                assertThat(model.alive).as(context + " leader alive").contains(view.leaderLeaseId());
                view.candidates().forEach(c -> assertThat(model.alive).as(context + " candidate alive").contains(c.leaseId()));
                Long before = leaderOfToken.putIfAbsent(view.fencingToken(), view.leaderLeaseId());
                assertThat(before == null ? view.leaderLeaseId() : before).as(context + " one leader per token")
                        .isEqualTo(view.leaderLeaseId());
                if (race.token != view.fencingToken()) {
                    assertThat(view.fencingToken()).as(context + " a new leader's token").isGreaterThan(highestToken.getOrDefault(name, 0L));
                    race.token = view.fencingToken();
                }
                highestToken.merge(name, view.fencingToken(), Math::max);
            }
            if (step % 25 == 24) {
                byte[] snapshot = replica.snapshot();
                Replica restored = Replica.restore(snapshot);
                assertThat(restored.snapshot()).as(context + " snapshot round trip").isEqualTo(snapshot);
                assertThat(withoutEvents(restored.view())).isEqualTo(withoutEvents(replica.view()));
            }
        }
    }

    private static String withoutEvents(String view) {
        return view.substring(0, view.indexOf("\nhorizon="));
    }

    private static String outcome(Result result) {
        if (result instanceof Result.Rejected r) {
            return "Rejected " + r.code();
        }
        if (result instanceof ElectionResult.Elected e) {
            return e.again() ? "Elected again" : "Elected";
        }
        return result.getClass().getSimpleName();
    }

    private static Command next(Random random, Replica replica, Model model, int step) {
        String name = NAMES[random.nextInt(NAMES.length)];
        long lease = LEASES[random.nextInt(LEASES.length)];
        int dice = random.nextInt(100);
        if (dice < 3) {
            return new LeaseRevoke(lease);
        } else if (dice < 6) {
            return new LeaseGrant(lease, Replica.TTL_MILLIS, Replica.clientOf(lease));
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

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Elections as plain maps, with the rules written out once more, simply. */
    private static final class Model {
        final Set<Long> alive = new HashSet<>();
        final TreeMap<String, Race> races = new TreeMap<>();
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

        String apply(Command command) {
            if (command instanceof LeaseGrant g) {
                alive.add(g.leaseId());
                return "LeaseGranted";
            }
            if (command instanceof LeaseRevoke r) {
                if (!alive.remove(r.leaseId())) {
                    return "Rejected " + Code.NOT_FOUND;
                }
                for (String name : List.copyOf(races.keySet())) {
                    Race race = races.get(name);
                    if (race.leader == r.leaseId() && !race.next()) {
                        races.remove(name);
                    }
                }
                for (Race race : races.values()) {
                    race.candidates.remove(r.leaseId());
                }
                return "LeaseEnded";
            }
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

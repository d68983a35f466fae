package io.tenure.it.safety;

import io.tenure.client.AlreadyExistsException;
import io.tenure.client.NotFoundException;
import io.tenure.client.TenureClient;
import io.tenure.client.UnavailableException;
import io.tenure.it.Cluster;
import io.tenure.testing.MemberProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/** The faults that hit members: kills (F1-F3), leader pauses (F4), clock skew (F8), membership changes (F9). */
final class MemberFaults {
    private final Lab lab;
    private final Cluster cluster;

    MemberFaults(Lab lab) {
        this.lab = lab;
        this.cluster = lab.cluster;
    }

    /** F1: kill -9 the leader, twice; each restarts after 1-4 s down. */
    void killLeaderLoop() throws Exception {
        for (int i = 0; i < 2; i++) {
            String leader = cluster.leader();
            Duration down = lab.between(Duration.ofSeconds(1), Duration.ofSeconds(4));
            long killedAt = System.nanoTime();
            cluster.kill9(leader);
            lab.log.start(Fault.F1, leader, "kill -9 the leader; down for " + down.toMillis() + " ms", killedAt);
            String next = cluster.awaitNewLeader(leader, Cluster.ELECTION_LIMIT);
            long failover = Waits.millisSince(killedAt);
            Waits.untilTime(killedAt + down.toNanos());
            long restartAt = System.nanoTime();
            long servingAt = lab.relaunch(List.of(leader));
            lab.log.end(Fault.F1, leader, "restarted; " + next + " led " + failover + " ms after the kill; "
                    + leader + " served again " + Waits.millisSince(restartAt) + " ms after its restart", servingAt);
        }
    }

    /** F2: kill -9 one random member, restart it; then a majority at once (two of three), restart them. */
    void killRandom() throws Exception {
        killAndRestart(Fault.F2, List.of(lab.pick(cluster.names())), "a random member");
        List<String> shuffled = new ArrayList<>(cluster.names());
        Collections.shuffle(shuffled, lab.random);
        killAndRestart(Fault.F2, shuffled.subList(0, shuffled.size() / 2 + 1), "a majority");
    }

    /** F3: kill -9 every member, restart them all. */
    void killAll() throws Exception {
        killAndRestart(Fault.F3, cluster.names(), "every member");
    }

    private void killAndRestart(Fault fault, List<String> victims, String what) throws Exception {
        Duration down = lab.between(Duration.ofSeconds(1), Duration.ofSeconds(4));
        long killedAt = System.nanoTime();
        for (String victim : victims) {
            cluster.kill9(victim);
        }
        String target = String.join(",", victims);
        lab.log.start(fault, target, "kill -9 " + what + "; down for " + down.toMillis() + " ms", killedAt);
        Waits.untilTime(killedAt + down.toNanos());
        long restartAt = System.nanoTime();
        long servingAt = lab.relaunch(victims);
        long recovered = lab.awaitLeader(restartAt);
        lab.log.end(fault, target, "restarted, serving " + java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(servingAt - restartAt) + " ms after the restart; a leader agreed "
                + recovered + " ms after the restart", servingAt);
    }

    /**
     * F4: SIGSTOP the leader (a) for half an election timeout, (b) for between 3 election
     * timeouts and half the TTL, (c) for the TTL plus 1-3 s. Whatever it proposed before the pause
     * and sends after it must change nothing once it is deposed.
     */
    void pauseLeader() throws Exception {
        Duration et = lab.electionTimeout();
        Duration ttl = lab.ttl();
        pause("a (shorter than the election timeout)", et.dividedBy(2));
        pause("b (longer than the election timeout, shorter than the TTL)", lab.between(et.multipliedBy(3), ttl.dividedBy(2)));
        pause("c (longer than the TTL)", lab.between(ttl.plusSeconds(1), ttl.plusSeconds(3)));
    }

    private void pause(String variant, Duration length) throws Exception {
        String leader = cluster.leader();
        long pausedAt = System.nanoTime();
        lab.signalMember(leader, "STOP");
        lab.pausedMembers.add(leader);
        lab.log.start(Fault.F4, leader, "SIGSTOP the leader, variant " + variant + ", for " + length.toMillis() + " ms", pausedAt);
        Waits.untilTime(pausedAt + length.toNanos());
        long resumedAt = System.nanoTime();
        lab.signalMember(leader, "CONT");
        lab.pausedMembers.remove(leader);
        String after = cluster.awaitLeader(Cluster.ELECTION_LIMIT);
        lab.log.end(Fault.F4, leader, "SIGCONT after " + Waits.millisSince(pausedAt) + " ms; leader " + after
                + " agreed " + Waits.millisSince(resumedAt) + " ms after the resume", resumedAt);
    }

    /**
     * F8: restart a random member under libfaketime with its clocks offset by minutes to hours,
     * keep it so for 10-15 s of load, then restart it without. Leases use monotonic time only, and
     * intervals of the member's own clock, so this must change nothing.
     */
    void skewClock(Path library) throws Exception {
        String target = lab.pick(cluster.names());
        String offset = lab.pick(ClockSkew.OFFSETS);
        Duration hold = lab.between(Duration.ofSeconds(10), Duration.ofSeconds(15));
        MemberProcess member = cluster.member(target);
        long at = System.nanoTime();
        cluster.kill9(target);
        member.environment(ClockSkew.environment(library, offset));
        lab.skewedMembers.add(target);
        lab.relaunch(List.of(target));
        lab.log.start(Fault.F8, target, "kill -9, restarted under libfaketime FAKETIME=" + offset
                + " (wall clock and its own monotonic clock offset: its nanos are off the shared clock until the end) for "
                + hold.toMillis() + " ms", at);
        Waits.untilTime(at + hold.toNanos());
        long restartAt = System.nanoTime();
        cluster.kill9(target);
        member.environment(Map.of());
        lab.skewedMembers.remove(target);
        long servingAt = lab.relaunch(List.of(target));
        lab.log.end(Fault.F8, target, "kill -9, restarted with the true clock; serving "
                + Waits.millisSince(restartAt) + " ms after", servingAt);
    }

    /**
     * F9: a new member joins under load (started with {@code --join}, then MemberAdd), catches
     * up; then another member (the leader one time in three) is removed (MemberRemove) and
     * stopped. The cluster keeps its size; the clients reach the new member through the link
     * slot kept free for it.
     */
    void changeMembership() throws Exception {
        MemberProcess joining = cluster.prepareJoin();
        lab.everMembers.add(joining.name());
        lab.links.assign(joining.name(), joining.host(), joining.clientPort());
        long addAt = System.nanoTime();
        joining.launch();
        joining.awaitServing(Cluster.START_LIMIT, false);
        lab.log.start(Fault.F9, joining.name(), "MemberAdd " + joining.name() + " at " + joining.peerAddress(), addAt);
        admin(client -> client.addMember(joining.name(), joining.peerAddress()));
        cluster.added(joining.name());
        if (lab.network != null) {
            lab.network.joined(joining.name(), joining.peerAddress());
        }
        cluster.awaitCaughtUp(joining.name());
        lab.log.end(Fault.F9, joining.name(), "added; caught up " + Waits.millisSince(addAt) + " ms after its start", System.nanoTime());

        String leader = cluster.leader();
        List<String> candidates = cluster.names().stream().filter(n -> !n.equals(joining.name())).toList();
        String removed = lab.random.nextInt(3) == 0 ? leader : lab.pick(candidates.stream().filter(n -> !n.equals(leader)).toList());
        long removeAt = System.nanoTime();
        lab.log.start(Fault.F9, removed, "MemberRemove " + removed + (removed.equals(leader) ? " (the leader)" : ""), removeAt);
        admin(client -> client.removeMember(removed));
        cluster.removed(removed);
        cluster.stop(removed);
        lab.links.unassign(removed);
        long recovered = lab.awaitLeader(removeAt);
        lab.log.end(Fault.F9, removed, "removed and stopped; a leader agreed " + recovered + " ms after the remove", System.nanoTime());
    }

    interface AdminCall {
        void run(TenureClient client);
    }

    /**
     * An admin call through a client of the current members, retried while no leader answers. A
     * retry that finds the change already made (the first try was applied but its answer lost)
     * counts as done.
     */
    void admin(AdminCall call) {
        long deadline = System.nanoTime() + Cluster.ELECTION_LIMIT.toNanos();
        while (true) {
            try (TenureClient client = cluster.client(cluster.endpoints()).build()) {
                call.run(client);
                return;
            } catch (AlreadyExistsException | NotFoundException alreadyDone) {
                return;
            } catch (UnavailableException notNow) {
                if (System.nanoTime() - deadline > 0) {
                    throw notNow;
                }
            }
        }
    }
}

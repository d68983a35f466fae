package io.tenure.server.text;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.election.ElectionTable;
import io.tenure.core.election.ElectionView;
import io.tenure.core.lock.LockTable;
import io.tenure.core.lock.LockView;
import io.tenure.core.semaphore.SemaphoreTable;
import io.tenure.core.semaphore.SemaphoreView;
import io.tenure.proto.v1.ResponseHeader;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.server.Member;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * {@code stats}: {@code ok <json>}, dflockd's fields from this member's applied state
 * ({@code connections}, {@code locks}, {@code semaphores}, {@code idle_locks},
 * {@code idle_semaphores}, {@code signal_channels}, {@code watch_channels}), and a
 * {@code cluster} object with Tenure's Raft view (member, role, leader, term, commit and applied
 * index, members). A lock's {@code owner_conn_id} is its holder's client id: a text hold's shows
 * the hash of its token, never the token.
 */
final class StatsCommand {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** At most this many resources of each kind are listed. */
    static final int MAX_LISTED = 1000;

    private StatsCommand() {}

    static void register(Map<String, TextCommand> into, TextFront front) {
        into.put("stats", (session, request) -> CompletableFuture.completedFuture("ok " + stats(front)));
    }

    static String stats(TextFront front) {
        Member member = front.member();
        ObjectNode root = JSON.createObjectNode();
        root.put("connections", front.connections());
        ArrayNode locks = root.putArray("locks");
        ArrayNode semaphores = root.putArray("semaphores");
        ArrayNode elections = root.putArray("elections");
        record Found(List<LockView> locks, List<SemaphoreView> semaphores, List<ElectionView> elections) {}
        Found found = member.stateMachine().read(s -> new Found(
                s.primitive(LockTable.class).locks("", MAX_LISTED),
                s.primitive(SemaphoreTable.class).semaphores("", MAX_LISTED),
                s.primitive(ElectionTable.class).elections("", MAX_LISTED)));
        for (LockView lock : found.locks()) {
            ObjectNode l = locks.addObject();
            l.put("key", lock.key());
            l.put("mode", lock.shared() ? "read" : "write");
            l.put("owner_conn_id", lock.holder());
            l.put("holders", lock.holders().size());
            l.put("fence", lock.fencingToken());
            l.put("lease_expires_in_s", remainingSeconds(member, lock.leaseId()));
            l.put("waiters", lock.waiters().size());
        }
        int idleSemaphores = 0;
        for (SemaphoreView semaphore : found.semaphores()) {
            if (semaphore.holders().isEmpty() && semaphore.waiters().isEmpty()) {
                idleSemaphores++;
                continue;
            }
            ObjectNode s = semaphores.addObject();
            s.put("key", semaphore.key());
            s.put("limit", semaphore.limit());
            s.put("holders", semaphore.holders().size());
            s.put("waiters", semaphore.waiters().size());
        }
        for (ElectionView election : found.elections()) {
            ObjectNode e = elections.addObject();
            e.put("key", election.key());
            e.put("leader", election.leader());
            e.put("fence", election.fencingToken());
            e.put("candidates", election.candidates().size());
        }
        root.put("idle_locks", 0);
        root.put("idle_semaphores", idleSemaphores);
        root.put("signal_channels", member.signals().localCount());
        root.put("watch_channels", member.watches().watcherCount());
        StatusResponse status = member.status(ResponseHeader.getDefaultInstance());
        ObjectNode cluster = root.putObject("cluster");
        cluster.put("member", status.getMemberName());
        cluster.put("role", status.getLeader().equals(status.getMemberName()) ? "leader" : status.getLeader().isEmpty() ? "candidate" : "follower");
        cluster.put("leader", status.getLeader());
        cluster.put("term", status.getRaftTerm());
        cluster.put("commit_index", status.getCommitIndex());
        cluster.put("applied_index", status.getAppliedIndex());
        cluster.put("raft_engine", status.getRaftEngine());
        ArrayNode members = cluster.putArray("members");
        status.getMembersList().forEach(m -> members.add(m.getName()));
        return root.toString();
    }

    private static long remainingSeconds(Member member, long leaseId) {
        long ms = member.leases().remainingMillis(leaseId);
        return ms <= 0 ? 0 : (ms + 999) / 1000;
    }
}

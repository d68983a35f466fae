package io.tenure.server.raft;

import io.tenure.core.Applied;
import io.tenure.core.Command;
import io.tenure.server.NotServingException;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Submits commands to the local Raft server, coalescing into one log entry every command that
 * arrives while earlier entries are in flight: Ratis's cost is per entry (RATIS.md), so under
 * load many commands share one append and one fsync.
 *
 * <p>A caller's future completes with the command's {@link Applied} outcome once the entry is
 * committed (on a majority's disks, fsynced) and applied here, or fails with
 * {@link NotServingException} when the entry was not committed through this member (not the
 * leader, shutting down). A failure is ambiguous: the command may still have been applied, which
 * is why every command is idempotent inside the state.
 */
public final class Proposer {
    /** Entries in flight at once: enough to overlap one entry's fsync with the next one's append. */
    static final int MAX_IN_FLIGHT = 4;
    /** Bytes of commands per entry, well under the Raft message limit. */
    static final int MAX_ENTRY_BYTES = 1 << 20;

    private record Pending(Command command, CompletableFuture<Applied> result) {}

    private final RaftServer server;
    private final RaftGroupId groupId;
    private final RaftPeerId self;
    /** Random per process start, so entries replayed from a previous run never complete new callers. */
    private final long incarnation = new SecureRandom().nextLong();
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private final ConcurrentHashMap<Long, List<Pending>> inFlightBatches = new ConcurrentHashMap<>();

    private final Object lock = new Object();
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    private int inFlight;
    private long nextBatch;
    private volatile boolean closed;

    public Proposer(RaftServer server, RaftGroupId groupId, RaftPeerId self) {
        this.server = server;
        this.groupId = groupId;
        this.self = self;
    }

    /** Proposes one command; see the class comment for how the future completes. */
    public CompletableFuture<Applied> propose(Command command) {
        Pending pending = new Pending(command, new CompletableFuture<>());
        if (closed) {
            pending.result.completeExceptionally(new NotServingException("the member is shutting down"));
            return pending.result;
        }
        synchronized (lock) {
            queue.add(pending);
        }
        flush();
        return pending.result;
    }

    /** Completes the callers of an entry this process proposed; called on the apply thread. */
    public void applied(Entry entry, List<Applied> results) {
        if (entry.proposer() != incarnation) {
            return;
        }
        List<Pending> batch = inFlightBatches.remove(entry.batch());
        if (batch == null) {
            return;
        }
        for (int i = 0; i < batch.size(); i++) {
            batch.get(i).result.complete(results.get(i));
        }
    }

    /** Fails everything queued or in flight; later proposals fail at once. */
    public void close() {
        closed = true;
        List<Pending> dropped;
        synchronized (lock) {
            dropped = new ArrayList<>(queue);
            queue.clear();
        }
        NotServingException shuttingDown = new NotServingException("the member is shutting down");
        dropped.forEach(p -> p.result.completeExceptionally(shuttingDown));
        inFlightBatches.values().forEach(b -> b.forEach(p -> p.result.completeExceptionally(shuttingDown)));
        inFlightBatches.clear();
    }

    private void flush() {
        while (true) {
            List<Pending> batch;
            long seq;
            synchronized (lock) {
                if (queue.isEmpty() || inFlight >= MAX_IN_FLIGHT) {
                    return;
                }
                batch = new ArrayList<>(Math.min(queue.size(), 256));
                int bytes = 0;
                while (!queue.isEmpty() && batch.size() < Entry.MAX_COMMANDS
                        && (batch.isEmpty() || bytes + sizeOf(queue.peek().command) <= MAX_ENTRY_BYTES)) {
                    Pending p = queue.poll();
                    bytes += sizeOf(p.command);
                    batch.add(p);
                }
                inFlight++;
                seq = nextBatch++;
            }
            submit(seq, batch);
        }
    }

    private void submit(long seq, List<Pending> batch) {
        List<Command> commands = new ArrayList<>(batch.size());
        batch.forEach(p -> commands.add(p.command));
        inFlightBatches.put(seq, batch);
        CompletableFuture<RaftClientReply> reply;
        try {
            long term = server.getDivision(groupId).getInfo().getCurrentTerm();
            byte[] data = EntryCodec.encode(new Entry(incarnation, seq, term, commands));
            RaftClientRequest request = RaftClientRequest.newBuilder()
                    .setClientId(clientId)
                    .setServerId(self)
                    .setGroupId(groupId)
                    .setCallId(callIds.incrementAndGet())
                    .setMessage(Message.valueOf(UnsafeByteOperations.unsafeWrap(data)))
                    .setType(RaftClientRequest.writeRequestType())
                    .build();
            reply = server.submitClientRequestAsync(request);
        } catch (Exception e) {
            reply = CompletableFuture.failedFuture(e);
        }
        reply.whenComplete((r, error) -> {
            synchronized (lock) {
                inFlight--;
            }
            List<Pending> unapplied = inFlightBatches.remove(seq);
            if (unapplied != null) {
                NotServingException failure = failureOf(r, error);
                unapplied.forEach(p -> p.result.completeExceptionally(failure));
            }
            flush();
        });
    }

    private static NotServingException failureOf(RaftClientReply reply, Throwable error) {
        if (error != null) {
            return new NotServingException("the command was not committed: " + error.getMessage(), error);
        }
        if (reply.getNotLeaderException() != null) {
            RaftPeerId leader = reply.getNotLeaderException().getSuggestedLeader() == null
                    ? null : reply.getNotLeaderException().getSuggestedLeader().getId();
            return new NotServingException("this member is not the leader" + (leader == null ? "" : " (leader: " + leader + ")"));
        }
        if (reply.getException() != null) {
            return new NotServingException("the command was not committed: " + reply.getException().getMessage(), reply.getException());
        }
        return new NotServingException("the command was not applied by this member");
    }

    private static int sizeOf(Command c) {
        if (c instanceof Command.LockAcquire a) {
            return 32 + a.key().length() * 3 + (a.metadata() == null ? 0 : a.metadata().length);
        }
        if (c instanceof Command.LeaseRenew r) {
            return 8 + 8 * r.leaseIds().length;
        }
        if (c instanceof Command.LockRelease r) {
            return 32 + r.key().length() * 3;
        }
        if (c instanceof Command.LockCancel r) {
            return 24 + r.key().length() * 3;
        }
        return 64;
    }
}

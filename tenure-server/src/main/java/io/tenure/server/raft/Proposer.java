package io.tenure.server.raft;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.ReadBarrier;
import io.tenure.server.Admission;
import io.tenure.server.Causes;
import io.tenure.server.NotServingException;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientAsynchronousProtocol;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.RaftRetryFailureException;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Submits commands to Raft, coalescing into one log entry every command that arrives while
 * earlier entries are in flight: Ratis's cost is per entry (RATIS.md), so under load many
 * commands share one append and one fsync. On the leader an entry is submitted in-process; a
 * follower forwards it to the leader through a Ratis client, which follows leader changes.
 *
 * <p>A caller is answered with the command's {@link Applied} outcome once the entry is committed
 * (on a majority's disks, fsynced) and applied <em>on this member</em>, so a caller then reads its
 * own write here. The apply path asks for the callers of each entry ({@link #callersOf}) and
 * answers them slot by slot, between the effects of the commands before and after (so a call
 * that a result parks is parked before a later command of the same entry wakes it). It fails with
 * {@link NotServingException} when the entry was not committed (no leader, shutting down) or this
 * member skipped it by installing a snapshot. A failure is ambiguous: the command may still have
 * been applied, which is why every command is idempotent inside the state.
 *
 * <p>A command is encoded once, on the caller's thread, when it is proposed: an entry is then
 * its callers' bytes one after the other, and its size is known exactly.
 */
public final class Proposer implements Admission.Backlog {
    private static final Logger LOG = LoggerFactory.getLogger(Proposer.class);
    /** How long a read barrier may take before the read fails as unavailable. */
    static final long READ_BARRIER_TIMEOUT_MS = 3_000;
    /** Entries in flight at once: enough to overlap one entry's fsync with the next one's append. */
    static final int MAX_IN_FLIGHT = 4;
    /** Bytes of commands per entry, well under the Raft message limit. */
    static final int MAX_ENTRY_BYTES = 1 << 20;

    /**
     * Where a proposed command's outcome goes. {@link #applied} runs on the apply thread, in log
     * order, before the effects of later commands are handed out: it must be quick and never block.
     */
    public interface Answer {
        /** The command was committed and applied on this member. */
        void applied(Applied applied);

        /** The command was not committed, or its outcome is unknown to this member. */
        void failed(Throwable error);
    }

    /**
     * Which queue a proposal waits in. Renewals of kept-alive leases go before all other work,
     * into the next entry, and may take one entry in flight beyond {@link #MAX_IN_FLIGHT}: a busy
     * log must not delay the keep-alives that keep what is held (the overload issue's first rule).
     */
    public enum Lane { RENEWAL, WORK }

    /** @param queuedAt when it was proposed (monotonic nanoseconds), for the age of the queue */
    private record Pending(byte[] command, Answer answer, long queuedAt) {
        void fail(Throwable error) {
            answer.failed(error);
        }
    }

    /** An answer that completes a future: for callers that need no ordering with effects. */
    private static final class FutureAnswer extends CompletableFuture<Applied> implements Answer {
        @Override
        public void applied(Applied applied) {
            complete(applied);
        }

        @Override
        public void failed(Throwable error) {
            completeExceptionally(error);
        }
    }

    private final RaftServer server;
    private final RaftGroupId groupId;
    private final RaftPeerId self;
    /** Builds the client that forwards a follower's entries to the leader. */
    private final java.util.function.Supplier<RaftClient> newForwarder;
    /**
     * The forwarding client in use. Replaced when it breaks for good: once its retries run out
     * (the leader unreachable for a few seconds), Ratis 3.2.2's ordered client fails every later
     * request with AlreadyClosedException, so this member could never forward again.
     */
    private volatile RaftClient forwarder;
    /** The index of the last snapshot this member installed: entries at or below it were never applied here. */
    private volatile long reloadedThrough;
    /** Batches committed (their reply came) but not yet applied here: batch → log index. */
    private final ConcurrentHashMap<Long, Long> committedNotApplied = new ConcurrentHashMap<>();
    /** Random per process start, so entries replayed from a previous run never complete new callers. */
    private final long incarnation = new SecureRandom().nextLong();
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private final ConcurrentHashMap<Long, List<Pending>> inFlightBatches = new ConcurrentHashMap<>();

    private final Object lock = new Object();
    /** Work waiting for an entry, oldest first. Guarded by lock. */
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    /** Lease renewals waiting for an entry, oldest first; they go first. Guarded by lock. */
    private final ArrayDeque<Pending> renewals = new ArrayDeque<>();
    private int inFlight;
    private long nextBatch;
    private volatile boolean closed;
    /** Told how long each of this member's entries took from submission to commit (append, replicate, fsync). */
    private volatile java.util.function.LongConsumer commitLatency = nanos -> { };

    public Proposer(RaftServer server, RaftGroupId groupId, RaftPeerId self, java.util.function.Supplier<RaftClient> newForwarder) {
        this.server = server;
        this.groupId = groupId;
        this.self = self;
        this.newForwarder = newForwarder;
        this.forwarder = newForwarder.get();
    }

    public void onCommitLatency(java.util.function.LongConsumer observer) {
        this.commitLatency = observer;
    }

    /** Proposes one command; the future completes as the class comment says, on the apply thread. */
    public CompletableFuture<Applied> propose(Command command) {
        return propose(command, Lane.WORK);
    }

    /** Proposes one command in {@code lane}; the future completes as the class comment says. */
    public CompletableFuture<Applied> propose(Command command, Lane lane) {
        FutureAnswer answer = new FutureAnswer();
        propose(command, answer, lane);
        return answer;
    }

    /** Proposes one command; {@code answer} is told its outcome (see {@link Answer}). */
    public void propose(Command command, Answer answer) {
        propose(command, answer, Lane.WORK);
    }

    /** Proposes one command in {@code lane}; {@code answer} is told its outcome. */
    public void propose(Command command, Answer answer, Lane lane) {
        Pending pending = new Pending(EntryCodec.encode(command), answer, System.nanoTime());
        if (closed) {
            pending.fail(new NotServingException("the member is shutting down"));
            return;
        }
        synchronized (lock) {
            (lane == Lane.RENEWAL ? renewals : queue).add(pending);
        }
        flush();
    }

    /** The admission's reading: one lock for the three figures, once per new request. */
    @Override
    public Admission.Backlog.Waits waits(long now) {
        synchronized (lock) {
            Pending renewal = renewals.peek();
            Pending work = queue.peek();
            return new Admission.Backlog.Waits(renewal == null ? 0 : Math.max(0, now - renewal.queuedAt),
                    work == null ? 0 : Math.max(0, now - work.queuedAt), queue.size());
        }
    }

    /** How many proposals of {@code lane} wait for an entry. */
    public int waiting(Lane lane) {
        synchronized (lock) {
            return (lane == Lane.RENEWAL ? renewals : queue).size();
        }
    }

    /** How long the oldest proposal of {@code lane} has waited for an entry, in nanoseconds; 0 when none waits. */
    public long oldestWaitNanos(Lane lane, long now) {
        synchronized (lock) {
            Pending oldest = (lane == Lane.RENEWAL ? renewals : queue).peek();
            return oldest == null ? 0 : Math.max(0, now - oldest.queuedAt);
        }
    }

    /** Entries submitted and not yet answered by Raft. */
    public int entriesInFlight() {
        synchronized (lock) {
            return inFlight;
        }
    }

    /**
     * Completes once this member has applied everything committed before it was called: reads of
     * the applied state after it are linearizable. It commits a {@link ReadBarrier}
     * through the log (coalesced with other commands, like any proposal) and waits until this
     * member applies it. Fails with {@link NotServingException} when that does not happen within
     * {@value #READ_BARRIER_TIMEOUT_MS} ms (no leader, or this member is cut off from the majority).
     *
     * <p>Not Ratis's ReadIndex: in Ratis 3.2.2 a leader answers it at once, with no new round of
     * heartbeats, when its commit index was acknowledged by a majority before. A leader cut off
     * from the majority commits nothing more, so it went on answering reads from a state the new
     * leader had already moved past (docs/safety.md, the F6 finding). A barrier entry commits
     * only with a majority that still accepts this leader's term.
     */
    public CompletableFuture<Void> readBarrier() {
        return propose(ReadBarrier.INSTANCE).orTimeout(READ_BARRIER_TIMEOUT_MS, TimeUnit.MILLISECONDS).handle((applied, error) -> {
            if (error == null) {
                return null;
            }
            Throwable cause = Causes.unwrap(error);
            if (cause instanceof java.util.concurrent.TimeoutException) {
                throw new NotServingException("no linearizable read now: the read barrier was not committed within "
                        + READ_BARRIER_TIMEOUT_MS + " ms (no leader reachable?)", cause);
            }
            throw new NotServingException("no linearizable read now (no leader reachable?): " + cause.getMessage(), cause);
        });
    }

    /**
     * The answers of the callers of an entry this process proposed, in slot order, or null when
     * the entry is another member's (or another run's, or its callers were already failed). Called
     * on the apply thread, which then answers them slot by slot.
     */
    public List<Answer> callersOf(Entry entry, long index) {
        List<Answer> answers = null;
        if (entry.proposer() == incarnation) {
            committedNotApplied.remove(entry.batch());
            List<Pending> batch = inFlightBatches.remove(entry.batch());
            if (batch != null) {
                answers = new ArrayList<>(batch.size());
                for (Pending p : batch) {
                    answers.add(p.answer);
                }
            }
        }
        if (!committedNotApplied.isEmpty()) {
            skippedUpTo(index);
        }
        return answers;
    }

    /**
     * This member's state jumped to {@code index} (a snapshot was installed): batches committed at
     * or below it will never be applied here, so their outcome is unknown to this member.
     */
    public void reloaded(long index) {
        reloadedThrough = Math.max(reloadedThrough, index);
        skippedUpTo(index);
    }

    /** Fails the batches committed at or below {@code index} that were not applied here. */
    private void skippedUpTo(long index) {
        committedNotApplied.forEach((seq, at) -> {
            if (at <= index && committedNotApplied.remove(seq, at)) {
                List<Pending> batch = inFlightBatches.remove(seq);
                if (batch != null) {
                    NotServingException unknown = new NotServingException(
                            "the command was committed but this member caught up by snapshot before applying it; its outcome is unknown, retry");
                    batch.forEach(p -> p.fail(unknown));
                }
            }
        });
    }

    /** Fails everything queued or in flight; later proposals fail at once. Closes the forwarding client. */
    public void close() {
        synchronized (lock) {
            closed = true;
        }
        try {
            forwarder.close();
        } catch (IOException | RuntimeException e) {
            LOG.debug("closing the forwarding client: {}", e.toString());
        }
        List<Pending> dropped;
        synchronized (lock) {
            dropped = new ArrayList<>(renewals);
            dropped.addAll(queue);
            renewals.clear();
            queue.clear();
        }
        NotServingException shuttingDown = new NotServingException("the member is shutting down");
        dropped.forEach(p -> p.fail(shuttingDown));
        inFlightBatches.values().forEach(b -> b.forEach(p -> p.fail(shuttingDown)));
        inFlightBatches.clear();
        committedNotApplied.clear();
    }

    private void flush() {
        while (true) {
            List<Pending> batch;
            long seq;
            synchronized (lock) {
                boolean renewalsWait = !renewals.isEmpty();
                // Work waits for a free slot; renewals may take one more, so they never queue
                // behind a full pipeline of work.
                if (inFlight >= MAX_IN_FLIGHT + (renewalsWait ? 1 : 0) || (!renewalsWait && queue.isEmpty())) {
                    return;
                }
                batch = new ArrayList<>(Math.min(renewals.size() + queue.size(), 256));
                int[] bytes = {0};
                take(renewals, batch, bytes);
                if (inFlight < MAX_IN_FLIGHT) {
                    take(queue, batch, bytes);
                }
                inFlight++;
                seq = nextBatch++;
            }
            submit(seq, batch);
        }
    }

    /** Moves proposals from {@code from} into {@code batch}, oldest first, while the entry has room. */
    private static void take(ArrayDeque<Pending> from, List<Pending> batch, int[] bytes) {
        while (!from.isEmpty() && batch.size() < Entry.MAX_COMMANDS
                && (batch.isEmpty() || bytes[0] + from.peek().command.length <= MAX_ENTRY_BYTES)) {
            Pending p = from.poll();
            bytes[0] += p.command.length;
            batch.add(p);
        }
    }

    private void submit(long seq, List<Pending> batch) {
        List<byte[]> commands = new ArrayList<>(batch.size());
        batch.forEach(p -> commands.add(p.command));
        inFlightBatches.put(seq, batch);
        long submitted = System.nanoTime();
        CompletableFuture<RaftClientReply> reply;
        try {
            RaftServer.Division division = server.getDivision(groupId);
            long term = division.getInfo().getCurrentTerm();
            Message message = Message.valueOf(UnsafeByteOperations.unsafeWrap(
                    EntryCodec.encode(incarnation, seq, term, commands)));
            reply = division.getInfo().isLeader() ? submitHere(division, message) : forward(message);
        } catch (Exception e) {
            reply = CompletableFuture.failedFuture(e);
        }
        reply.whenComplete((r, error) -> {
            synchronized (lock) {
                inFlight--;
            }
            if (error == null && r.isSuccess()) {
                commitLatency.accept(System.nanoTime() - submitted);
                if (inFlightBatches.containsKey(seq)) {
                    // Committed; it completes when this member applies it (a follower lags a little).
                    committedNotApplied.put(seq, r.getLogIndex());
                    // Not "applied index >= log index": that is set just before the apply
                    // completes the batch, and would fail a batch that is being applied.
                    long reloaded = reloadedThrough;
                    if (reloaded >= r.getLogIndex()) {
                        skippedUpTo(reloaded);
                    }
                }
            } else {
                List<Pending> unapplied = inFlightBatches.remove(seq);
                if (unapplied != null) {
                    NotServingException failure = failureOf(r, error);
                    unapplied.forEach(p -> p.fail(failure));
                }
            }
            flush();
        });
    }

    /** In-process on the leader; if it stopped leading meanwhile, through the forwarding client. */
    private CompletableFuture<RaftClientReply> submitHere(RaftServer.Division division, Message message) throws IOException {
        RaftClientRequest request = RaftClientRequest.newBuilder()
                .setClientId(clientId)
                .setServerId(self)
                .setGroupId(groupId)
                .setCallId(callIds.incrementAndGet())
                .setMessage(message)
                .setType(RaftClientRequest.writeRequestType())
                .build();
        // Straight to the division, on this thread: RaftServer's own entry point hands each
        // request to a Ratis thread pool and blocks this thread until the append is done, which
        // costs two context switches per entry and saves nothing. (Ratis 3.2.2's division is a
        // RaftClientAsynchronousProtocol; the server's entry point stays as the fallback.)
        CompletableFuture<RaftClientReply> submitted = division instanceof RaftClientAsynchronousProtocol here
                ? here.submitClientRequestAsync(request)
                : server.submitClientRequestAsync(request);
        // Stepping down (a leadership transfer, as in a graceful shutdown): the forwarding client
        // retries until the new leader takes the entry, instead of failing the callers.
        return submitted.thenCompose(r ->
                r.getNotLeaderException() != null || r.getLeaderNotReadyException() != null
                        || r.getLeaderSteppingDownException() != null
                        ? forward(message)
                        : CompletableFuture.completedFuture(r));
    }

    /** To the leader through the forwarding client, replacing that client if it broke for good. */
    private CompletableFuture<RaftClientReply> forward(Message message) {
        RaftClient client = forwarder;
        CompletableFuture<RaftClientReply> reply;
        try {
            reply = client.async().send(message);
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        return reply.whenComplete((r, error) -> {
            if (error != null && brokeForGood(error)) {
                replaceForwarder(client, error);
            }
        });
    }

    private static boolean brokeForGood(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof AlreadyClosedException || t instanceof RaftRetryFailureException) {
                return true;
            }
        }
        return false;
    }

    private void replaceForwarder(RaftClient broken, Throwable why) {
        synchronized (lock) {
            if (closed || forwarder != broken) {
                return;
            }
            forwarder = newForwarder.get();
        }
        LOG.info("event=forwarder_replaced reason=\"{}\"", why.toString());
        try {
            broken.close();
        } catch (IOException | RuntimeException e) {
            LOG.debug("closing the broken forwarding client: {}", e.toString());
        }
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
}

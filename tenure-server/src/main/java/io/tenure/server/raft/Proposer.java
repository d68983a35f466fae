package io.tenure.server.raft;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.ReadBarrier;
import io.tenure.server.Admission;
import io.tenure.server.Causes;
import io.tenure.server.NotServingException;


import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Submits commands to Raft, coalescing into one log entry every command that arrives while
 * earlier entries are in flight: a Raft library's cost is per entry (RATIS.md), so under load many
 * commands share one append and one fsync. {@link Raft#append} submits an entry in-process on the
 * leader, and forwards it to the leader from a follower.
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

    private final Raft raft;
    /** The index of the last snapshot this member installed: entries at or below it were never applied here. */
    private volatile long reloadedThrough;
    /** Batches committed (their reply came) but not yet applied here: batch → log index. */
    private final ConcurrentHashMap<Long, Long> committedNotApplied = new ConcurrentHashMap<>();
    /** Random per process start, so entries replayed from a previous run never complete new callers. */
    private final long incarnation = new SecureRandom().nextLong();
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

    /** The failure of a read round where the engine confirms no read index without the log: the read takes the barrier. */
    private static final NotServingException NO_READ_INDEX = new NotServingException("no read index without the log here");
    /** Guards the read rounds below. */
    private final Object readRounds = new Object();
    /** Reads waiting for the next read-index round. Guarded by readRounds. */
    private List<CompletableFuture<Long>> nextReadRound = new ArrayList<>();
    /** Whether a read-index round is out. Guarded by readRounds. */
    private boolean readRoundOut;
    /** Completes once this member has applied a given index ({@link TenureStateMachine#whenApplied}). */
    private final java.util.function.LongFunction<CompletableFuture<Void>> whenApplied;

    /**
     * @param whenApplied completes once this member has applied the index given
     *                    ({@link TenureStateMachine#whenApplied}): where a confirmed read index is waited for
     */
    public Proposer(Raft raft, java.util.function.LongFunction<CompletableFuture<Void>> whenApplied) {
        this.raft = raft;
        this.whenApplied = whenApplied;
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
     * the applied state after it are linearizable. Where the engine confirms a read index without
     * the log ({@link Raft#readIndex}: JRaft's ReadIndex in a cluster, a single voter's own commit
     * index), it waits until this member has applied that index; no entry is written. Otherwise,
     * or when the confirmation fails (a new leader with nothing of its term committed, no leader
     * known to a follower), it commits a {@link ReadBarrier} through the log (coalesced with other
     * commands, like any proposal) and waits until this member applies it. Fails with
     * {@link NotServingException} when neither happens within {@value #READ_BARRIER_TIMEOUT_MS} ms
     * (no leader, or this member is cut off from the majority).
     *
     * <p>Never Ratis's ReadIndex in a cluster: in Ratis 3.2.2 a leader answers it at once, with no
     * new round of heartbeats, when its commit index was acknowledged by a majority before. A
     * leader cut off from the majority commits nothing more, so it went on answering reads from a
     * state the new leader had already moved past (docs/safety.md, the F6 finding). A barrier
     * entry commits only with a majority that still accepts this leader's term, and JRaft's
     * ReadIndex answers only after such a majority answered a heartbeat of this term.
     */
    public CompletableFuture<Void> readBarrier() {
        CompletableFuture<?> barrier = readIndexInRound()
                .handle((index, error) -> error == null ? whenApplied.apply(index) : propose(ReadBarrier.INSTANCE))
                .thenCompose(next -> next);
        return barrier.orTimeout(READ_BARRIER_TIMEOUT_MS, TimeUnit.MILLISECONDS).handle((applied, error) -> {
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
     * A read index confirmed for this read, in a round shared with the other reads that arrived
     * while the previous round was out: one confirmation (one round of heartbeats in a cluster)
     * at a time, each serving every read that waited for it, as group commit serves writes. A read
     * never joins a round already under way, whose index may predate the read. Fails (and the
     * read takes the log barrier) when the engine confirms no index without the log, or the round
     * failed.
     */
    private CompletableFuture<Long> readIndexInRound() {
        CompletableFuture<Long> mine = new CompletableFuture<>();
        boolean start;
        synchronized (readRounds) {
            nextReadRound.add(mine);
            start = !readRoundOut;
            readRoundOut = true;
        }
        if (start) {
            startReadRounds();
        }
        return mine;
    }

    /** Sends the next round for the reads waiting, until none waits; each round's end sends the next. */
    private void startReadRounds() {
        while (true) {
            List<CompletableFuture<Long>> round;
            synchronized (readRounds) {
                if (nextReadRound.isEmpty()) {
                    readRoundOut = false;
                    return;
                }
                round = nextReadRound;
                nextReadRound = new ArrayList<>();
            }
            CompletableFuture<Long> confirmed;
            try {
                confirmed = raft.readIndex();
            } catch (RuntimeException e) {
                confirmed = CompletableFuture.failedFuture(e);
            }
            if (confirmed == null) {
                confirmed = CompletableFuture.failedFuture(NO_READ_INDEX);
            }
            if (!confirmed.isDone()) {
                // Bounded, so that a round the engine never answers cannot hold back the reads after it.
                confirmed.orTimeout(READ_BARRIER_TIMEOUT_MS, TimeUnit.MILLISECONDS).whenComplete((index, error) -> {
                    settleReadRound(round, index, error);
                    startReadRounds();
                });
                return;
            }
            confirmed.whenComplete((index, error) -> settleReadRound(round, index, error));
        }
    }

    private static void settleReadRound(List<CompletableFuture<Long>> round, Long index, Throwable error) {
        for (CompletableFuture<Long> read : round) {
            if (error == null) {
                read.complete(index);
            } else {
                read.completeExceptionally(error);
            }
        }
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

    /** Fails everything queued or in flight; later proposals fail at once. */
    public void close() {
        synchronized (lock) {
            closed = true;
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
        CompletableFuture<Long> committed;
        try {
            committed = raft.append(EntryCodec.encode(incarnation, seq, raft.term(), commands));
        } catch (RuntimeException e) {
            committed = CompletableFuture.failedFuture(e);
        }
        committed.whenComplete((index, error) -> {
            synchronized (lock) {
                inFlight--;
            }
            if (error == null) {
                commitLatency.accept(System.nanoTime() - submitted);
                if (inFlightBatches.containsKey(seq)) {
                    // Committed; it completes when this member applies it (a follower lags a little).
                    committedNotApplied.put(seq, index);
                    // Not "applied index >= log index": that is set just before the apply
                    // completes the batch, and would fail a batch that is being applied.
                    long reloaded = reloadedThrough;
                    if (reloaded >= index) {
                        skippedUpTo(reloaded);
                    }
                }
            } else {
                List<Pending> unapplied = inFlightBatches.remove(seq);
                if (unapplied != null) {
                    NotServingException failure = failureOf(error);
                    unapplied.forEach(p -> p.fail(failure));
                }
            }
            flush();
        });
    }

    private static NotServingException failureOf(Throwable error) {
        Throwable cause = Causes.unwrap(error);
        return cause instanceof NotServingException notServing ? notServing
                : new NotServingException("the command was not committed: " + cause.getMessage(), cause);
    }
}

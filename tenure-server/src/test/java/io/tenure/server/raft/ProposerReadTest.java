package io.tenure.server.raft;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.core.kernel.ReadBarrier;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * How the proposer makes a read linearizable: a read index confirmed by the engine, in rounds of
 * one at a time (a read never joins a round already out, whose index may predate it), served once
 * this member has applied that index; the log barrier where the engine confirms none or a round fails.
 */
class ProposerReadTest {
    /** A Raft whose read rounds and appends the test answers by hand. */
    private static final class ScriptedRaft implements Raft {
        final List<CompletableFuture<Long>> rounds = new CopyOnWriteArrayList<>();
        final List<byte[]> appended = new CopyOnWriteArrayList<>();
        volatile boolean confirmsReads = true;

        @Override
        public CompletableFuture<Long> readIndex() {
            if (!confirmsReads) {
                return null;
            }
            CompletableFuture<Long> round = new CompletableFuture<>();
            rounds.add(round);
            return round;
        }

        @Override
        public CompletableFuture<Long> append(byte[] entry) {
            appended.add(entry);
            return new CompletableFuture<>(); // never committed here
        }

        @Override public void start() { }
        @Override public long term() { return 1; }
        @Override public boolean leader() { return true; }
        @Override public boolean leaderReady() { return true; }
        @Override public String leaderName() { return "n1"; }
        @Override public long commitIndex() { return 0; }
        @Override public long logStartIndex() { return 1; }
        @Override public boolean logOpen() { return true; }
        @Override public boolean alive() { return true; }
        @Override public List<Peer> peers() { return List.of(new Peer("n1", "127.0.0.1:1")); }
        @Override public void changePeers(List<Peer> peers) { }
        @Override public boolean transferLeadership(String target, long timeoutMillis) { return false; }
        @Override public List<String> successors(long silentLimitMillis) { return List.of(); }
        @Override public void close() { }
    }

    private final ScriptedRaft raft = new ScriptedRaft();
    /** What the reads wait for: this member applying an index, completed by the test. */
    private final ConcurrentHashMap<Long, CompletableFuture<Void>> applied = new ConcurrentHashMap<>();
    private final Proposer proposer = new Proposer(raft, index -> applied.computeIfAbsent(index, i -> new CompletableFuture<>()));

    @Test
    void readsThatArriveWhileARoundIsOutWaitForTheNextRoundAndEachIsServedOnceItsIndexIsApplied() {
        CompletableFuture<Void> first = proposer.readBarrier();
        assertThat(raft.rounds).hasSize(1);
        CompletableFuture<Void> second = proposer.readBarrier();
        CompletableFuture<Void> third = proposer.readBarrier();
        assertThat(raft.rounds).as("one round out at a time").hasSize(1);

        raft.rounds.get(0).complete(10L);
        assertThat(raft.rounds).as("the reads that waited go out together").hasSize(2);
        assertThat(applied).containsOnlyKeys(10L);
        assertThat(first).as("not before index 10 is applied here").isNotDone();
        applied.get(10L).complete(null);
        assertThat(first).isCompleted();
        assertThat(second).as("its round is still out").isNotDone();
        assertThat(third).isNotDone();

        raft.rounds.get(1).complete(12L);
        applied.get(12L).complete(null);
        assertThat(second).isCompleted();
        assertThat(third).isCompleted();
        assertThat(raft.appended).as("no log entry for any of them").isEmpty();

        proposer.readBarrier();
        assertThat(raft.rounds).as("with no round out, a read sends one at once").hasSize(3);
    }

    @Test
    void whereTheEngineConfirmsNoIndexTheReadCommitsABarrierThroughTheLog() throws IOException {
        raft.confirmsReads = false;

        CompletableFuture<Void> read = proposer.readBarrier();

        assertThat(raft.appended).hasSize(1);
        assertThat(EntryCodec.decode(raft.appended.get(0)).commands()).containsExactly(ReadBarrier.INSTANCE);
        assertThat(read).as("until the barrier is applied").isNotDone();
        assertThat(raft.rounds).isEmpty();
    }

    @Test
    void aRoundThatFailsSendsItsReadsThroughTheBarrierAndTheNextReadsStartANewRound() throws IOException {
        CompletableFuture<Void> first = proposer.readBarrier();
        CompletableFuture<Void> waiting = proposer.readBarrier();

        raft.rounds.get(0).completeExceptionally(new IllegalStateException("a new leader with nothing of its term committed"));

        assertThat(raft.appended).as("the failed round's read takes the barrier").hasSize(1);
        assertThat(EntryCodec.decode(raft.appended.get(0)).commands()).containsExactly(ReadBarrier.INSTANCE);
        assertThat(first).isNotDone();
        assertThat(raft.rounds).as("the read that waited goes out in a round of its own").hasSize(2);
        raft.rounds.get(1).complete(7L);
        applied.get(7L).complete(null);
        assertThat(waiting).isCompleted();
    }
}

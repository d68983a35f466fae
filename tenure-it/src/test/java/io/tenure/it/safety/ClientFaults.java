package io.tenure.it.safety;

import io.tenure.it.safety.FencedResource.Section;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/** The faults that hit client processes holding a lock: a process pause (F5) and a partition from the cluster (F7). */
final class ClientFaults {
    /** How far ahead a holder's write must still be for F5 to stop it before the write. */
    static final Duration F5_MARGIN = Duration.ofMillis(400);
    static final Duration FIND_HOLDER_LIMIT = Duration.ofSeconds(90);
    /** How long F5 looks for a lock holder whose semaphore thread also holds permits, before it takes any lock holder. */
    static final Duration PREFER_PERMIT_HOLDER_LIMIT = Duration.ofSeconds(10);

    /** What one F5 saw: the paused holder's write after it resumed must have been refused. */
    public record PauseOutcome(String process, String key, long token, long pausedMillis, Optional<ResourceWrite> higherAccepted,
                               Optional<ResourceWrite> resumedWrite) {
        public boolean resumedWriteRefused() {
            return resumedWrite.isPresent() && !resumedWrite.get().accepted();
        }
    }

    /** What one F7 saw: when the cut-off client declared its lease lost, relative to the cut. */
    public record PartitionOutcome(String process, String key, long token, long leaseId, long cutAtNanos,
                                   Optional<Op> leaseLost, Optional<ResourceWrite> higherAccepted) {
    }

    private final Lab lab;
    final List<PauseOutcome> pauses = new CopyOnWriteArrayList<>();
    final List<PartitionOutcome> partitions = new CopyOnWriteArrayList<>();

    ClientFaults(Lab lab) {
        this.lab = lab;
    }

    /**
     * F5: SIGSTOP a lock worker between its READ and its WRITE (its write at least
     * {@link #F5_MARGIN} away), for the TTL plus a second and until another client's write with
     * a larger token was accepted for the key (at most four TTLs); then SIGCONT. Its write, with
     * the old token, must be refused.
     *
     * <p>It prefers (for up to {@link #PREFER_PERMIT_HOLDER_LIMIT}) a process whose semaphore
     * thread also holds permits by the resource's view, so that the semaphore's fence meets a
     * stale holder too: the waiters take the permits when the lease expires, and the resumed
     * holder's next write under its grant is refused if their writes displaced it.
     */
    void pauseHolder() throws Exception {
        List<String> candidates = lab.lockClients().stream().filter(c -> !lab.pausedClients.contains(c)).toList();
        Section held = lab.resource.awaitSection(s -> candidates.contains(s.process()) && lab.resource.permitsHeldBy(s.process()) != null,
                F5_MARGIN, PREFER_PERMIT_HOLDER_LIMIT).orElse(null);
        if (held == null) {
            held = findHolder(F5_MARGIN);
        }
        String permits = lab.resource.permitsHeldBy(held.process());
        long pausedAt = System.nanoTime();
        lab.signalClient(held.process(), "STOP");
        lab.pausedClients.add(held.process());
        lab.log.start(Fault.F5, held.process(), "SIGSTOP while holding " + held.key() + " with token " + held.token()
                + " (lease " + held.leaseId() + "), its write due in " + (held.writeDueNanos() - pausedAt) / 1_000_000 + " ms"
                + (permits == null ? "" : ", and " + permits), pausedAt);
        Waits.untilTime(pausedAt + lab.ttl().plusSeconds(1).toNanos());
        Optional<ResourceWrite> higher = lab.resource.awaitAcceptedAbove(held.key(), held.token(),
                pausedAt + lab.ttl().multipliedBy(4).toNanos());
        long resumedAt = System.nanoTime();
        lab.signalClient(held.process(), "CONT");
        lab.pausedClients.remove(held.process());
        Optional<ResourceWrite> resumed = lab.resource.awaitWrite(held.process(), held.key(), held.token(),
                resumedAt + Duration.ofSeconds(30).toNanos());
        PauseOutcome outcome = new PauseOutcome(held.process(), held.key(), held.token(), (resumedAt - pausedAt) / 1_000_000,
                higher, resumed);
        pauses.add(outcome);
        lab.log.end(Fault.F5, held.process(), "SIGCONT after " + outcome.pausedMillis() + " ms; "
                + higher.map(w -> "meanwhile token " + w.token() + " of " + w.writer() + " was accepted").orElse("no larger token was accepted meanwhile")
                + "; the resumed write with token " + held.token() + " was "
                + resumed.map(w -> w.accepted() ? "ACCEPTED" : "refused").orElse("not seen within 30 s"), resumedAt);
    }

    /**
     * F7: blackhole every link of a lock worker that holds a lock, so that its keep-alives go
     * unanswered; keep it cut off for the TTL plus a second, until its SDK declared the lease lost
     * (recorded by the worker as LEASE_LOST) and another client's larger token was accepted (at
     * most four TTLs); then heal.
     */
    void partitionHolder() throws Exception {
        Section held = findHolder(Duration.ZERO);
        long cutAt = System.nanoTime();
        lab.links.blackhole(held.process());
        lab.log.start(Fault.F7, held.process(), "blackhole every link of a client holding " + held.key() + " with token "
                + held.token() + " (lease " + held.leaseId() + ")", cutAt);
        Waits.untilTime(cutAt + lab.ttl().plusSeconds(1).toNanos());
        Path history = lab.runDir.resolve("history").resolve(held.process() + ".jsonl");
        // Due TTL/2 after the cut at the latest, so normally on disk already; the file is read every 200 ms at most.
        Waits.within(lab.ttl(), Duration.ofMillis(200), () -> leaseLost(history, held.leaseId()).isPresent());
        Optional<Op> lost = leaseLost(history, held.leaseId());
        Optional<ResourceWrite> higher = lab.resource.awaitAcceptedAbove(held.key(), held.token(),
                cutAt + lab.ttl().multipliedBy(4).toNanos());
        long healAt = System.nanoTime();
        lab.links.heal(held.process());
        partitions.add(new PartitionOutcome(held.process(), held.key(), held.token(), held.leaseId(), cutAt, lost, higher));
        lab.log.end(Fault.F7, held.process(), "healed after " + Waits.millisSince(cutAt) + " ms; "
                + lost.map(op -> "lease " + held.leaseId() + " declared lost " + (op.completeNanos() - cutAt) / 1_000_000 + " ms after the cut")
                        .orElse("lease " + held.leaseId() + " was NOT declared lost")
                + "; " + higher.map(w -> "token " + w.token() + " of " + w.writer() + " accepted "
                        + (w.atNanos() - cutAt) / 1_000_000 + " ms after the cut").orElse("no larger token accepted"), healAt);
    }

    private Section findHolder(Duration margin) throws InterruptedException {
        List<String> candidates = lab.lockClients().stream().filter(c -> !lab.pausedClients.contains(c)).toList();
        return lab.resource.awaitSection(s -> candidates.contains(s.process()), margin, FIND_HOLDER_LIMIT)
                .orElseThrow(() -> new Waits.HarnessException("no lock worker was between its read and its write (with "
                        + margin.toMillis() + " ms to go) within " + FIND_HOLDER_LIMIT.toSeconds() + " s"));
    }

    static Optional<Op> leaseLost(Path history, long leaseId) {
        if (!Files.exists(history)) {
            return Optional.empty();
        }
        return JsonLines.read(history, Op.class).stream()
                .filter(op -> op.kind() == Op.Kind.LEASE_LOST && op.leaseId() == leaseId)
                .findFirst();
    }
}

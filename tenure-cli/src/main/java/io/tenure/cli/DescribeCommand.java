package io.tenure.cli;

import io.tenure.client.ElectionDescription;
import io.tenure.client.LeaderInfo;
import io.tenure.client.LockDescription;
import io.tenure.client.LockMode;
import io.tenure.client.Scope;
import io.tenure.client.ScopeBlocker;
import io.tenure.client.ScopeDescription;
import io.tenure.client.ScopeMode;
import io.tenure.client.ScopePart;
import io.tenure.client.SemaphoreDescription;
import io.tenure.client.TenureBarrier;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureDoubleBarrier;
import io.tenure.client.TenureCountDownLatch;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code tenure describe NAME}: who holds a lock or a semaphore, or leads an election, and who waits
 * for it; {@code tenure describe --path|--inode|--range ... [--blocked-by]}: who holds and waits for
 * lock scopes, and who would block them.
 */
@Command(name = "describe", mixinStandardHelpOptions = true,
        description = {
            "Prints who holds lock or semaphore NAME, or leads election NAME, and who waits for it; or, with --path, "
                    + "--inode or --range, who holds and waits for those lock scopes.",
            "Read linearizably, one 'name: value' per line; the first line says the kind ('lock: NAME', "
                    + "'semaphore: NAME', 'election: NAME', 'barrier: NAME', 'double_barrier: NAME' or 'latch: NAME').",
            "A lock: held, holder, lease, fencing_token, metadata, held_since_revision, grants, holder_ttl_remaining "
                    + "(on the serving member's clock; 'unknown' right after it restarted), mode ('write': one holder; "
                    + "'read': readers share it), holders, then one 'held_by:' line per holder in the order they were "
                    + "granted (lease, client_id, fencing_token, ttl_remaining), revision (of the state read: watch "
                    + "from revision + 1 to see every later change), waiters, then one 'waiter:' line per waiter in "
                    + "the order they will be granted, ending in 'mode=read' for a waiter for read mode. In read mode "
                    + "holder, lease, fencing_token, metadata and holder_ttl_remaining are those of the first holder.",
            "A semaphore: limit, available (the permits free), holders, then one 'holder:' line per grant in the "
                    + "order they were made (lease, client_id, permits, fencing_token), revision, waiters, then one "
                    + "'waiter:' line per waiter in the order they will be granted, with the permits it asked for; "
                    + "for a semaphore nobody holds or waits for, idle_since_revision after revision (it keeps its "
                    + "limit until the leader forgets it, after the member's --idle-time).",
            "An election: leader (its client id), lease, fencing_token, value (as text when it is UTF-8 without "
                    + "control characters, else as 0x and hex), value_revision (of the election or the last proclaim), "
                    + "leader_ttl_remaining, revision, candidates, then one 'candidate:' line per candidate in the "
                    + "order they will lead.",
            "A barrier: parties (how many it releases together), revision, waiting, then one 'party:' line per "
                    + "party waiting, in arrival order (lease, client_id, arrived_revision).",
            "A double barrier ('double_barrier: NAME'): parties, entered_revision (at which the generation inside "
                    + "entered; 0 when none is), revision, then the counts inside, leaving (left, waiting for the others), "
                    + "left (not waiting) and entering (waiting to enter, for the next generation when one is inside), "
                    + "then one 'party:' line per lease in that order (lease, client_id, phase, revision: of its "
                    + "generation's entry, its leave or its enter).",
            "A name nobody holds, leads or waits for prints as a free lock, 'held: false' and the revision, and exits 0.",
            "With --path, --inode or --range in place of NAME, the lock scopes: for each scope given, 'scope: SCOPE', "
                    + "revision, holders, then one 'holder:' line per set held that overlaps it, by fencing token (lease, "
                    + "client_id, fencing_token, scopes, and metadata when it has some), waiters, then one 'waiter:' "
                    + "line per set waited for that overlaps it, in queue order (lease, client_id, joined_revision, scopes). A set is shown whole, each part as "
                    + "'KIND VALUE MODE' ('range 42:0-4096 exclusive'), parts separated by ', '.",
            "With --blocked-by, then 'blocked_by:' and the number of leases in the way of the scopes given, taken "
                    + "together as one set, exclusive unless --shared, if asked for now (0: it would be granted at once), "
                    + "then one 'blocker:' line per part in the way (lease, client_id, holding or waiting, the part, and "
                    + "the fencing token of a holder). Nothing is queued."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:success (held or free)", "1:no member answered, or the cluster refused the request",
            "2:usage error"})
final class DescribeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "NAME",
            description = "The lock, semaphore, election, barrier, double barrier or latch (or scope options instead).")
    String name;

    @Mixin
    ScopeOptions scopes;

    @Option(names = "--blocked-by",
            description = "With scope options: also print who would block them, as one set, if asked for now.")
    boolean blockedBy;

    @Option(names = "--shared", description = "With --blocked-by: the set would be held shared (default: exclusive).")
    boolean shared;

    @Mixin
    EndpointsOption endpoints;

    /** Exactly one of NAME and scope options, and --blocked-by and --shared only with scopes; before any call. */
    void validate() {
        if (name == null && scopes.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "Missing NAME, or --path, --inode or --range: say what to describe");
        }
        if (name != null && !scopes.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "Give NAME or scopes (--path, --inode, --range), not both");
        }
        if (name != null && (blockedBy || shared)) {
            throw new ParameterException(spec.commandLine(), (blockedBy ? "--blocked-by" : "--shared")
                    + " applies to scopes (--path, --inode, --range); a lock's description already names its holders and waiters");
        }
        if (shared && !blockedBy) {
            throw new ParameterException(spec.commandLine(), "--shared applies only with --blocked-by");
        }
        if (blockedBy) {
            try {
                ScopePart.checkSet(parts());
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), "Invalid scopes: " + e.getMessage());
            }
        }
    }

    private List<ScopePart> parts() {
        return scopes.scopes().stream().map(scope -> new ScopePart(scope, shared ? ScopeMode.SHARED : ScopeMode.EXCLUSIVE)).toList();
    }

    @Override
    public Integer call() {
        validate();
        if (name == null) {
            return describeScopes();
        }
        try (TenureClient client = endpoints.connect()) {
            LockDescription lock;
            try {
                lock = client.describe(name);
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                        "Invalid value for positional parameter NAME: " + e.getMessage());
            }
            PrintWriter out = spec.commandLine().getOut();
            boolean printed = printLockNamespace(client, lock, out);
            // Barriers have a namespace of their own: a name may be a lock's and a barrier's at once.
            // The handles' parties only matter to awaits and enters; describe reads the barrier's own.
            TenureDoubleBarrier.Description doubleBarrier = client.doubleBarrier(name, 1).describe();
            TenureBarrier.Description barrier = doubleBarrier.exists() ? null : client.barrier(name, 1).describe();
            if (doubleBarrier.exists() || barrier.exists()) {
                if (printed) {
                    out.println();
                }
                if (doubleBarrier.exists()) {
                    print(doubleBarrier, out);
                } else {
                    print(barrier, out);
                }
                printed = true;
            }
            // Latches have a namespace of their own too: a latch is a count, as a counter will be.
            TenureCountDownLatch.Description latch = client.countDownLatch(name).describe();
            if (latch.exists()) {
                if (printed) {
                    out.println();
                }
                print(latch, out);
            } else if (!printed) {
                print(lock, out);
            }
        }
        return TenureCli.EXIT_OK;
    }

    private int describeScopes() {
        PrintWriter out = spec.commandLine().getOut();
        try (TenureClient client = endpoints.connect()) {
            boolean first = true;
            for (Scope scope : scopes.scopes()) {
                if (!first) {
                    out.println();
                }
                first = false;
                print(client.describe(scope), out);
            }
            if (blockedBy) {
                List<ScopeBlocker> blockers = client.blockers(parts());
                out.println();
                print(blockers, out);
            }
        }
        out.flush();
        return TenureCli.EXIT_OK;
    }

    static void print(ScopeDescription scope, PrintWriter out) {
        out.println("scope: " + scope.scope());
        out.println("revision: " + scope.revision());
        out.println("holders: " + scope.holders().size());
        for (ScopeDescription.Holder holder : scope.holders()) {
            out.println("holder: lease=" + holder.leaseId() + " client_id=" + holder.clientId() + " fencing_token=" + holder.fencingToken()
                    + " scopes=" + parts(holder.parts())
                    + (holder.metadata().length == 0 ? "" : " metadata=" + Formats.metadata(holder.metadata())));
        }
        out.println("waiters: " + scope.waiters().size());
        int position = 1;
        for (ScopeDescription.Waiter waiter : scope.waiters()) {
            out.println("waiter: " + position++ + " lease=" + waiter.leaseId() + " client_id=" + waiter.clientId()
                    + " joined_revision=" + waiter.joinedRevision() + " scopes=" + parts(waiter.parts()));
        }
        out.flush();
    }

    static void print(List<ScopeBlocker> blockers, PrintWriter out) {
        out.println("blocked_by: " + blockers.stream().map(ScopeBlocker::leaseId).distinct().count());
        for (ScopeBlocker blocker : blockers) {
            out.println("blocker: lease=" + blocker.leaseId() + " client_id=" + blocker.clientId() + " "
                    + (blocker.holding() ? "holding" : "waiting") + " " + blocker.part()
                    + (blocker.holding() ? " fencing_token=" + blocker.fencingToken() : ""));
        }
        out.flush();
    }

    private static String parts(List<ScopePart> parts) {
        return parts.stream().map(ScopePart::toString).collect(Collectors.joining(", "));
    }

    /** The lock, semaphore or election of that name, if any; false when the name is free in that namespace. */
    private boolean printLockNamespace(TenureClient client, LockDescription lock, PrintWriter out) {
        if (lock.held() || !lock.waiters().isEmpty()) {
            print(lock, out);
            return true;
        }
        // A name is one kind while it exists, so a name free as a lock may be a semaphore or an
        // election. The handle's limit only matters to acquires; describe reads the semaphore's own.
        SemaphoreDescription semaphore = client.semaphore(name, 1).describe();
        if (semaphore.exists()) {
            print(semaphore, out);
            return true;
        }
        // An election without a leader has no candidates either: the first candidate leads.
        ElectionDescription election = client.election(name).describe();
        if (election.leader().isPresent()) {
            print(election, out);
            return true;
        }
        return false;
    }

    static void print(LockDescription lock, PrintWriter out) {
        out.println("lock: " + lock.key());
        out.println("held: " + lock.held());
        if (lock.held()) {
            out.println("holder: " + lock.holder());
            out.println("lease: " + lock.leaseId());
            out.println("fencing_token: " + lock.fencingToken());
            out.println("metadata: " + Formats.metadata(lock.metadata()));
            out.println("held_since_revision: " + lock.heldSinceRevision());
            out.println("grants: " + lock.grants());
            out.println("holder_ttl_remaining: " + remaining(lock.holderTtlRemaining()));
            out.println("mode: " + Formats.mode(lock.mode()));
            out.println("holders: " + lock.holders().size());
            for (LockDescription.Holder holder : lock.holders()) {
                out.println("held_by: lease=" + holder.leaseId() + " client_id=" + holder.clientId() + " fencing_token="
                        + holder.fencingToken() + " ttl_remaining=" + remaining(holder.ttlRemaining()));
            }
        }
        out.println("revision: " + lock.revision());
        out.println("waiters: " + lock.waiters().size());
        int position = 1;
        for (LockDescription.Waiter waiter : lock.waiters()) {
            out.println("waiter: " + position++ + " lease=" + waiter.leaseId() + " client_id=" + waiter.clientId()
                    + " joined_revision=" + waiter.joinedRevision() + (waiter.mode() == LockMode.READ ? " mode=read" : ""));
        }
        out.flush();
    }

    /** A lease's time left, as the serving member sees it; {@code unknown} when it does not know. */
    private static String remaining(Optional<Duration> ttl) {
        return ttl.map(Duration::toMillis).map(Formats::millis).orElse("unknown");
    }

    static void print(SemaphoreDescription semaphore, PrintWriter out) {
        out.println("semaphore: " + semaphore.name());
        out.println("limit: " + semaphore.limit());
        out.println("available: " + semaphore.available());
        out.println("holders: " + semaphore.holders().size());
        for (SemaphoreDescription.Holder holder : semaphore.holders()) {
            out.println("holder: lease=" + holder.leaseId() + " client_id=" + holder.clientId() + " permits=" + holder.permits()
                    + " fencing_token=" + holder.fencingToken());
        }
        out.println("revision: " + semaphore.revision());
        if (semaphore.isIdle()) {
            out.println("idle_since_revision: " + semaphore.idleSinceRevision());
        }
        out.println("waiters: " + semaphore.waiters().size());
        int position = 1;
        for (SemaphoreDescription.Waiter waiter : semaphore.waiters()) {
            out.println("waiter: " + position++ + " lease=" + waiter.leaseId() + " client_id=" + waiter.clientId()
                    + " permits=" + waiter.permits() + " joined_revision=" + waiter.joinedRevision());
        }
        out.flush();
    }

    static void print(TenureBarrier.Description barrier, PrintWriter out) {
        out.println("barrier: " + barrier.name());
        out.println("parties: " + barrier.parties());
        out.println("revision: " + barrier.revision());
        out.println("waiting: " + barrier.waiting().size());
        int position = 1;
        for (TenureBarrier.Party party : barrier.waiting()) {
            out.println("party: " + position++ + " lease=" + party.leaseId() + " client_id=" + party.clientId()
                    + " arrived_revision=" + party.arrivedRevision());
        }
        out.flush();
    }

    static void print(TenureDoubleBarrier.Description barrier, PrintWriter out) {
        out.println("double_barrier: " + barrier.name());
        out.println("parties: " + barrier.parties());
        out.println("entered_revision: " + barrier.enteredRevision());
        out.println("revision: " + barrier.revision());
        out.println("inside: " + barrier.inside().size());
        out.println("leaving: " + barrier.leaving().size());
        out.println("left: " + barrier.left().size());
        out.println("entering: " + barrier.entering().size());
        java.util.Map<String, java.util.List<TenureDoubleBarrier.Party>> phases = new java.util.LinkedHashMap<>();
        phases.put("inside", barrier.inside());
        phases.put("leaving", barrier.leaving());
        phases.put("left", barrier.left());
        phases.put("entering", barrier.entering());
        phases.forEach((phase, parties) -> parties.forEach(party -> out.println("party: lease=" + party.leaseId() + " client_id="
                + party.clientId() + " phase=" + phase + " revision=" + party.revision())));
    }

    static void print(TenureCountDownLatch.Description latch, PrintWriter out) {
        out.println("latch: " + latch.name());
        out.println("count: " + latch.count());
        out.println("initial_count: " + latch.initialCount());
        out.println("set_revision: " + latch.createRevision());
        out.println("revision: " + latch.revision());
        out.println("waiting: " + latch.waiting().size());
        int position = 1;
        for (TenureCountDownLatch.Waiter waiter : latch.waiting()) {
            out.println("waiter: " + position++ + " lease=" + waiter.leaseId() + " client_id=" + waiter.clientId()
                    + " arrived_revision=" + waiter.arrivedRevision());
        }
        out.flush();
    }

    static void print(ElectionDescription election, PrintWriter out) {
        LeaderInfo leader = election.leader().orElseThrow();
        out.println("election: " + election.name());
        out.println("leader: " + leader.clientId());
        out.println("lease: " + leader.leaseId());
        out.println("fencing_token: " + leader.fencingToken());
        out.println("value: " + Formats.metadata(leader.value()));
        out.println("value_revision: " + leader.revision());
        out.println("leader_ttl_remaining: " + remaining(election.leaderTtlRemaining()));
        out.println("revision: " + election.revision());
        out.println("candidates: " + election.candidates().size());
        int position = 1;
        for (ElectionDescription.Candidate candidate : election.candidates()) {
            out.println("candidate: " + position++ + " lease=" + candidate.leaseId() + " client_id=" + candidate.clientId()
                    + " joined_revision=" + candidate.joinedRevision());
        }
        out.flush();
    }
}

package io.tenure.client;

import com.google.protobuf.ByteString;
import io.tenure.proto.v1.CampaignCancelRequest;
import io.tenure.proto.v1.CampaignRequest;
import io.tenure.proto.v1.CampaignResponse;
import io.tenure.proto.v1.ElectionServiceGrpc;
import io.tenure.proto.v1.LeaderRequest;
import io.tenure.proto.v1.LeaderResponse;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A leader election, as {@link TenureClient#election(String)} hands it out (etcd's
 * Campaign/Proclaim/Resign/Leader/Observe, Curator's LeaderLatch). One leader at a time, bound
 * to a lease; candidates lead in the order they stood. The leader carries a value (an address,
 * a shard map) that observers follow, and a fencing token from the log position of its election.
 *
 * <pre>{@code
 * TenureElection election = client.election("scheduler/leader");
 * try (Leadership leading = election.campaign("n1:9000")) {      // waits until elected
 *     runScheduler(leading.fencingToken());                       // stop when leading.lease().lost() completes
 * }                                                               // resigns: the next candidate leads
 *
 * election.observe(leader -> route(leader.map(LeaderInfo::valueAsString)));
 * try (ElectionLatch latch = election.latch("n2:9000", listener)) { ... }
 * }</pre>
 *
 * <p>Campaigns are made for a lease: the one given to {@link TenureClient#election(String, Lease)},
 * or else the client's {@linkplain TenureClient#session() session lease}. A candidacy re-attaches
 * on another member when its member fails, keeping its place. The name is in the namespace of
 * locks and semaphores: a name led as an election cannot be locked, and the reverse.
 *
 * <p>Immutable and thread-safe.
 */
public final class TenureElection {
    /** The most bytes a leader's value may have (the server's limit). */
    public static final int MAX_VALUE_BYTES = 64 * 1024;

    private final TenureClient client;
    private final String name;
    private final Lease lease; // null: the client's session lease

    TenureElection(TenureClient client, String name, Lease lease) {
        this.client = client;
        this.name = name;
        this.lease = lease;
    }

    /** The election's name. */
    public String name() {
        return name;
    }

    /** Stands for leader with {@code value} and waits until elected, or until the lease is lost. */
    public Leadership campaign(byte[] value) {
        checkValue(value);
        return Futures.await(withLease(held -> campaignAsync(held, value, null, FailoverCall.ON_TRANSPORT_THREAD)),
                "election '" + name + "'");
    }

    /** {@link #campaign(byte[])} with UTF-8 text. */
    public Leadership campaign(String value) {
        return campaign(utf8(value));
    }

    /**
     * Stands for leader at most {@code timeout}; zero tries once without waiting.
     *
     * @throws NotElectedException if not elected in time (the candidacy is withdrawn)
     * @throws LeaseLostException  if the lease is lost first
     */
    public Leadership campaign(byte[] value, Duration timeout) {
        checkValue(value);
        checkTimeout(timeout);
        return Futures.await(withLease(held -> campaignAsync(held, value, timeout, FailoverCall.ON_TRANSPORT_THREAD)),
                "election '" + name + "'");
    }

    /** {@link #campaign(byte[], Duration)} with UTF-8 text. */
    public Leadership campaign(String value, Duration timeout) {
        return campaign(utf8(value), timeout);
    }

    /** The asynchronous form of {@link #campaign(byte[])}; cancelling the future withdraws the candidacy. */
    public CompletableFuture<Leadership> campaignAsync(byte[] value) {
        checkValue(value);
        return withLease(held -> campaignAsync(held, value, null, null));
    }

    /** The asynchronous form of {@link #campaign(byte[], Duration)}; cancelling the future withdraws the candidacy. */
    public CompletableFuture<Leadership> campaignAsync(byte[] value, Duration timeout) {
        checkValue(value);
        checkTimeout(timeout);
        return withLease(held -> campaignAsync(held, value, timeout, null));
    }

    /**
     * Stands with {@code value} for as long as it is open, telling {@code listener} when it leads
     * and when it stops (see {@link ElectionLatch}). Close it to resign or withdraw.
     */
    public ElectionLatch latch(byte[] value, LeadershipListener listener) {
        checkValue(value);
        java.util.Objects.requireNonNull(listener, "listener");
        ElectionLatch latch = new ElectionLatch(this, value.clone(), listener);
        latch.start();
        return latch;
    }

    /** {@link #latch(byte[], LeadershipListener)} with UTF-8 text. */
    public ElectionLatch latch(String value, LeadershipListener listener) {
        return latch(utf8(value), listener);
    }

    /** Who leads now (empty when nobody does), read linearizably. */
    public Optional<LeaderInfo> leader() {
        return Futures.await(leaderAsync(), "the leader of election '" + name + "'").leader();
    }

    /** The leader and the revision of the state read (watch from it + 1 to miss nothing), read linearizably. */
    public CompletableFuture<LeaderRead> leaderAsync() {
        return describeAsync().thenApply(described -> new LeaderRead(described.leader(), described.revision()));
    }

    /** The leader, its lease's time left and the candidates in the order they will lead, read linearizably. */
    public ElectionDescription describe() {
        return Futures.await(describeAsync(), "election '" + name + "'");
    }

    /** The asynchronous form of {@link #describe()}. */
    public CompletableFuture<ElectionDescription> describeAsync() {
        return client.call(ElectionServiceGrpc.getLeaderMethod(), LeaderRequest.newBuilder().setName(name).build(), null)
                .thenApply(this::described);
    }

    /** A leader read: the leader (empty when nobody leads) and the revision of the state read. */
    public record LeaderRead(Optional<LeaderInfo> leader, long revision) {}

    /**
     * Follows the leader: {@code observer} gets the leader now, then every change (a new leader,
     * a proclaimed value, nobody leading) in order, without gaps across member failures, until
     * the returned watch is closed.
     */
    public Watch observe(ElectionObserver observer) {
        java.util.Objects.requireNonNull(observer, "observer");
        LeaderRead now = Futures.await(leaderAsync(), "the leader of election '" + name + "'");
        AtomicLong seen = new AtomicLong(now.revision());
        observer.leaderChanged(now.leader());
        return client.watch(name, now.revision() + 1, new WatchListener() {
            @Override
            public void onEvent(WatchEvent event) {
                // The watch delivers each change once, in order, from the revision after the read.
                seen.set(event.revision());
                observer.leaderChanged(event.type() == WatchEvent.Type.DELETE ? Optional.empty()
                        : Optional.of(new LeaderInfo(name, event.leaseId(), event.holder(), event.createRevision(), event.metadata(),
                                event.revision())));
            }

            @Override
            public void onCompacted(long compactRevision) {
                observer.onError(new TenureException("observing election '" + name + "': events from revision " + seen.get()
                        + " on are no longer kept (compacted at " + compactRevision + "); observe again"));
            }

            @Override
            public void onError(TenureException error) {
                observer.onError(error);
            }
        });
    }

    boolean usesSessionLease() {
        return lease == null;
    }

    TenureClient client() {
        return client;
    }

    /** The campaign itself, as a semaphore's acquire: one request id for every attempt; a failed or cancelled wait is withdrawn. */
    private CompletableFuture<Leadership> campaignAsync(Lease held, byte[] value, Duration timeout, Executor answers) {
        if (!held.isValid()) {
            return CompletableFuture.failedFuture(held.lostException());
        }
        CompletableFuture<Void> withdrawing = client.afterWithdrawal(name, held);
        if (withdrawing != null) {
            return Futures.thenCompose(withdrawing, done -> campaignAsync(held, value, timeout, answers),
                    leading -> leading.resignAsync().exceptionally(f -> null));
        }
        long timeoutMs = timeout == null ? -1 : FailoverCall.ceilMillis(timeout);
        long requestId = client.nextAcquireRequest();
        CampaignRequest request = CampaignRequest.newBuilder().setName(name).setLeaseId(held.id()).setValue(ByteString.copyFrom(value))
                .setTimeoutMs(timeoutMs).setRequestId(requestId).build();
        CompletableFuture<CampaignResponse> call = FailoverCall.wait(client.endpoints(), client.clock(), client.scheduler(),
                ElectionServiceGrpc.getCampaignMethod(), request, timeoutMs, (r, remaining) -> r.toBuilder().setTimeoutMs(remaining).build(),
                client.requestTimeout(), () -> held.isValid() ? null : held.lostException(), answers).result();
        Runnable stopWatchingLease = held.keeper().onLoss(loss -> call.cancel(false));
        CompletableFuture<Leadership> result = call.handle((response, failure) -> {
            stopWatchingLease.run();
            if (call.isCancelled() && !held.isValid()) {
                throw held.lostException();
            }
            if (failure != null) {
                RuntimeException cause = Futures.rethrowable(failure);
                if (cause instanceof UnavailableException) {
                    withdraw(held, requestId);
                }
                throw cause;
            }
            if (!response.getElected()) {
                throw new NotElectedException(name, response.getLeader(), response.getCandidates());
            }
            Leadership leading = new Leadership(this, response.getFencingToken(), held);
            if (!held.isValid()) {
                leading.resignAsync().exceptionally(f -> null);
                throw held.lostException();
            }
            return leading;
        });
        result.whenComplete((leading, failure) -> {
            if (result.isCancelled()) {
                call.cancel(false);
                withdraw(held, requestId);
            }
        });
        return result;
    }

    private void withdraw(Lease held, long requestId) {
        CampaignCancelRequest request = CampaignCancelRequest.newBuilder().setName(name).setLeaseId(held.id()).setRequestId(requestId).build();
        client.withdraw(name, held, () -> client.call(ElectionServiceGrpc.getCancelMethod(), request, null)
                .thenCompose(response -> response.getElected()
                        // Elected just before the withdrawal: nobody will lead with it, so resign.
                        ? client.giveBack(new Leadership(this, response.getFencingToken(), held)::resignAsync, held)
                        : CompletableFuture.<Void>completedFuture(null)));
    }

    private ElectionDescription described(LeaderResponse response) {
        if (!response.getHasLeader()) {
            return new ElectionDescription(name, Optional.empty(), Optional.empty(), List.of(), response.getHeader().getRevision());
        }
        LeaderInfo leader = new LeaderInfo(name, response.getLeaseId(), response.getLeader(), response.getFencingToken(),
                response.getValue().toByteArray(), response.getValueRevision());
        Optional<Duration> remaining = response.getLeaderTtlRemainingMs() >= 0
                ? Optional.of(Duration.ofMillis(response.getLeaderTtlRemainingMs())) : Optional.empty();
        return new ElectionDescription(name, Optional.of(leader), remaining, response.getCandidatesList().stream()
                .map(c -> new ElectionDescription.Candidate(c.getLeaseId(), c.getClientId(), c.getJoinedRevision())).toList(),
                response.getHeader().getRevision());
    }

    static void checkValue(byte[] value) {
        java.util.Objects.requireNonNull(value, "value");
        if (value.length > MAX_VALUE_BYTES) {
            throw new IllegalArgumentException("value is " + value.length + " bytes, over the limit of " + MAX_VALUE_BYTES);
        }
    }

    private static byte[] utf8(String value) {
        return java.util.Objects.requireNonNull(value, "value").getBytes(StandardCharsets.UTF_8);
    }

    private static void checkTimeout(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be zero or positive, got " + timeout + " (use campaign(value) to wait without a limit)");
        }
    }

    private <T> CompletableFuture<T> withLease(java.util.function.Function<Lease, CompletableFuture<T>> call) {
        return client.withLease(lease, call, granted -> {
            if (granted instanceof Leadership leading) {
                leading.resignAsync().exceptionally(f -> null);
            }
        });
    }

    @Override
    public String toString() {
        return "TenureElection{name='" + name + "', lease=" + (lease == null ? "session" : String.valueOf(lease.id())) + "}";
    }
}

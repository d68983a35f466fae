package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.tenure.core.scope.ScopeTable;
import io.tenure.proto.v1.ByteRange;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseRevokeRequest;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.Scope;
import io.tenure.proto.v1.ScopeAcquireRequest;
import io.tenure.proto.v1.ScopeAcquireResponse;
import io.tenure.proto.v1.ScopeBlocker;
import io.tenure.proto.v1.ScopeCancelRequest;
import io.tenure.proto.v1.ScopeCancelResponse;
import io.tenure.proto.v1.ScopeDescribeRequest;
import io.tenure.proto.v1.ScopeDescribeResponse;
import io.tenure.proto.v1.ScopeMode;
import io.tenure.proto.v1.ScopePart;
import io.tenure.proto.v1.ScopeReleaseRequest;
import io.tenure.proto.v1.ScopeServiceGrpc;
import io.tenure.proto.v1.TryLockRequest;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.TlsChannelCredentials;
import io.tenure.client.TenureClient;
import io.tenure.proto.v1.PermissionLevel;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Lock scopes through the raw {@code tenure.v1.ScopeService} stubs (each call unary), against one
 * real member: grants and releases, waits granted in turn with higher tokens, shared parts,
 * fairness without head-of-line blocking, tries and timeouts, all-or-nothing sets, deadlocks,
 * bad input refused naming the field, the lease's end, describe, retries and cancels. Each test
 * uses its own inodes and paths, and revokes its leases.
 */
class ScopeApiUnaryTest {
    private static final Duration LIMIT = Duration.ofSeconds(10);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    private static ScopeServiceGrpc.ScopeServiceBlockingStub scopes() {
        return ScopeServiceGrpc.newBlockingStub(tenure.cluster().channel(0));
    }

    private static ScopeServiceGrpc.ScopeServiceFutureStub scopesAsync() {
        return ScopeServiceGrpc.newFutureStub(tenure.cluster().channel(0));
    }

    private static LockServiceGrpc.LockServiceBlockingStub locks() {
        return LockServiceGrpc.newBlockingStub(tenure.cluster().channel(0));
    }

    private static long lease(String client) {
        return locks().leaseGrant(LeaseGrantRequest.newBuilder().setClientId(client).setTtlMs(30_000).build()).getId();
    }

    private static void revoke(long... leases) {
        for (long lease : leases) {
            locks().leaseRevoke(LeaseRevokeRequest.newBuilder().setId(lease).build());
        }
    }

    // ---- parts --------------------------------------------------------------------------------------

    private static ScopePart range(long inode, long start, long end, boolean exclusive) {
        return part(Scope.newBuilder().setRange(ByteRange.newBuilder().setInode(inode).setStart(start).setEnd(end)).build(), exclusive);
    }

    private static ScopePart inode(long inode) {
        return part(Scope.newBuilder().setInode(inode).build(), true);
    }

    private static ScopePart path(String path) {
        return part(Scope.newBuilder().setPath(path).build(), true);
    }

    private static ScopePart part(Scope scope, boolean exclusive) {
        return ScopePart.newBuilder().setScope(scope).setMode(exclusive ? ScopeMode.SCOPE_MODE_EXCLUSIVE : ScopeMode.SCOPE_MODE_SHARED).build();
    }

    private static ScopeAcquireRequest.Builder ask(long lease, long timeoutMs, ScopePart... parts) {
        return ScopeAcquireRequest.newBuilder().setLeaseId(lease).setTimeoutMs(timeoutMs).addAllScopes(List.of(parts));
    }

    private static ScopeAcquireResponse acquire(long lease, long timeoutMs, ScopePart... parts) {
        return scopes().acquire(ask(lease, timeoutMs, parts).build());
    }

    private static ListenableFuture<ScopeAcquireResponse> acquireAsync(ScopeAcquireRequest request) {
        return scopesAsync().acquire(request);
    }

    private static int release(long lease, long token) {
        return scopes().release(ScopeReleaseRequest.newBuilder().setLeaseId(lease).setFencingToken(token).build()).getGranted();
    }

    private static ScopeDescribeResponse describe(ScopePart part) {
        return scopes().describe(ScopeDescribeRequest.newBuilder().setScope(part.getScope()).build());
    }

    private static void awaitWaiters(ScopePart scope, int waiters) {
        Await.until(() -> "waiters of " + scope.getScope() + ": " + describe(scope).getWaitersList(), LIMIT,
                () -> describe(scope).getWaitersCount() == waiters);
    }

    private static StatusRuntimeException refusal(Runnable call) {
        try {
            call.run();
        } catch (StatusRuntimeException e) {
            return e;
        }
        throw new AssertionError("the call was not refused");
    }

    private static ScopeTable table() {
        return tenure.cluster().server(0).member().stateMachine().read(s -> s.primitive(ScopeTable.class));
    }

    private static int heldSets(long lease) {
        return tenure.cluster().server(0).member().stateMachine().read(s -> s.primitive(ScopeTable.class).heldSets(lease).size());
    }

    // ---- tests --------------------------------------------------------------------------------------

    @Test
    void aRangeIsGrantedWithATokenDescribedAndReleased() {
        long a = lease("a");
        ScopePart part = range(42, 0, 4096, true);
        ScopeAcquireResponse granted = acquire(a, 0, part);
        assertThat(granted.getAcquired()).isTrue();
        assertThat(granted.getFencingToken()).isPositive();
        assertThat(granted.getBlockersList()).isEmpty();

        ScopeDescribeResponse held = describe(inode(42));
        assertThat(held.getHoldersList()).hasSize(1);
        assertThat(held.getHolders(0).getLeaseId()).isEqualTo(a);
        assertThat(held.getHolders(0).getClientId()).isEqualTo("a");
        assertThat(held.getHolders(0).getFencingToken()).isEqualTo(granted.getFencingToken());
        assertThat(held.getHolders(0).getScopesList()).containsExactly(part);
        assertThat(held.getHeader().getRevision()).isGreaterThanOrEqualTo(granted.getFencingToken());

        assertThat(release(a, granted.getFencingToken())).isZero();
        assertThat(describe(inode(42)).getHoldersList()).isEmpty();
        assertThat(release(a, granted.getFencingToken())).as("a retried release succeeds again").isZero();
        assertThat(Status.fromThrowable(refusal(() -> release(a, granted.getFencingToken() + 1))).getCode())
                .as("a token the lease never held").isEqualTo(Status.Code.FAILED_PRECONDITION);
        revoke(a);
    }

    @Test
    void aConflictingRangeWaitsAndIsGrantedOnReleaseWithAHigherToken() throws Exception {
        long a = lease("a");
        long b = lease("b");
        ScopeAcquireResponse first = acquire(a, 0, range(43, 0, 100, true));
        ListenableFuture<ScopeAcquireResponse> waiting = acquireAsync(ask(b, -1, range(43, 50, 150, true)).build());
        awaitWaiters(inode(43), 1);
        assertThat(describe(inode(43)).getWaiters(0).getLeaseId()).isEqualTo(b);
        assertThat(waiting.isDone()).isFalse();

        assertThat(release(a, first.getFencingToken())).isEqualTo(1);
        ScopeAcquireResponse second = waiting.get(10, TimeUnit.SECONDS);
        assertThat(second.getAcquired()).isTrue();
        assertThat(second.getFencingToken()).isGreaterThan(first.getFencingToken());
        assertThat(describe(inode(43)).getHolders(0).getLeaseId()).isEqualTo(b);
        revoke(a, b);
    }

    @Test
    void sharedRangesCoexistAndAWriterIsBlockedByEveryReader() {
        long a = lease("a");
        long b = lease("b");
        long c = lease("c");
        ScopeAcquireResponse ra = acquire(a, 0, range(44, 0, 100, false));
        ScopeAcquireResponse rb = acquire(b, 0, range(44, 50, 150, false));
        assertThat(ra.getAcquired()).isTrue();
        assertThat(rb.getAcquired()).as("a shared range beside another").isTrue();
        assertThat(describe(inode(44)).getHoldersList()).extracting(h -> h.getLeaseId()).containsExactly(a, b);

        ScopeAcquireResponse writer = acquire(c, 0, range(44, 60, 70, true));
        assertThat(writer.getAcquired()).isFalse();
        assertThat(writer.getBlockersList()).extracting(ScopeBlocker::getLeaseId).containsExactly(a, b);
        assertThat(writer.getBlockersList()).allMatch(ScopeBlocker::getHolding);
        revoke(a, b, c);
    }

    @Test
    void aWriterOfOtherBytesIsNotBlockedBehindAWaitingWriter() throws Exception {
        long a = lease("a");
        long b = lease("b");
        long c = lease("c");
        ScopeAcquireResponse held = acquire(a, 0, range(45, 0, 100, true));
        ListenableFuture<ScopeAcquireResponse> waiting = acquireAsync(ask(b, -1, range(45, 0, 100, true)).build());
        awaitWaiters(range(45, 0, 100, true), 1);

        ScopeAcquireResponse other = acquire(c, 0, range(45, 200, 300, true));
        assertThat(other.getAcquired()).as("[200,300) does not queue behind the writer waiting for [0,100)").isTrue();
        assertThat(other.getFencingToken()).isGreaterThan(held.getFencingToken());
        assertThat(waiting.isDone()).isFalse();

        release(a, held.getFencingToken());
        assertThat(waiting.get(10, TimeUnit.SECONDS).getAcquired()).isTrue();
        revoke(a, b, c);
    }

    @Test
    void aTryAnswersNotAcquiredWithTheBlockersNamingTheHolder() {
        long a = lease("holder-a");
        long b = lease("b");
        ScopeAcquireResponse held = acquire(a, 0, path("/try/data"));
        ScopeAcquireResponse tried = acquire(b, 0, path("/try/data/file"));
        assertThat(tried.getAcquired()).as("a descendant of a held path").isFalse();
        assertThat(tried.getFencingToken()).isZero();
        assertThat(tried.getBlockersList()).hasSize(1);
        ScopeBlocker blocker = tried.getBlockers(0);
        assertThat(blocker.getLeaseId()).isEqualTo(a);
        assertThat(blocker.getClientId()).isEqualTo("holder-a");
        assertThat(blocker.getHolding()).isTrue();
        assertThat(blocker.getFencingToken()).isEqualTo(held.getFencingToken());
        assertThat(blocker.getPart()).isEqualTo(path("/try/data"));
        assertThat(describe(path("/try")).getWaitersList()).as("a try never queues").isEmpty();
        assertThat(acquire(b, 0, path("/try/other")).getAcquired()).as("a sibling is free").isTrue();
        revoke(a, b);
    }

    @Test
    void aTimeoutAnswersNotAcquiredAndLeavesNothingQueued() {
        long a = lease("a");
        long b = lease("b");
        acquire(a, 0, inode(46));
        ScopeAcquireResponse timedOut = acquire(b, 200, range(46, 0, 10, true));
        assertThat(timedOut.getAcquired()).isFalse();
        assertThat(timedOut.getBlockersList()).extracting(ScopeBlocker::getLeaseId).containsExactly(a);
        assertThat(describe(inode(46)).getWaitersList()).as("the wait was withdrawn through the log").isEmpty();
        assertThat(heldSets(b)).isZero();
        revoke(a, b);
    }

    @Test
    void aSetIsAcquiredAllOrNothing() throws Exception {
        long a = lease("a");
        long b = lease("b");
        long c = lease("c");
        ScopeAcquireResponse held = acquire(a, 0, range(47, 0, 10, true));

        ScopeAcquireResponse tried = acquire(b, 0, range(47, 5, 20, true), path("/all/x"), inode(470));
        assertThat(tried.getAcquired()).isFalse();
        assertThat(describe(path("/all/x")).getHoldersList()).as("no part of a refused set is held").isEmpty();
        assertThat(describe(inode(470)).getHoldersList()).isEmpty();

        ListenableFuture<ScopeAcquireResponse> waiting = acquireAsync(ask(b, -1, range(47, 5, 20, true), path("/all/y")).build());
        awaitWaiters(path("/all/y"), 1);
        ScopeAcquireResponse behind = acquire(c, 0, path("/all/y"));
        assertThat(behind.getAcquired()).as("the waiting set is in every part's way at once").isFalse();
        assertThat(behind.getBlockersList()).singleElement().satisfies(blocker -> {
            assertThat(blocker.getLeaseId()).isEqualTo(b);
            assertThat(blocker.getHolding()).isFalse();
        });

        release(a, held.getFencingToken());
        ScopeAcquireResponse both = waiting.get(10, TimeUnit.SECONDS);
        assertThat(both.getAcquired()).isTrue();
        ScopeDescribeResponse range = describe(inode(47));
        ScopeDescribeResponse path = describe(path("/all/y"));
        assertThat(range.getHolders(0).getFencingToken()).as("one token for the whole set")
                .isEqualTo(path.getHolders(0).getFencingToken()).isEqualTo(both.getFencingToken());
        revoke(a, b, c);
    }

    @Test
    void aWaitThatWouldCloseACycleFailsNamingTheDeadlockAndQueuesNothing() throws Exception {
        long a = lease("a");
        long b = lease("b");
        acquire(a, 0, inode(100));
        acquire(b, 0, inode(200));
        ListenableFuture<ScopeAcquireResponse> aWaits = acquireAsync(ask(a, -1, inode(200)).build());
        awaitWaiters(inode(200), 1);

        StatusRuntimeException deadlock = refusal(() -> acquire(b, -1, inode(100)));
        assertThat(deadlock.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(deadlock.getStatus().getDescription()).contains("deadlock").contains("lease " + a).contains("lease " + b);
        assertThat(describe(inode(100)).getWaitersList()).as("nothing was queued").isEmpty();
        assertThat(aWaits.isDone()).isFalse();

        revoke(b);
        assertThat(aWaits.get(10, TimeUnit.SECONDS).getAcquired()).as("b's end lets a's wait through").isTrue();
        revoke(a);
    }

    @Test
    void badInputIsRefusedNamingTheFieldAndChangesNothing() {
        long a = lease("a");
        int holdsBefore = table().holdCount();
        int waitersBefore = table().waiterCount();
        assertInvalid(ask(a, 0, range(48, 10, 10, true)), "scopes[0].scope.range.end");
        assertInvalid(ask(a, 0, inode(48), range(49, -1, 10, true)), "scopes[1].scope.range.start");
        assertInvalid(ask(a, 0, path("/bad/a\u0000b")), "scopes[0].scope.path");
        assertInvalid(ask(a, 0, path("relative/path")), "scopes[0].scope.path");
        assertInvalid(ask(a, 0, inode(48), inode(48)), "scopes[1]");
        assertInvalid(ask(a, 0, range(48, 0, 100, true), range(48, 50, 150, false)), "scopes[1]");
        assertInvalid(ask(a, 0, path("/bad/dir"), path("/bad/dir/file")), "scopes[1]");
        assertInvalid(ask(a, 0), "scopes");
        assertInvalid(ask(a, 0, part(Scope.newBuilder().setName("jobs/a").build(), true)), "scopes[0]");
        assertInvalid(ask(a, 0, ScopePart.getDefaultInstance()), "scopes[0].scope");
        assertInvalid(ask(a, 0, inode(48)).setTimeoutMs(-2), "timeout_ms");
        assertInvalid(ask(a, 0, inode(48)).setMetadata(ByteString.copyFrom(new byte[64 * 1024 + 1])), "metadata");
        assertThat(refusal(() -> scopes().acquire(ask(a, 0, inode(48)).setScopes(0, inode(48).toBuilder().setModeValue(7)).build()))
                .getStatus().getDescription()).startsWith("scopes[0].mode");

        StatusRuntimeException unknown = refusal(() -> acquire(987_654_321L, 0, inode(48)));
        assertThat(unknown.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
        assertThat(unknown.getStatus().getDescription()).contains("987654321");
        assertThat(Status.fromThrowable(refusal(() -> release(987_654_321L, 5))).getCode()).isEqualTo(Status.Code.NOT_FOUND);
        assertThat(Status.fromThrowable(refusal(() -> release(a, 0))).getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(Status.fromThrowable(refusal(() -> scopes().cancel(ScopeCancelRequest.newBuilder().setLeaseId(a).build()))).getCode())
                .as("a cancel names the acquire").isEqualTo(Status.Code.INVALID_ARGUMENT);

        assertThat(table().holdCount()).isEqualTo(holdsBefore);
        assertThat(table().waiterCount()).isEqualTo(waitersBefore);
        assertThat(heldSets(a)).isZero();
        assertThat(acquire(a, 0, inode(48), path("/bad")).getAcquired()).as("the same parts, asked well").isTrue();
        revoke(a);
    }

    private static void assertInvalid(ScopeAcquireRequest.Builder request, String field) {
        StatusRuntimeException refused = refusal(() -> scopes().acquire(request.build()));
        assertThat(refused.getStatus().getCode()).as(refused.toString()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(refused.getStatus().getDescription()).as("names " + field).startsWith(field);
    }

    @Test
    void theLeasesEndReleasesItsSetAndGrantsTheWaiter() throws Exception {
        long a = lease("a");
        long b = lease("b");
        ScopeAcquireResponse held = acquire(a, 0, inode(300), path("/end"));
        ListenableFuture<ScopeAcquireResponse> waiting = acquireAsync(ask(b, -1, path("/end/x")).build());
        awaitWaiters(path("/end"), 1);

        revoke(a);
        ScopeAcquireResponse granted = waiting.get(10, TimeUnit.SECONDS);
        assertThat(granted.getAcquired()).isTrue();
        assertThat(granted.getFencingToken()).isGreaterThan(held.getFencingToken());
        assertThat(describe(inode(300)).getHoldersList()).as("the whole set went with the lease").isEmpty();
        revoke(b);
    }

    @Test
    void aWaiterWhoseLeaseEndsIsAnsweredNotFound() throws Exception {
        long a = lease("a");
        long b = lease("b");
        acquire(a, 0, inode(301));
        ListenableFuture<ScopeAcquireResponse> waiting = acquireAsync(ask(b, -1, inode(301)).build());
        awaitWaiters(inode(301), 1);
        revoke(b);
        assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(StatusRuntimeException.class)
                .hasMessageContaining("NOT_FOUND");
        assertThat(describe(inode(301)).getWaitersList()).isEmpty();
        revoke(a);
    }

    @Test
    void describeShowsHoldersWaitersBlockersAndNamedLocks() {
        long a = lease("a");
        long b = lease("b");
        ScopeAcquireResponse held = acquire(a, 0, range(400, 0, 100, true));
        scopes().acquire(ask(a, 0, path("/described")).setMetadata(ByteString.copyFromUtf8("job 7")).build());
        ListenableFuture<ScopeAcquireResponse> waiting = acquireAsync(ask(b, -1, range(400, 50, 60, true)).build());
        awaitWaiters(inode(400), 1);

        ScopeDescribeResponse d = scopes().describe(ScopeDescribeRequest.newBuilder().setScope(inode(400).getScope())
                .addBlocked(range(400, 90, 95, false)).build());
        assertThat(d.getHoldersList()).singleElement().satisfies(h -> {
            assertThat(h.getLeaseId()).isEqualTo(a);
            assertThat(h.getFencingToken()).isEqualTo(held.getFencingToken());
            assertThat(h.getScopesList()).containsExactly(range(400, 0, 100, true));
        });
        assertThat(d.getWaitersList()).singleElement().satisfies(w -> {
            assertThat(w.getLeaseId()).isEqualTo(b);
            assertThat(w.getClientId()).isEqualTo("b");
            assertThat(w.getJoinedAt()).isGreaterThan(held.getFencingToken());
            assertThat(w.getScopesList()).containsExactly(range(400, 50, 60, true));
        });
        assertThat(d.getBlockersList()).as("[90,95) shared waits for the holder only").extracting(ScopeBlocker::getLeaseId).containsExactly(a);
        assertThat(describe(path("/described/sub")).getHolders(0).getMetadata().toStringUtf8()).isEqualTo("job 7");
        assertThat(describe(range(400, 100, 200, true)).getHoldersList()).as("bytes nobody holds").isEmpty();

        // Who would block a set, without a scope described.
        ScopeDescribeResponse blockers = scopes().describe(ScopeDescribeRequest.newBuilder().addBlocked(range(400, 55, 56, false)).build());
        assertThat(blockers.getBlockersList()).extracting(ScopeBlocker::getLeaseId).containsExactly(a, b);

        // A named scope describes the lock of that name.
        long token = locks().tryLock(TryLockRequest.newBuilder().setName("scopes/named").setLeaseId(a).build()).getFencingToken();
        ScopeDescribeResponse named = describe(part(Scope.newBuilder().setName("scopes/named").build(), true));
        assertThat(named.getHoldersList()).singleElement().satisfies(h -> {
            assertThat(h.getLeaseId()).isEqualTo(a);
            assertThat(h.getFencingToken()).isEqualTo(token);
            assertThat(h.getScopesList()).containsExactly(part(Scope.newBuilder().setName("scopes/named").build(), true));
        });
        revoke(a, b);
    }

    @Test
    void aRetryWithTheSameRequestIdReturnsTheSameGrant() {
        long a = lease("a");
        ScopeAcquireRequest request = ask(a, 0, range(500, 0, 10, true), path("/retry")).setRequestId(77).build();
        ScopeAcquireResponse first = scopes().acquire(request);
        ScopeAcquireResponse again = scopes().acquire(request);
        assertThat(first.getAcquired()).isTrue();
        assertThat(again.getAcquired()).isTrue();
        assertThat(again.getFencingToken()).isEqualTo(first.getFencingToken());
        assertThat(heldSets(a)).as("held once").isEqualTo(1);

        release(a, first.getFencingToken());
        StatusRuntimeException late = refusal(() -> scopes().acquire(request));
        assertThat(late.getStatus().getCode()).as("a late copy after the release").isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(heldSets(a)).isZero();
        revoke(a);
    }

    @Test
    void aCancelWithdrawsTheWaitAndAnswersTheWaitingCall() throws Exception {
        long a = lease("a");
        long b = lease("b");
        ScopeAcquireResponse held = acquire(a, 0, inode(600));
        ListenableFuture<ScopeAcquireResponse> waiting = acquireAsync(ask(b, -1, inode(600)).setRequestId(5).build());
        awaitWaiters(inode(600), 1);

        ScopeCancelResponse cancelled = scopes().cancel(ScopeCancelRequest.newBuilder().setLeaseId(b).setRequestId(5).build());
        assertThat(cancelled.getAcquired()).isFalse();
        ScopeAcquireResponse answered = waiting.get(10, TimeUnit.SECONDS);
        assertThat(answered.getAcquired()).isFalse();
        assertThat(answered.getBlockersList()).extracting(ScopeBlocker::getLeaseId).containsExactly(a);
        assertThat(describe(inode(600)).getWaitersList()).isEmpty();

        // The grant came first: the cancel answers it, and the set is the lease's to release.
        ScopeAcquireResponse other = scopes().acquire(ask(b, 0, inode(601)).setRequestId(6).build());
        ScopeCancelResponse tooLate = scopes().cancel(ScopeCancelRequest.newBuilder().setLeaseId(b).setRequestId(6).build());
        assertThat(tooLate.getAcquired()).isTrue();
        assertThat(tooLate.getFencingToken()).isEqualTo(other.getFencingToken());
        release(a, held.getFencingToken());
        revoke(a, b);
    }

    /** Permissions on a secured member: one resource name per part ({@code inode/<n>}, the normalized path), as the README says. */
    @Nested
    class WithAuthentication {
        @RegisterExtension
        final TenureExtension secured = TenureExtension.members(1).secured();

        @Test
        void aSetNeedsWriteOnTheResourceOfEveryPart() throws Exception {
            TenureClient root = secured.client();
            root.auth().addUser("files", "files password");
            root.auth().addRole("data-writers");
            root.auth().grantPermission("data-writers", "scope", "/data/", PermissionLevel.WRITE);
            root.auth().grantPermission("data-writers", "scope", "inode/7", PermissionLevel.WRITE);
            root.auth().grantRole("files", "data-writers");
            String token = root.auth().authenticate("files", "files password", Duration.ofMinutes(5));
            ManagedChannel channel = Grpc.newChannelBuilder(secured.cluster().endpoint(0),
                            TlsChannelCredentials.newBuilder().trustManager(secured.cluster().caFile().toFile()).build())
                    .intercept(MemberProcess.bearer(() -> token)).build();
            try {
                LockServiceGrpc.LockServiceBlockingStub leases = LockServiceGrpc.newBlockingStub(channel);
                ScopeServiceGrpc.ScopeServiceBlockingStub files = ScopeServiceGrpc.newBlockingStub(channel);
                long lease = leases.leaseGrant(LeaseGrantRequest.newBuilder().setClientId("files").setTtlMs(30_000).build()).getId();

                ScopeAcquireResponse granted = files.acquire(ask(lease, 0, path("/data/a/../b"), range(7, 0, 10, true)).build());
                assertThat(granted.getAcquired()).isTrue();
                assertThat(files.describe(ScopeDescribeRequest.newBuilder().setScope(path("/data/b/c").getScope()).build())
                        .getHoldersList()).as("write includes read").hasSize(1);

                for (ScopePart outside : List.of(path("/etc/passwd"), path("/data"), inode(8), range(8, 0, 1, false))) {
                    StatusRuntimeException denied = refusal(() -> files.acquire(ask(lease, 0, range(7, 20, 30, true), outside).build()));
                    assertThat(denied.getStatus().getCode()).as(outside.toString()).isEqualTo(Status.Code.PERMISSION_DENIED);
                    assertThat(denied.getStatus().getDescription()).contains("user 'files'").contains("scope");
                }
                assertThat(refusal(() -> files.describe(ScopeDescribeRequest.newBuilder().setScope(inode(9).getScope()).build()))
                        .getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);

                // Another user's lease needs admin on the names.
                long rootLease = LockServiceGrpc.newBlockingStub(secured.cluster().channel(0))
                        .leaseGrant(LeaseGrantRequest.newBuilder().setClientId("root").setTtlMs(30_000).build()).getId();
                assertThat(refusal(() -> files.acquire(ask(rootLease, 0, path("/data/d")).build())).getStatus().getCode())
                        .isEqualTo(Status.Code.PERMISSION_DENIED);

                assertThat(files.release(ScopeReleaseRequest.newBuilder().setLeaseId(lease).setFencingToken(granted.getFencingToken())
                        .build()).getGranted()).isZero();
                assertThat(ScopeServiceGrpc.newBlockingStub(secured.cluster().channel(0)).describe(ScopeDescribeRequest.newBuilder()
                        .setScope(path("/data").getScope()).build()).getHoldersList()).isEmpty();
            } finally {
                channel.shutdownNow();
            }
        }
    }
}

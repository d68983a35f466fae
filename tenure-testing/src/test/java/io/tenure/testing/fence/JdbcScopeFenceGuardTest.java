package io.tenure.testing.fence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import io.tenure.client.Scope;
import io.tenure.client.TenureException;
import io.tenure.client.fence.FenceGuard.Mode;
import io.tenure.client.fence.FenceRefusedException;
import io.tenure.client.fence.JdbcScopeFenceGuard;
import io.tenure.client.fence.LockScopeMismatchException;
import io.tenure.client.fence.ScopeFenceGuard;
import io.tenure.client.fence.ScopedToken;
import io.tenure.client.fence.StaleTokenException;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link JdbcScopeFenceGuard} against a real PostgreSQL ({@link PostgresServer}): each test has
 * tables of its own, and concurrent transactions are real sessions on separate connections.
 */
class JdbcScopeFenceGuardTest {
    private static final Duration AWAIT = Duration.ofSeconds(30);
    private static final long INODE = 42;

    private final List<Connection> connections = new ArrayList<>();
    private final ExecutorService waiters = Executors.newCachedThreadPool();
    private PostgresServer postgres;
    private String prefix;
    private JdbcScopeFenceGuard lenient;
    private JdbcScopeFenceGuard strict;
    private Connection observer;

    @BeforeEach
    void setUp() throws SQLException {
        postgres = PostgresServer.get();
        prefix = "sfence_" + UUID.randomUUID().toString().replace("-", "");
        lenient = JdbcScopeFenceGuard.of(prefix, Mode.AT_LEAST);
        strict = JdbcScopeFenceGuard.of(prefix, Mode.STRICTLY_GREATER);
        observer = open(true);
        lenient.createTables(observer);
    }

    @AfterEach
    void tearDown() throws Exception {
        // Holders were opened before their waiters: closing in order ends the holders' transactions first.
        for (Connection connection : connections) {
            connection.close();
        }
        waiters.shutdownNow();
        assertThat(waiters.awaitTermination(AWAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        if (postgres != null) {
            try (Connection connection = postgres.connect(); Statement drop = connection.createStatement()) {
                drop.execute("SET lock_timeout = '10s'");
                drop.execute("DROP TABLE IF EXISTS " + prefix + "_inode, " + prefix + "_range, " + prefix + "_path");
            }
        }
    }

    @Test
    void anAcceptedRangeIsVisibleToOthersOnlyAfterTheCallerCommits() throws SQLException {
        Connection tx = open(false);

        lenient.check(tx, token(10, range(0, 100)), range(0, 100));

        assertThat(lenient.highestAccepted(tx, range(50, 60))).isEqualTo(10);
        assertThat(lenient.highestAccepted(observer, range(50, 60))).as("not committed by the guard").isZero();
        tx.commit();
        assertThat(ranges()).containsExactly("42:0-100=10");
        assertThat(lenient.highestAccepted(observer, Scope.inode(INODE))).isEqualTo(10);
        assertThat(lenient.highestAccepted(observer, range(100, 200))).isZero();
    }

    /** The timeline of {@link ScopeFenceGuard}'s class comment, each write its own transaction. */
    @Test
    void aStaleWriterIsRefusedWhereANewerTokenWroteAndOnlyThere() throws SQLException {
        Connection tx = open(false);
        ScopedToken a = token(40, range(0, 200));
        ScopedToken b = token(50, range(100, 300));
        lenient.check(tx, a, range(0, 200));
        tx.commit();
        lenient.check(tx, b, range(100, 300));
        tx.commit();

        assertThatThrownBy(() -> lenient.check(tx, a, range(150, 200)))
                .isInstanceOfSatisfying(StaleTokenException.class, stale -> {
                    assertThat(stale.region()).contains(range(150, 200));
                    assertThat(stale.offeredToken()).isEqualTo(40);
                    assertThat(stale.highestAccepted()).isEqualTo(50);
                })
                .hasMessage("region range 42:150-200 refused fencing token 40: a region overlapping it accepted token 50");
        assertThat(lenient.tryAccept(tx, a, range(99, 101))).isFalse();
        assertThat(selectOne(tx)).as("a refusal leaves the transaction usable").isEqualTo(1);
        tx.rollback();
        lenient.check(tx, a, range(0, 100));
        tx.commit();
        assertThatThrownBy(() -> lenient.check(tx, b, range(0, 50))).isInstanceOf(LockScopeMismatchException.class);
        tx.rollback();

        assertThat(ranges()).containsExactly("42:0-100=40", "42:100-300=50");
    }

    @Test
    void theRowsAreTheHighestTokenPerRunOfBytesMergedAndSplitAsWritesLand() throws SQLException {
        Connection tx = open(false);
        ScopedToken ten = token(10, Scope.inode(INODE));
        ScopedToken twenty = token(20, Scope.inode(INODE));
        for (int offset = 0; offset < 100; offset += 10) {
            lenient.check(tx, ten, range(offset, offset + 10));
        }
        tx.commit();
        assertThat(ranges()).as("adjacent writes of one token merge").containsExactly("42:0-100=10");

        lenient.check(tx, twenty, range(20, 30));
        lenient.check(tx, twenty, range(40, 50));
        tx.commit();
        assertThat(ranges()).containsExactly("42:0-20=10", "42:20-30=20", "42:30-40=10", "42:40-50=20", "42:50-100=10");
        lenient.check(tx, twenty, range(30, 40));
        tx.commit();
        assertThat(ranges()).containsExactly("42:0-20=10", "42:20-50=20", "42:50-100=10");

        lenient.check(tx, token(30, Scope.byteRange(7, 0, 5)), Scope.byteRange(7, 0, 5));
        lenient.check(tx, token(30, Scope.inode(INODE)), Scope.inode(INODE));
        tx.commit();
        assertThat(ranges()).as("the whole inode is one row").containsExactly("7:0-5=30", "42:0-" + Long.MAX_VALUE + "=30");
        assertThat(lenient.tryAccept(tx, twenty, range(1L << 50, (1L << 50) + 1))).isFalse();
    }

    @Test
    void aPathIsStaleWhereItselfAnAncestorOrADescendantAcceptedANewerTokenNotASibling() throws SQLException {
        Connection tx = open(false);
        ScopedToken everything10 = token(10, Scope.path("/"));
        lenient.check(tx, token(20, Scope.path("/a/b")), Scope.path("/a/b"));
        tx.commit();

        assertThatThrownBy(() -> lenient.check(tx, everything10, Scope.path("/a"))).as("a descendant is newer")
                .isInstanceOf(StaleTokenException.class).hasMessageContaining("path /a").hasMessageContaining("token 20");
        assertThat(lenient.tryAccept(tx, everything10, Scope.path("/a/b"))).isFalse();
        assertThat(lenient.tryAccept(tx, everything10, Scope.path("/a/b/c/d"))).as("an ancestor is newer").isFalse();
        assertThat(lenient.tryAccept(tx, everything10, Scope.path("/"))).isFalse();
        tx.rollback(); // the refused checks' lock rows (token 0) go too
        assertThat(lenient.tryAccept(tx, everything10, Scope.path("/a/c"))).as("a sibling").isTrue();
        assertThat(lenient.tryAccept(tx, everything10, Scope.path("/a/b0"))).as("a sibling just above the subtree").isTrue();
        assertThat(lenient.tryAccept(tx, everything10, Scope.path("/a/b-"))).as("a sibling just below it").isTrue();
        tx.commit();

        assertThat(paths()).containsExactly("/=0", "/a=0", "/a/b=20", "/a/b-=10", "/a/b0=10", "/a/c=10");
        assertThat(lenient.highestAccepted(observer, Scope.path("/a/b/x"))).isEqualTo(20);
        assertThat(lenient.highestAccepted(observer, Scope.path("/a"))).isEqualTo(20);
        assertThat(lenient.highestAccepted(observer, Scope.path("/b"))).isZero();

        // A subtree is one range of the "C" order, whatever bytes its names begin with.
        lenient.check(tx, token(30, Scope.path("/q")), Scope.path("/q/~tilde"));
        lenient.check(tx, token(31, Scope.path("/r")), Scope.path("/r/\u00e9t\u00e9"));
        tx.commit();
        assertThat(lenient.tryAccept(tx, everything10, Scope.path("/q"))).isFalse();
        assertThat(lenient.tryAccept(tx, everything10, Scope.path("/r"))).isFalse();
        assertThat(lenient.highestAccepted(tx, Scope.path("/"))).isEqualTo(31);
        tx.rollback();
    }

    @Test
    void strictRefusesTheSameTokenWhereItWasAcceptedButNotElsewhere() throws SQLException {
        Connection tx = open(false);
        ScopedToken token = token(7, range(0, 200), Scope.path("/a"));
        strict.check(tx, token, range(0, 100));
        strict.check(tx, token, Scope.path("/a/b"));
        tx.commit();

        assertThatThrownBy(() -> strict.check(tx, token, range(50, 150))).isInstanceOf(StaleTokenException.class)
                .hasMessageContaining("already accepted this token");
        assertThat(strict.tryAccept(tx, token, Scope.path("/a"))).isFalse();
        assertThat(strict.tryAccept(tx, token, range(100, 200))).as("disjoint").isTrue();
        assertThat(strict.tryAccept(tx, token, range(100, 200))).as("not even within the same transaction").isFalse();
        tx.commit();
        assertThat(ranges()).containsExactly("42:0-200=7");
    }

    @Test
    void aRollbackUndoesTheAcceptance() throws SQLException {
        Connection tx = open(false);
        lenient.check(tx, token(10, range(0, 100)), range(0, 100));
        tx.commit();

        lenient.check(tx, token(30, range(0, 100), Scope.path("/p")), range(50, 60));
        lenient.check(tx, token(30, range(0, 100), Scope.path("/p")), Scope.path("/p"));
        tx.rollback();

        assertThat(ranges()).containsExactly("42:0-100=10");
        assertThat(paths()).isEmpty();
        lenient.check(tx, token(20, range(0, 100)), range(50, 60));
        tx.commit();
        assertThat(ranges()).containsExactly("42:0-50=10", "42:50-60=20", "42:60-100=10");
    }

    @Test
    void anOlderTokenThatWaitedForTheInodeIsRefusedOnceTheNewerOverlappingWriteCommits() throws Exception {
        assertThat(race(lenient, token(20, range(0, 100)), range(0, 100), token(10, range(50, 150)), range(50, 150), true))
                .isEqualTo("refused: highest 20");
        assertThat(ranges()).containsExactly("42:0-100=20");
    }

    @Test
    void aNewerTokenThatWaitedIsAcceptedOnceTheOlderCommits() throws Exception {
        commit(token(5, range(0, 200)), range(0, 200));
        assertThat(race(lenient, token(10, range(0, 100)), range(0, 100), token(20, range(50, 150)), range(50, 150), true))
                .isEqualTo("accepted");
        assertThat(ranges()).containsExactly("42:0-50=10", "42:50-150=20", "42:150-200=5");
    }

    @Test
    void aWaiterIsAcceptedWhenTheNewerHolderRollsBack() throws Exception {
        assertThat(race(lenient, token(20, range(0, 100)), range(0, 100), token(10, range(50, 150)), range(50, 150), false))
                .isEqualTo("accepted");
        assertThat(ranges()).containsExactly("42:50-150=10");
    }

    @Test
    void aDisjointRangeOfTheSameInodeWaitsForTheInodeButIsAccepted() throws Exception {
        assertThat(race(lenient, token(20, range(0, 100)), range(0, 100), token(10, range(100, 200)), range(100, 200), true))
                .isEqualTo("accepted");
        assertThat(ranges()).containsExactly("42:0-100=20", "42:100-200=10");
    }

    @Test
    void anOlderPathWriterWaitsForANewerAncestorOrDescendantAndIsRefused() throws Exception {
        commit(token(1, Scope.path("/x/y")), Scope.path("/x/y"));
        assertThat(race(lenient, token(20, Scope.path("/a/b")), Scope.path("/a/b"), token(10, Scope.path("/a")), Scope.path("/a"), true))
                .as("a descendant's, first written meanwhile").isEqualTo("refused: highest 20");
        assertThat(race(lenient, token(40, Scope.path("/x")), Scope.path("/x"), token(35, Scope.path("/x/y")),
                Scope.path("/x/y"), true)).as("a parent's").isEqualTo("refused: highest 40");
        assertThat(race(lenient, token(50, Scope.path("/")), Scope.path("/"), token(45, Scope.path("/a/c")),
                Scope.path("/a/c"), true)).as("the root's").isEqualTo("refused: highest 50");
        assertThat(paths()).containsExactly("/=50", "/a=0", "/a/b=20", "/a/c=0", "/x=40", "/x/y=1");
    }

    @Test
    void writersOfSiblingPathsOrOtherInodesDoNotWaitForEachOther() throws Exception {
        commit(token(1, Scope.path("/d")), Scope.path("/d")); // the common ancestors' rows exist
        Connection holder = open(false);
        Connection other = open(false);
        lenient.check(holder, token(20, Scope.path("/d/x"), Scope.inode(1)), Scope.path("/d/x"));
        lenient.check(holder, token(20, Scope.path("/d/x"), Scope.inode(1)), Scope.inode(1));

        Future<Boolean> sibling = waiters.submit(() -> lenient.tryAccept(other, token(10, Scope.path("/d/y")), Scope.path("/d/y")));
        assertThat(sibling.get(AWAIT.toSeconds(), TimeUnit.SECONDS)).as("while the holder's transaction is open").isTrue();
        Future<Boolean> otherInode = waiters.submit(() -> lenient.tryAccept(other, token(10, Scope.inode(2)), Scope.byteRange(2, 0, 9)));
        assertThat(otherInode.get(AWAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        other.commit();
        holder.commit();
        assertThat(paths()).containsExactly("/=0", "/d=1", "/d/x=20", "/d/y=10");
        assertThat(ranges()).containsExactly("1:0-" + Long.MAX_VALUE + "=20", "2:0-9=10");
    }

    @Test
    void aWriteOutsideTheTokensScopesIsRefusedBeforeAnyStatement() throws SQLException {
        Connection tx = open(false);
        JdbcScopeFenceGuard noTables = JdbcScopeFenceGuard.of(prefix + "_missing", Mode.AT_LEAST);
        ScopedToken token = token(9, range(100, 200), Scope.path("/data/a"));

        for (Scope outside : List.of(range(150, 250), Scope.byteRange(43, 100, 200), Scope.inode(INODE), Scope.path("/data/b"))) {
            assertThatThrownBy(() -> noTables.check(tx, token, outside)).as(outside.toString())
                    .isInstanceOf(LockScopeMismatchException.class).isInstanceOf(FenceRefusedException.class)
                    .hasMessageContaining(outside.toString()).hasMessageContaining("fencing token 9");
            assertThatThrownBy(() -> lenient.tryAccept(tx, token, outside)).isInstanceOf(LockScopeMismatchException.class);
        }
        assertThat(selectOne(tx)).as("no statement failed: the transaction is usable").isEqualTo(1);
        tx.commit();
        assertThat(ranges()).isEmpty();
        assertThat(paths()).isEmpty();
    }

    @Test
    void autoCommitAndRepeatableReadAreRefusedSerializableIsNot() throws SQLException {
        Connection autoCommit = open(true);
        assertThatThrownBy(() -> lenient.check(autoCommit, token(1, range(0, 10)), range(0, 10)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("auto-commit");

        Connection repeatable = open(false);
        repeatable.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        assertThatThrownBy(() -> lenient.check(repeatable, token(1, range(0, 10)), range(0, 10)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("REPEATABLE READ");
        repeatable.rollback();

        Connection serializable = open(false);
        serializable.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
        lenient.check(serializable, token(1, range(0, 10), Scope.path("/s")), range(0, 10));
        lenient.check(serializable, token(1, range(0, 10), Scope.path("/s")), Scope.path("/s"));
        serializable.commit();
        assertThat(ranges()).containsExactly("42:0-10=1");
        assertThat(paths()).containsExactly("/=0", "/s=1");
    }

    @Test
    void badArgumentsAreRefusedBeforeAnyStatementIsSent() throws SQLException {
        Connection tx = open(false);
        JdbcScopeFenceGuard noTables = JdbcScopeFenceGuard.of(prefix + "_missing", Mode.AT_LEAST);
        ScopedToken token = token(5, range(0, 100), Scope.named("invoices"));

        assertThatThrownBy(() -> noTables.check(tx, token, null)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("region");
        assertThatThrownBy(() -> noTables.tryAccept(tx, null, range(0, 10))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("token");
        assertThatThrownBy(() -> noTables.check(tx, token, Scope.named("invoices"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("region").hasMessageContaining("FenceGuard");
        assertThatThrownBy(() -> noTables.check(null, token, range(0, 10))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tx");
        assertThatThrownBy(() -> noTables.check(tx, token(0, range(0, 10)), range(0, 10))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("token");
        assertThatThrownBy(() -> noTables.highestAccepted(tx, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("region");
        assertThatThrownBy(() -> noTables.createTables(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("connection");
        assertThatThrownBy(() -> noTables.within(null)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tx");

        assertThat(selectOne(tx)).as("the transaction was not aborted by a failed statement").isEqualTo(1);
        tx.commit();
        assertThat(ranges()).isEmpty();
        assertThat(paths()).isEmpty();
    }

    @Test
    void aTablePrefixMustBeAPlainIdentifierShortEnoughForItsSuffixes() {
        for (String bad : Arrays.asList(null, "", "1fence", "fence; DROP TABLE invoices", "public.fence", "\"fence\"",
                "fence-table", "f".repeat(58))) {
            assertThatThrownBy(() -> JdbcScopeFenceGuard.of(bad, Mode.AT_LEAST)).as(String.valueOf(bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("table prefix");
        }
        assertThat(JdbcScopeFenceGuard.of("f".repeat(57), Mode.STRICTLY_GREATER).mode()).isEqualTo(Mode.STRICTLY_GREATER);
        assertThat(JdbcScopeFenceGuard.lenient().tablePrefix()).isEqualTo(JdbcScopeFenceGuard.DEFAULT_TABLE_PREFIX)
                .isEqualTo("tenure_scope_fence");
        assertThat(JdbcScopeFenceGuard.strict().mode()).isEqualTo(Mode.STRICTLY_GREATER);
    }

    @Test
    void withinATransactionItIsAScopeFenceGuard() throws SQLException {
        Connection tx = open(false);
        ScopeFenceGuard guard = lenient.within(tx);

        guard.check(token(20, range(0, 100)), range(0, 100));
        assertThat(guard.tryAccept(token(20, range(0, 100)), range(10, 20))).isTrue();
        assertThat(guard.tryAccept(token(19, range(0, 100)), range(10, 20))).isFalse();
        assertThat(guard.highestAccepted(range(0, 1))).isEqualTo(20);
        tx.commit();
        assertThat(ranges()).containsExactly("42:0-100=20");

        ScopeFenceGuard missing = JdbcScopeFenceGuard.of(prefix + "_missing", Mode.AT_LEAST).within(tx);
        assertThatThrownBy(() -> missing.check(token(30, range(0, 100)), range(0, 100)))
                .isInstanceOf(TenureException.class).isNotInstanceOf(FenceRefusedException.class)
                .hasMessageContaining(prefix + "_missing").hasCauseInstanceOf(SQLException.class);
        tx.rollback();
    }

    /**
     * Seeded sequences of range and inode writes, each in its own transaction (now and then rolled
     * back), against a reference that keeps every committed write and decides pairwise; after each
     * sequence the range table must hold exactly the reference's runs of bytes with their highest token.
     */
    @Test
    void agreesWithThePairwiseReferenceOverSeededSequences() throws SQLException {
        Connection tx = open(false);
        for (long seed = 1; seed <= 50; seed++) {
            Random random = new Random(seed);
            Mode mode = seed % 2 == 0 ? Mode.AT_LEAST : Mode.STRICTLY_GREATER;
            JdbcScopeFenceGuard guard = JdbcScopeFenceGuard.of(prefix, mode);
            try (Statement clear = observer.createStatement()) {
                clear.execute("DELETE FROM " + prefix + "_range");
            }
            List<Object[]> committed = new ArrayList<>(); // {region, token}
            long granted = 0;
            long last = 0;
            for (int step = 0; step < 40; step++) {
                // a new grant, the last writer writing again (next to what it wrote, often), or an older one
                int pick = random.nextInt(3);
                long token = granted == 0 || pick == 0 ? ++granted : pick == 1 && last > 0 ? last : 1 + random.nextInt((int) granted);
                long inode = random.nextInt(2);
                Scope region;
                if (random.nextInt(15) == 0) {
                    region = Scope.inode(inode);
                } else {
                    long start = random.nextInt(16);
                    region = Scope.byteRange(inode, start, start + 1 + random.nextInt(8));
                }
                long highest = 0;
                for (Object[] write : committed) {
                    if (((Scope) write[0]).overlaps(region)) {
                        highest = Math.max(highest, (Long) write[1]);
                    }
                }
                boolean admitted = mode == Mode.AT_LEAST ? token >= highest : token > highest;
                String where = "seed " + seed + " step " + step + ": token " + token + " writes " + region;
                boolean accepted = guard.tryAccept(tx, ScopedToken.of(token, Scope.inode(inode)), region);
                assertThat(accepted).as(where + ", highest overlapping " + highest).isEqualTo(admitted);
                if (accepted && random.nextInt(5) > 0) {
                    tx.commit();
                    committed.add(new Object[] {region, token});
                    last = token;
                } else {
                    tx.rollback();
                }
            }
            assertThat(ranges()).as("seed " + seed).containsExactlyInAnyOrderElementsOf(expectedRuns(committed));
        }
    }

    /** The runs of bytes of equal highest token: elementary intervals between all boundaries, merged. */
    private static List<String> expectedRuns(List<Object[]> writes) {
        List<String> runs = new ArrayList<>();
        for (long inode = 0; inode < 2; inode++) {
            TreeSet<Long> points = new TreeSet<>(List.of(0L, Long.MAX_VALUE));
            for (Object[] write : writes) {
                if (write[0] instanceof Scope.ByteRange r && r.inode() == inode) {
                    points.add(r.start());
                    points.add(r.end());
                }
            }
            long runStart = 0;
            long runToken = 0;
            Long from = points.first();
            for (Long to : points.tailSet(from, false)) {
                long highest = 0;
                for (Object[] write : writes) {
                    if (((Scope) write[0]).overlaps(Scope.byteRange(inode, from, to))) {
                        highest = Math.max(highest, (Long) write[1]);
                    }
                }
                if (highest != runToken) {
                    if (runToken != 0) {
                        runs.add(inode + ":" + runStart + "-" + from + "=" + runToken);
                    }
                    runStart = from;
                    runToken = highest;
                }
                from = to;
            }
            if (runToken != 0) {
                runs.add(inode + ":" + runStart + "-" + from + "=" + runToken);
            }
        }
        return runs;
    }

    /**
     * The holder checks first and keeps its transaction open; the waiter's check runs on another
     * thread and must block on the holder's backend ({@code pg_blocking_pids}). The holder then
     * commits or rolls back, and the waiter's outcome is returned; the waiter commits what it got.
     */
    private String race(JdbcScopeFenceGuard guard, ScopedToken holderToken, Scope holderRegion, ScopedToken waiterToken,
            Scope waiterRegion, boolean holderCommits) throws Exception {
        Connection holder = open(false);
        Connection waiter = open(false);
        int holderPid = backendPid(holder);
        int waiterPid = backendPid(waiter);

        guard.check(holder, holderToken, holderRegion);
        Future<Boolean> waiting = waiters.submit(() -> guard.tryAccept(waiter, waiterToken, waiterRegion));
        awaitBlocked(waiterPid, holderPid);
        assertThat(waiting).as("waits for the holder's transaction").isNotDone();
        if (holderCommits) {
            holder.commit();
        } else {
            holder.rollback();
        }

        boolean accepted;
        try {
            accepted = waiting.get(AWAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError("the waiting check failed", e.getCause());
        }
        String outcome = accepted ? "accepted" : "refused: highest " + guard.highestAccepted(waiter, waiterRegion);
        assertThat(selectOne(waiter)).as("the waiter's transaction is usable").isEqualTo(1);
        waiter.commit();
        return outcome;
    }

    /** Polls PostgreSQL until backend {@code waiter} is blocked by backend {@code holder}. */
    private void awaitBlocked(int waiter, int holder) throws SQLException {
        long deadline = System.nanoTime() + AWAIT.toNanos();
        try (PreparedStatement blockers = observer.prepareStatement("SELECT pg_blocking_pids(?)")) {
            blockers.setInt(1, waiter);
            while (true) {
                try (ResultSet row = blockers.executeQuery()) {
                    row.next();
                    Array pids = row.getArray(1);
                    if (Arrays.asList((Integer[]) pids.getArray()).contains(holder)) {
                        return;
                    }
                }
                if (System.nanoTime() - deadline > 0) {
                    fail("backend " + waiter + " was not blocked by backend " + holder + " within " + AWAIT);
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
        }
    }

    private void commit(ScopedToken token, Scope region) throws SQLException {
        try (Connection tx = postgres.transaction()) {
            lenient.check(tx, token, region);
            tx.commit();
        }
    }

    /** The committed range rows, as {@code inode:start-end=token}, in order. */
    private List<String> ranges() throws SQLException {
        return rows("SELECT inode || ':' || start_byte || '-' || end_byte || '=' || token FROM " + prefix
                + "_range ORDER BY inode, start_byte");
    }

    /** The committed path rows, as {@code path=token}, in "C" order. */
    private List<String> paths() throws SQLException {
        return rows("SELECT path || '=' || token FROM " + prefix + "_path ORDER BY path");
    }

    private List<String> rows(String sql) throws SQLException {
        List<String> rows = new ArrayList<>();
        try (Statement select = observer.createStatement(); ResultSet row = select.executeQuery(sql)) {
            while (row.next()) {
                rows.add(row.getString(1));
            }
        }
        return rows;
    }

    private Connection open(boolean autoCommit) throws SQLException {
        Connection connection = postgres.connect();
        connections.add(connection);
        connection.setAutoCommit(autoCommit);
        return connection;
    }

    private static ScopedToken token(long token, Scope... scopes) {
        return ScopedToken.of(token, scopes);
    }

    private static Scope range(long start, long end) {
        return Scope.byteRange(INODE, start, end);
    }

    private static int backendPid(Connection connection) throws SQLException {
        try (Statement select = connection.createStatement(); ResultSet row = select.executeQuery("SELECT pg_backend_pid()")) {
            row.next();
            return row.getInt(1);
        }
    }

    private static int selectOne(Connection connection) throws SQLException {
        try (Statement select = connection.createStatement(); ResultSet row = select.executeQuery("SELECT 1")) {
            row.next();
            return row.getInt(1);
        }
    }
}

package io.tenure.testing.fence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import io.tenure.client.TenureException;
import io.tenure.client.fence.FenceGuard;
import io.tenure.client.fence.FenceGuard.Mode;
import io.tenure.client.fence.JdbcFenceGuard;
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
 * {@link JdbcFenceGuard} against a real PostgreSQL ({@link PostgresServer}): each test has a fence
 * table of its own, and concurrent transactions are real sessions on separate connections.
 */
class JdbcFenceGuardTest {
    private static final Duration AWAIT = Duration.ofSeconds(30);
    private static final String INVOICES = "invoices";

    private final List<Connection> connections = new ArrayList<>();
    private final ExecutorService waiters = Executors.newCachedThreadPool();
    private PostgresServer postgres;
    private String table;
    private JdbcFenceGuard lenient;
    private JdbcFenceGuard strict;
    private Connection observer;

    @BeforeEach
    void setUp() throws SQLException {
        postgres = PostgresServer.get();
        table = "fence_" + UUID.randomUUID().toString().replace("-", "");
        lenient = JdbcFenceGuard.of(table, Mode.AT_LEAST);
        strict = JdbcFenceGuard.of(table, Mode.STRICTLY_GREATER);
        observer = open(true);
        lenient.createTable(observer);
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
                drop.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }

    @Test
    void theFirstCheckCreatesTheRowWhichOthersSeeOnlyAfterTheCallerCommits() throws SQLException {
        Connection tx = open(false);

        lenient.check(tx, INVOICES, 458752);

        assertThat(lenient.highestAccepted(tx, INVOICES)).isEqualTo(458752);
        assertThat(lenient.highestAccepted(observer, INVOICES)).as("not committed by the guard").isZero();
        assertThat(tx.getAutoCommit()).isFalse();
        tx.commit();
        assertThat(rows()).containsExactly(INVOICES + "=458752");
    }

    @Test
    void lenientAcceptsIncreasingAndEqualTokensAndRefusesALowerOne() throws SQLException {
        Connection tx = open(false);
        lenient.check(tx, INVOICES, 10);
        tx.commit();
        lenient.check(tx, INVOICES, 20);
        tx.commit();
        lenient.check(tx, INVOICES, 20);
        assertThat(lenient.tryAccept(tx, INVOICES, 20)).isTrue();
        tx.commit();

        assertThatThrownBy(() -> lenient.check(tx, INVOICES, 15))
                .isInstanceOfSatisfying(StaleTokenException.class, stale -> {
                    assertThat(stale.resource()).isEqualTo(INVOICES);
                    assertThat(stale.offeredToken()).isEqualTo(15);
                    assertThat(stale.highestAccepted()).isEqualTo(20);
                })
                .hasMessage("resource 'invoices' refused fencing token 15: the highest accepted token is 20");
        assertThat(lenient.tryAccept(tx, INVOICES, 1)).isFalse();
        assertThat(selectOne(tx)).as("a refusal leaves the transaction usable").isEqualTo(1);
        tx.rollback();
        assertThat(rows()).containsExactly(INVOICES + "=20");
    }

    @Test
    void strictRefusesTheSameTokenAgain() throws SQLException {
        Connection tx = open(false);
        strict.check(tx, INVOICES, 10);
        tx.commit();

        assertThatThrownBy(() -> strict.check(tx, INVOICES, 10))
                .isInstanceOf(StaleTokenException.class)
                .hasMessageContaining("'invoices'").hasMessageContaining("10").hasMessageContaining("only once");
        assertThat(strict.tryAccept(tx, INVOICES, 10)).isFalse();
        assertThatThrownBy(() -> strict.check(tx, INVOICES, 9)).isInstanceOf(StaleTokenException.class)
                .hasMessageContaining("token 9").hasMessageContaining("is 10");
        strict.check(tx, INVOICES, 11);
        assertThat(strict.tryAccept(tx, INVOICES, 11)).as("not even within the same transaction").isFalse();
        tx.commit();
        assertThat(rows()).containsExactly(INVOICES + "=11");
    }

    @Test
    void resourcesAreFencedIndependently() throws SQLException {
        Connection tx = open(false);
        lenient.check(tx, "invoices", 100);
        lenient.check(tx, "payroll", 5);
        tx.commit();

        assertThatThrownBy(() -> lenient.check(tx, "payroll", 4)).isInstanceOf(StaleTokenException.class);
        lenient.check(tx, "invoices", 100);
        tx.commit();
        assertThat(rows()).containsExactly("invoices=100", "payroll=5");
        assertThat(lenient.highestAccepted(observer, "reports")).isZero();
    }

    @Test
    void aRollbackUndoesTheAcceptance() throws SQLException {
        Connection tx = open(false);
        lenient.check(tx, INVOICES, 10);
        tx.commit();

        lenient.check(tx, INVOICES, 30);
        lenient.check(tx, "payroll", 7);
        tx.rollback();

        assertThat(rows()).containsExactly(INVOICES + "=10");
        lenient.check(tx, INVOICES, 20);
        tx.commit();
        assertThat(rows()).containsExactly(INVOICES + "=20");
    }

    @Test
    void aLowerTokenThatWaitedForTheRowLockIsRefusedOnceTheHigherCommits() throws Exception {
        commit(INVOICES, 5);
        assertThat(race(lenient, INVOICES, 200, 100, true)).isEqualTo("refused: highest 200");
        assertThat(rows()).containsExactly(INVOICES + "=200");
    }

    @Test
    void aHigherTokenThatWaitedForTheRowLockIsAcceptedOnceTheLowerCommits() throws Exception {
        commit(INVOICES, 5);
        assertThat(race(lenient, INVOICES, 100, 200, true)).isEqualTo("accepted");
        assertThat(rows()).containsExactly(INVOICES + "=200");
    }

    @Test
    void aWaiterSeesTheTokenBeforeAHolderThatRolledBack() throws Exception {
        commit(INVOICES, 5);
        assertThat(race(lenient, INVOICES, 200, 100, false)).isEqualTo("accepted");
        assertThat(rows()).containsExactly(INVOICES + "=100");
    }

    @Test
    void twoFirstWritesRaceWithoutAbortingTheLoser() throws Exception {
        // No row yet: the waiter's INSERT ... ON CONFLICT waits for the holder's uncommitted insert.
        assertThat(race(lenient, "payroll", 50, 70, true)).isEqualTo("accepted");
        assertThat(race(lenient, INVOICES, 50, 30, true)).isEqualTo("refused: highest 50");
        assertThat(race(strict, "reports", 50, 50, true)).isEqualTo("refused: highest 50");
        assertThat(rows()).containsExactly(INVOICES + "=50", "payroll=70", "reports=50");
    }

    @Test
    void anAutoCommitConnectionIsRefusedBecauseTheTokenWouldCommitAlone() throws SQLException {
        Connection autoCommit = open(true);

        assertThatThrownBy(() -> lenient.check(autoCommit, INVOICES, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("auto-commit");
        assertThatThrownBy(() -> lenient.tryAccept(autoCommit, INVOICES, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(rows()).isEmpty();
    }

    @Test
    void badArgumentsAreRefusedBeforeAnyStatementIsSent() throws SQLException {
        Connection tx = open(false);

        assertThatThrownBy(() -> lenient.check(null, INVOICES, 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tx");
        assertThatThrownBy(() -> lenient.check(tx, null, 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("resource");
        assertThatThrownBy(() -> lenient.check(tx, " ", 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("resource");
        assertThatThrownBy(() -> lenient.check(tx, INVOICES, 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("token");
        assertThatThrownBy(() -> lenient.tryAccept(tx, INVOICES, -1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("token");
        assertThatThrownBy(() -> lenient.check(tx, "x".repeat(1025), 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1024").hasMessageContaining("1025");
        assertThatThrownBy(() -> lenient.check(tx, "in\0voices", 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NUL");
        assertThatThrownBy(() -> lenient.highestAccepted(tx, "")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("resource");
        assertThatThrownBy(() -> lenient.createTable(null)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("connection");
        assertThatThrownBy(() -> lenient.within(null)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tx");

        assertThat(selectOne(tx)).as("the transaction was not aborted by a failed statement").isEqualTo(1);
        String longest = "\u00e9".repeat(JdbcFenceGuard.MAX_RESOURCE_LENGTH);
        lenient.check(tx, longest, 1);
        tx.commit();
        assertThat(rows()).containsExactly(longest + "=1");
    }

    @Test
    void aTableNameMustBeAPlainIdentifier() {
        for (String bad : Arrays.asList(null, "", "1fence", "fence; DROP TABLE invoices", "public.fence", "\"fence\"",
                "fence-table", "f".repeat(64))) {
            assertThatThrownBy(() -> JdbcFenceGuard.of(bad, Mode.AT_LEAST)).as(String.valueOf(bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("table");
        }
        assertThat(JdbcFenceGuard.of("_Fence_2", Mode.AT_LEAST).table()).isEqualTo("_Fence_2");
        assertThat(JdbcFenceGuard.of("f".repeat(63), Mode.STRICTLY_GREATER).mode()).isEqualTo(Mode.STRICTLY_GREATER);
        assertThat(JdbcFenceGuard.lenient().table()).isEqualTo(JdbcFenceGuard.DEFAULT_TABLE).isEqualTo("tenure_fence");
        assertThat(JdbcFenceGuard.strict().mode()).isEqualTo(Mode.STRICTLY_GREATER);
    }

    @Test
    void withinATransactionItIsAFenceGuard() throws SQLException {
        Connection tx = open(false);
        FenceGuard guard = lenient.within(tx);

        guard.check(INVOICES, 20);
        assertThat(guard.tryAccept(INVOICES, 20)).isTrue();
        assertThat(guard.tryAccept(INVOICES, 19)).isFalse();
        assertThatThrownBy(() -> guard.check(INVOICES, 19)).isInstanceOf(StaleTokenException.class);
        assertThat(guard.highestAccepted(INVOICES)).isEqualTo(20);
        tx.commit();
        assertThat(rows()).containsExactly(INVOICES + "=20");

        FenceGuard missingTable = JdbcFenceGuard.of(table + "_missing", Mode.AT_LEAST).within(tx);
        assertThatThrownBy(() -> missingTable.check(INVOICES, 30))
                .isInstanceOf(TenureException.class).isNotInstanceOf(StaleTokenException.class)
                .hasMessageContaining(table + "_missing").hasCauseInstanceOf(SQLException.class);
        tx.rollback();
    }

    /**
     * Two transactions offer {@code holderToken} and {@code waiterToken} for one resource. The
     * holder's check runs first and keeps the fence row (or its uncommitted first insert) locked;
     * the waiter's check runs on another thread and must block on the holder's backend, which this
     * confirms from {@code pg_blocking_pids}. The holder then commits or rolls back, and the
     * waiter's outcome is returned; the waiter commits what it was granted.
     */
    private String race(JdbcFenceGuard guard, String resource, long holderToken, long waiterToken, boolean holderCommits)
            throws Exception {
        Connection holder = open(false);
        Connection waiter = open(false);
        int holderPid = backendPid(holder);
        int waiterPid = backendPid(waiter);

        guard.check(holder, resource, holderToken);
        Future<Boolean> waiting = waiters.submit(() -> guard.tryAccept(waiter, resource, waiterToken));
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
        String outcome = accepted ? "accepted" : "refused: highest " + guard.highestAccepted(waiter, resource);
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

    private void commit(String resource, long token) throws SQLException {
        try (Connection tx = postgres.transaction()) {
            lenient.check(tx, resource, token);
            tx.commit();
        }
    }

    /** The committed fence rows, as {@code resource=token}, in resource order. */
    private List<String> rows() throws SQLException {
        List<String> rows = new ArrayList<>();
        try (Statement select = observer.createStatement();
             ResultSet row = select.executeQuery("SELECT resource, last_token FROM " + table + " ORDER BY resource")) {
            while (row.next()) {
                rows.add(row.getString(1) + "=" + row.getLong(2));
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
